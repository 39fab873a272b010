package qr

import (
	"strings"
	"testing"
)

// header returns the objects every dynamic code of a scheme shares, for
// comparison in one string: format, initiation, currency and country.
func header(p Payload) string {
	return strings.Join([]string{p.PayloadFormat(), string(p.PointOfInitiation()), p.Currency(), p.CountryCode()}, " ")
}

func TestPayloadAccessors(t *testing.T) {
	t.Parallel()
	emvco, err := Decode(emvcoExample)
	if err != nil {
		t.Fatal(err)
	}
	khqr, err := Decode(khqrExample)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"payload format", emvco.PayloadFormat(), "01"},
		{"point of initiation", string(emvco.PointOfInitiation()), string(InitiationDynamic)},
		{"merchant category", emvco.MerchantCategoryCode(), "4111"},
		{"currency", emvco.Currency(), "156"},
		{"amount", emvco.Amount(), "23.72"},
		{"country", emvco.CountryCode(), "CN"},
		{"merchant name", emvco.MerchantName(), "BEST TRANSPORT"},
		{"merchant city", emvco.MerchantCity(), "BEIJING"},
		{"absent postal code", emvco.PostalCode(), ""},
		{"terminal label", emvco.AdditionalData().TerminalLabel, "A6008667"},
		{"absent purpose", emvco.AdditionalData().Purpose, ""},
		{"KHQR currency", khqr.Currency(), CurrencyKHR},
		{"KHQR bill number", khqr.AdditionalData().BillNumber, "INV-2022-12-25"},
		{"KHQR purpose", khqr.AdditionalData().Purpose, "Payment"},
		{"absent reference label", khqr.AdditionalData().ReferenceLabel, ""},
		{"zero Payload", Payload{}.MerchantName(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestPayloadTemplate(t *testing.T) {
	t.Parallel()
	vietQR, err := Decode(vietQRExample)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		path   string
		want   string
		wantOK bool
	}{
		{"parsed by Decode", "38.02", "QRIBFTTA", true},
		{"parsed on demand", "38.01.00", "970415", true},
		{"additional data", "62.08", "ung ho lu lut", true},
		{"primitive is no template", "53.00", "", false},
		{"absent template", "26.00", "", false},
		{"absent object in a template", "38.03", "", false},
		{"CRC is not a field", "63", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := lookup(vietQR, tt.path)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("lookup(%s) = %q, %t; want %q, %t", tt.path, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
