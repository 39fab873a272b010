package qr

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Payloads published by others, each of whose CRC verifies with CRC16. The
// sample PromptPay payload "…011300668123456785802TH530376463046B0D" that
// circulates with the EMVCo example does not verify (its CRC would be 5D82),
// so it is not used; dtinth/promptpay-qr's test vectors are used instead.
const (
	// emvcoExample is the example payload of EMV QRCPS Merchant-Presented
	// Mode v1.1 (BEST TRANSPORT, Beijing), as widely reproduced. Its
	// alternate-language template (64) carries UTF-8 text, and its CRC is
	// computed over UTF-8 bytes.
	emvcoExample = "00020101021229300012D156000000000510A93FO3230Q31280012D15600000001030812345678520441115802CN5914BEST TRANSPORT6007BEIJING64200002ZH0104最佳运输0202北京540523.7253031565502016233030412340603***0708A60086670902ME91320016A0112233449988770708123456786304A13A"
	// promptPayMobileExample, promptPayNationalIDExample and
	// promptPayAmountExample are test vectors of
	// github.com/dtinth/promptpay-qr (index.test.js): mobile 080-123-4567,
	// national ID 1111111111111, and mobile 000-000-0000 with 4.22 baht.
	promptPayMobileExample     = "00020101021129370016A000000677010111011300668012345675802TH530376463046197"
	promptPayNationalIDExample = "00020101021129370016A000000677010111021311111111111115802TH530376463047B5A"
	promptPayAmountExample     = "00020101021229370016A000000677010111011300660000000005802TH530376454044.226304E469"
	// vietQRExample is the example of github.com/subiz/vietqr (README.md):
	// 120,000 dong to account 0011001932418 at BIN 970415 (VietinBank).
	vietQRExample = "00020101021238570010A00000072701270006970415011300110019324180208QRIBFTTA530370454061200005802VN62170813ung ho lu lut6304C15C"
	// khqrExample is the example of github.com/ishinvin/ts-khqr
	// (README.md), an individual KHQR for 10,000 riel with every optional
	// object, including Chinese text in template 64.
	khqrExample = "00020101021229420013ishinvin@devb01090123456780208Dev Bank5204599953031165405100005802KH5909Ishin Vin6010Phnom Penh62680114INV-2022-12-250211855123456780310Ishin Shop07060123450807Payment64180002ZH0102文山0202金边9917001316935559673876304AE27"
)

// lookup returns the value at a dotted path such as "38.01.00", descending
// through templates.
func lookup(p Payload, path string) (string, bool) {
	ids := strings.Split(path, ".")
	for _, id := range ids[:len(ids)-1] {
		var ok bool
		if p, ok = p.Template(id); !ok {
			return "", false
		}
	}
	return p.Get(ids[len(ids)-1])
}

func TestDecodePublished(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload string
		want    map[string]string
	}{
		{"EMVCo example", emvcoExample, map[string]string{
			"00": "01", "01": "12", "29.00": "D15600000000", "29.05": "A93FO3230Q",
			"31.00": "D15600000001", "31.03": "12345678", "52": "4111", "53": "156", "54": "23.72", "55": "01",
			"58": "CN", "59": "BEST TRANSPORT", "60": "BEIJING",
			"64.00": "ZH", "64.01": "最佳运输", "64.02": "北京",
			"62.03": "1234", "62.06": "***", "62.07": "A6008667", "62.09": "ME",
			"91.00": "A011223344998877", "91.07": "12345678",
		}},
		{"PromptPay mobile", promptPayMobileExample, map[string]string{
			"01": "11", "29.00": "A000000677010111", "29.01": "0066801234567", "53": "764", "58": "TH",
		}},
		{"PromptPay national ID", promptPayNationalIDExample, map[string]string{
			"29.02": "1111111111111",
		}},
		{"PromptPay amount", promptPayAmountExample, map[string]string{
			"01": "12", "29.01": "0066000000000", "54": "4.22",
		}},
		{"VietQR", vietQRExample, map[string]string{
			"01": "12", "38.00": "A000000727", "38.01.00": "970415", "38.01.01": "0011001932418",
			"38.02": "QRIBFTTA", "53": "704", "54": "120000", "58": "VN", "62.08": "ung ho lu lut",
		}},
		{"KHQR", khqrExample, map[string]string{
			"29.00": "ishinvin@devb", "29.01": "012345678", "29.02": "Dev Bank", "52": "5999",
			"53": "116", "54": "10000", "59": "Ishin Vin", "60": "Phnom Penh",
			"62.01": "INV-2022-12-25", "62.02": "85512345678", "62.08": "Payment",
			"64.01": "文山", "99.00": "1693555967387",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Decode(tt.payload)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			got := make(map[string]string, len(tt.want))
			for path := range tt.want {
				got[path], _ = lookup(p, path)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded fields\n got %v\nwant %v", got, tt.want)
			}
			reencoded, err := Encode(p.Fields())
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if reencoded != tt.payload {
				t.Errorf("re-encoded\n got %s\nwant %s", reencoded, tt.payload)
			}
		})
	}
}

// withCRC completes a payload prefix with a correct CRC, so that a test of a
// malformed payload fails for the reason it names.
func withCRC(prefix string) string {
	return prefix + crcHeader + CRC16(prefix+crcHeader)
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload string
		want    error
	}{
		{"wrong CRC", vietQRExample[:len(vietQRExample)-1] + "D", ErrCRC},
		{"altered amount", strings.Replace(vietQRExample, "120000", "920000", 1), ErrCRC},
		{"CRC not hex", "0002016304ZZZZ", ErrSyntax},
		{"CRC too short", withCRC("000201")[:12], ErrSyntax},
		{"truncated in a template", vietQRExample[:40], ErrSyntax},
		{"truncated in a header", "00020101021", ErrSyntax},
		{"non-numeric length", withCRC("000201" + "01A212"), ErrSyntax},
		{"non-numeric ID", withCRC("0002015A02VN"), ErrSyntax},
		{"length past the end", "000201" + "5920ABC" + "6304" + CRC16("0002015920ABC6304"), ErrSyntax},
		{"length 00", withCRC("0002015900"), ErrSyntax},
		{"malformed template", withCRC("000201" + "2603ABC"), ErrSyntax},
		{"invalid UTF-8", withCRC("000201" + "5902\xff\xfe"), ErrSyntax},
		{"CRC not last", withCRC("000201" + "6304ABCD" + "5802VN"), ErrSyntax},
		{"first field not 00", withCRC("010212"), ErrSyntax},
		{"only a CRC", withCRC(""), ErrSyntax},
		{"missing CRC", "000201010212", ErrNoCRC},
		{"empty", "", ErrNoCRC},
		{"oversized", withCRC("000201" + strings.Repeat("5999"+strings.Repeat("A", 99), 5)), ErrTooLong},
		{"oversized garbage", strings.Repeat("x", 1<<20), ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.payload)
			if !errors.Is(err, tt.want) {
				t.Errorf("Decode(%q) = %v, want %v", tt.payload, err, tt.want)
			}
		})
	}
}

func TestDecodeAcceptsLowerCaseCRC(t *testing.T) {
	t.Parallel()
	lower := vietQRExample[:len(vietQRExample)-4] + strings.ToLower(vietQRExample[len(vietQRExample)-4:])
	if _, err := Decode(lower); err != nil {
		t.Errorf("Decode(%q): %v", lower, err)
	}
}

func TestDecodeMaxLength(t *testing.T) {
	t.Parallel()
	// 6 + 4×(4+99) + (4+82) + 8 = 512 characters, the most EMVCo allows.
	prefix := "000201" + strings.Repeat("5999"+strings.Repeat("A", 99), 4) + "5982" + strings.Repeat("B", 82)
	payload := withCRC(prefix)
	if len(payload) != maxPayloadChars {
		t.Fatalf("test payload has %d characters, want %d", len(payload), maxPayloadChars)
	}
	if _, err := Decode(payload); err != nil {
		t.Errorf("Decode of %d characters: %v", len(payload), err)
	}
}

func TestEncode(t *testing.T) {
	t.Parallel()
	promptPayAID := Field{ID: "00", Value: "A000000677010111"}
	tests := []struct {
		name   string
		fields []Field
		want   string
	}{
		{"PromptPay mobile, as dtinth/promptpay-qr writes it", []Field{
			{ID: "00", Value: "01"},
			{ID: "01", Value: "11"},
			{ID: "29", Sub: []Field{promptPayAID, {ID: "01", Value: "0066801234567"}}},
			{ID: "58", Value: "TH"},
			{ID: "53", Value: "764"},
		}, promptPayMobileExample},
		{"PromptPay amount", []Field{
			{ID: "00", Value: "01"},
			{ID: "01", Value: "12"},
			{ID: "29", Sub: []Field{promptPayAID, {ID: "01", Value: "0066000000000"}}},
			{ID: "58", Value: "TH"},
			{ID: "53", Value: "764"},
			{ID: "54", Value: "4.22"},
		}, promptPayAmountExample},
		{"template given as raw Value", []Field{
			{ID: "00", Value: "01"},
			{ID: "01", Value: "11"},
			{ID: "29", Value: "0016A00000067701011101130066801234567"},
			{ID: "58", Value: "TH"},
			{ID: "53", Value: "764"},
		}, promptPayMobileExample},
		{"template with agreeing Value and Sub", []Field{
			{ID: "00", Value: "01"},
			{ID: "01", Value: "11"},
			{ID: "29", Value: "0016A00000067701011101130066801234567", Sub: []Field{promptPayAID, {ID: "01", Value: "0066801234567"}}},
			{ID: "58", Value: "TH"},
			{ID: "53", Value: "764"},
		}, promptPayMobileExample},
		{"VietQR, two levels deep", []Field{
			{ID: "00", Value: "01"},
			{ID: "01", Value: "12"},
			{ID: "38", Sub: []Field{
				{ID: "00", Value: "A000000727"},
				{ID: "01", Sub: []Field{{ID: "00", Value: "970415"}, {ID: "01", Value: "0011001932418"}}},
				{ID: "02", Value: "QRIBFTTA"},
			}},
			{ID: "53", Value: "704"},
			{ID: "54", Value: "120000"},
			{ID: "58", Value: "VN"},
			{ID: "62", Sub: []Field{{ID: "08", Value: "ung ho lu lut"}}},
		}, vietQRExample},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.fields)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got != tt.want {
				t.Errorf("Encode\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// inputField returns the Field of the *InputError in err's chain, or "".
func inputField(err error) string {
	var ie *InputError
	errors.As(err, &ie)
	if ie == nil {
		return ""
	}
	return ie.Field
}

func TestEncodeRejects(t *testing.T) {
	t.Parallel()
	format := Field{ID: "00", Value: "01"}
	tests := []struct {
		name      string
		fields    []Field
		wantErr   error
		wantField string
	}{
		{"no fields", nil, ErrInvalidInput, "payload"},
		{"first field not 00", []Field{{ID: "01", Value: "12"}, format}, ErrInvalidInput, "payload"},
		{"CRC given", []Field{format, {ID: "63", Value: "ABCD"}}, ErrInvalidInput, "63"},
		{"one-digit ID", []Field{format, {ID: "5", Value: "x"}}, ErrInvalidInput, "payload"},
		{"non-digit nested ID", []Field{format, {ID: "26", Sub: []Field{{ID: "0A", Value: "x"}}}}, ErrInvalidInput, "26"},
		{"empty value", []Field{format, {ID: "59"}}, ErrInvalidInput, "59"},
		{"value over 99 characters", []Field{format, {ID: "59", Value: strings.Repeat("A", 100)}}, ErrInvalidInput, "59"},
		{"template over 99 characters", []Field{format, {ID: "62", Sub: []Field{
			{ID: "01", Value: strings.Repeat("A", 50)}, {ID: "05", Value: strings.Repeat("B", 50)},
		}}}, ErrInvalidInput, "62"},
		{"nested value over 99 characters", []Field{format, {ID: "62", Sub: []Field{
			{ID: "01", Value: strings.Repeat("A", 100)},
		}}}, ErrInvalidInput, "62.01"},
		{"Value and Sub disagree", []Field{format, {ID: "26", Value: "0002XX", Sub: []Field{{ID: "00", Value: "YY"}}}}, ErrInvalidInput, "26"},
		{"invalid UTF-8", []Field{format, {ID: "59", Value: "\xff"}}, ErrInvalidInput, "59"},
		{"over 512 characters", append([]Field{format}, repeatField(Field{ID: "59", Value: strings.Repeat("A", 99)}, 5)...), ErrTooLong, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Encode(tt.fields)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Encode error = %v, want %v", err, tt.wantErr)
			}
			if got := inputField(err); got != tt.wantField {
				t.Errorf("InputError.Field = %q, want %q (error %v)", got, tt.wantField, err)
			}
		})
	}
}

func repeatField(f Field, n int) []Field {
	fields := make([]Field, n)
	for i := range fields {
		fields[i] = f
	}
	return fields
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// re-encodes to the same payload (the CRC in upper case), which decodes to
// the same fields. Most mutations break the CRC, so each input is also tried
// as a payload prefix with a good CRC appended: that puts the round trip to
// many structures, not only to the seeds.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		emvcoExample, promptPayMobileExample, promptPayNationalIDExample, promptPayAmountExample,
		vietQRExample, khqrExample, withCRC("000201" + "2603ABC"), withCRC("0002015900"), "",
	} {
		f.Add(seed)
		f.Add(seed[:max(len(seed)-8, 0)]) // without its CRC field
	}
	f.Fuzz(func(t *testing.T, payload string) {
		checkRoundTrip(t, payload)
		checkRoundTrip(t, withCRC(payload))
	})
}

// checkRoundTrip decodes payload and, if Decode accepts it, checks that
// Encode gives it back and that it decodes again to the same fields.
func checkRoundTrip(t *testing.T, payload string) {
	p, err := Decode(payload)
	if err != nil {
		return
	}
	for _, field := range p.Fields() {
		p.Template(field.ID)
	}
	p.AdditionalData()
	reencoded, err := Encode(p.Fields())
	if err != nil {
		t.Fatalf("Encode of decoded %q: %v", payload, err)
	}
	want := payload[:len(payload)-4] + strings.ToUpper(payload[len(payload)-4:])
	if reencoded != want {
		t.Fatalf("re-encoded\n got %q\nwant %q", reencoded, want)
	}
	again, err := Decode(reencoded)
	if err != nil {
		t.Fatalf("Decode of re-encoded %q: %v", reencoded, err)
	}
	if !reflect.DeepEqual(again.Fields(), p.Fields()) {
		t.Fatalf("fields changed in a round trip\n got %v\nwant %v", again.Fields(), p.Fields())
	}
}
