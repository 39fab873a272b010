package qr

import (
	"errors"
	"strings"
	"testing"
)

func TestVietQRRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   VietQRParams
		want VietQRParams
	}{
		{
			"service defaults to account",
			VietQRParams{BIN: "970436", Account: "0011001932418", Amount: "50000"},
			VietQRParams{BIN: "970436", Account: "0011001932418", Service: VietQRToAccount, Amount: "50000"},
		},
		{
			"to card",
			VietQRParams{BIN: "970415", Account: "9704150123456789", Service: VietQRToCard, Amount: "1"},
			VietQRParams{BIN: "970415", Account: "9704150123456789", Service: VietQRToCard, Amount: "1"},
		},
		{
			"longest account and purpose, large amount",
			VietQRParams{BIN: "970422", Account: "1234567890123456789", Amount: "1000000", AdditionalData: AdditionalData{Purpose: "PAYD PI01HZX3K8 ABCDEFGHI"}},
			VietQRParams{BIN: "970422", Account: "1234567890123456789", Service: VietQRToAccount, Amount: "1000000", AdditionalData: AdditionalData{Purpose: "PAYD PI01HZX3K8 ABCDEFGHI"}},
		},
		{
			"largest amount and every additional object",
			VietQRParams{BIN: "970436", Account: "1", Amount: "9999999999999", AdditionalData: AdditionalData{BillNumber: "INV1", ReferenceLabel: "REF1", TerminalLabel: "T1", Purpose: "P1"}},
			VietQRParams{BIN: "970436", Account: "1", Service: VietQRToAccount, Amount: "9999999999999", AdditionalData: AdditionalData{BillNumber: "INV1", ReferenceLabel: "REF1", TerminalLabel: "T1", Purpose: "P1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := VietQR(tt.in)
			if err != nil {
				t.Fatalf("VietQR: %v", err)
			}
			got, err := ParseVietQR(payload)
			if err != nil {
				t.Fatalf("ParseVietQR(%q): %v", payload, err)
			}
			if got != tt.want {
				t.Errorf("ParseVietQR(VietQR(in))\n got %+v\nwant %+v", got, tt.want)
			}
			p, _ := Decode(payload)
			if got, want := header(p), "01 12 704 VN"; got != want {
				t.Errorf("header = %q, want %q", got, want)
			}
		})
	}
}

func TestVietQRRejects(t *testing.T) {
	t.Parallel()
	valid := VietQRParams{BIN: "970436", Account: "0011001932418", Amount: "50000"}
	tests := []struct {
		name string
		edit func(*VietQRParams)
		want string
	}{
		{"missing BIN", func(p *VietQRParams) { p.BIN = "" }, `build VietQR: invalid BIN: is required`},
		{"short BIN", func(p *VietQRParams) { p.BIN = "97043" }, `build VietQR: invalid BIN: "97043" is not 6 digits`},
		{"letters in BIN", func(p *VietQRParams) { p.BIN = "VCB436" }, `build VietQR: invalid BIN: "VCB436" is not 6 digits`},
		{"non-digit account", func(p *VietQRParams) { p.Account = "0011-0019" }, `build VietQR: invalid Account: "0011-0019" is not 1 to 19 digits`},
		{"20-digit account", func(p *VietQRParams) { p.Account = "12345678901234567890" }, `build VietQR: invalid Account: "12345678901234567890" is not 1 to 19 digits`},
		{"unknown service", func(p *VietQRParams) { p.Service = "QRPUSH" }, `build VietQR: invalid Service: "QRPUSH" is not QRIBFTTA or QRIBFTTC`},
		{"missing amount", func(p *VietQRParams) { p.Amount = "" }, `build VietQR: invalid Amount: is required`},
		{"dong with decimals", func(p *VietQRParams) { p.Amount = "50000.50" }, `build VietQR: invalid Amount: "50000.50" is not a whole number`},
		{"amount not a number", func(p *VietQRParams) { p.Amount = "50k" }, `build VietQR: invalid Amount: "50k" is not a decimal number such as 100 or 100.50`},
		{"purpose over 25", func(p *VietQRParams) { p.AdditionalData.Purpose = strings.Repeat("x", 26) }, `build VietQR: invalid AdditionalData.Purpose: has 26 characters, more than 25`},
		{"Vietnamese diacritics", func(p *VietQRParams) { p.AdditionalData.Purpose = "Thanh toán" }, `build VietQR: invalid AdditionalData.Purpose: contains 'á', which is not printable ASCII`},
		{"additional data over 99", func(p *VietQRParams) {
			p.AdditionalData = AdditionalData{BillNumber: strings.Repeat("B", 25), ReferenceLabel: strings.Repeat("R", 25), TerminalLabel: strings.Repeat("T", 25), Purpose: strings.Repeat("P", 25)}
		}, `build VietQR: invalid 62: value has 116 characters, want 1 to 99`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid
			tt.edit(&p)
			_, err := VietQR(p)
			if got := errText(err); got != tt.want {
				t.Errorf("VietQR error = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("errors.Is(%v, ErrInvalidInput) = false", err)
			}
		})
	}
}

func TestParseVietQR(t *testing.T) {
	t.Parallel()
	// A VietQR transfer under template 26 instead of 38, as a bank's
	// merchant code might carry it.
	under26, err := Encode([]Field{
		{ID: "00", Value: "01"},
		{ID: "01", Value: "11"},
		{ID: "26", Sub: []Field{
			{ID: "00", Value: "A000000727"},
			{ID: "01", Sub: []Field{{ID: "00", Value: "970436"}, {ID: "01", Value: "12345"}}},
			{ID: "02", Value: "QRPUSH"},
		}},
		{ID: "53", Value: "704"},
		{ID: "58", Value: "VN"},
	})
	if err != nil {
		t.Fatal(err)
	}
	noBIN, err := Encode([]Field{
		{ID: "00", Value: "01"},
		{ID: "38", Sub: []Field{{ID: "00", Value: "A000000727"}, {ID: "01", Value: "0105ABCDE"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		payload string
		want    VietQRParams
		wantErr error
	}{
		{"published example", vietQRExample, VietQRParams{
			BIN: "970415", Account: "0011001932418", Service: VietQRToAccount, Amount: "120000",
			AdditionalData: AdditionalData{Purpose: "ung ho lu lut"},
		}, nil},
		{"static code under template 26", under26, VietQRParams{BIN: "970436", Account: "12345", Service: "QRPUSH"}, nil},
		{"PromptPay code", promptPayMobileExample, VietQRParams{}, ErrNotVietQR},
		{"no BIN", noBIN, VietQRParams{}, ErrNotVietQR},
		{"wrong CRC", vietQRExample[:len(vietQRExample)-1] + "0", VietQRParams{}, ErrCRC},
		{"not a payload", "hello", VietQRParams{}, ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseVietQR(tt.payload)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("ParseVietQR = %+v, %v; want %+v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
