package qr

// crcPolynomial is the CCITT generator polynomial x^16 + x^12 + x^5 + 1.
const crcPolynomial = 0x1021

// CRC16 returns the checksum that EMVCo MPM carries in the CRC field (ID 63):
// CRC-16/CCITT-FALSE, that is polynomial 0x1021, initial value 0xFFFF, most
// significant bit first, no final XOR, computed over the UTF-8 bytes of data
// and written as four upper-case hex digits. The specification computes it
// over the whole payload up to and including the CRC field's own ID and
// length, "6304", so callers pass that prefix.
func CRC16(data string) string {
	crc := uint16(0xFFFF)
	for i := 0; i < len(data); i++ {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^data[i]]
	}
	const hexDigits = "0123456789ABCDEF"
	return string([]byte{
		hexDigits[crc>>12],
		hexDigits[crc>>8&0xF],
		hexDigits[crc>>4&0xF],
		hexDigits[crc&0xF],
	})
}

// crcTable holds the checksum's eight shifts of each byte, so CRC16 takes a
// byte at a time (it is computed for every QR payin created).
var crcTable = func() (t [256]uint16) {
	for b := range t {
		crc := uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ crcPolynomial
			} else {
				crc <<= 1
			}
		}
		t[b] = crc
	}
	return t
}()
