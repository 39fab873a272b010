package qr

import "testing"

func TestCRC16(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want string
	}{
		// The check value of CRC-16/CCITT-FALSE in the CRC catalogues.
		{"catalogue check value", "123456789", "29B1"},
		{"empty input is the initial value", "", "FFFF"},
		// Published payloads without their last four characters, the CRC.
		{"EMVCo example", emvcoExample[:len(emvcoExample)-4], "A13A"},
		{"PromptPay mobile", promptPayMobileExample[:len(promptPayMobileExample)-4], "6197"},
		{"VietQR", vietQRExample[:len(vietQRExample)-4], "C15C"},
		{"KHQR", khqrExample[:len(khqrExample)-4], "AE27"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CRC16(tt.data); got != tt.want {
				t.Errorf("CRC16(%q) = %s, want %s", tt.data, got, tt.want)
			}
		})
	}
}
