package qr

import (
	"errors"
	"strings"
	"testing"
)

// qrisFromPayload reads back the inputs of QRIS from a decoded payload.
func qrisFromPayload(p Payload) QRISParams {
	account, _ := p.Template(qrisAccountTemplate)
	national, _ := p.Template(qrisNationalTemplate)
	return QRISParams{
		GUID:                 account.value(idGUID),
		MerchantPAN:          account.value(idQRISMerchantPAN),
		MerchantID:           account.value(idQRISMerchantID),
		Criteria:             QRISCriteria(account.value(idQRISCriteria)),
		NMID:                 national.value(idQRISNMID),
		MerchantCategoryCode: p.MerchantCategoryCode(),
		MerchantName:         p.MerchantName(),
		MerchantCity:         p.MerchantCity(),
		PostalCode:           p.PostalCode(),
		Amount:               p.Amount(),
		AdditionalData:       p.AdditionalData(),
	}
}

// validQRIS returns a complete QRISParams for tests to vary.
func validQRIS() QRISParams {
	return QRISParams{
		GUID:                 "ID.CO.BANKNAME.WWW",
		MerchantPAN:          "936000140000000012",
		MerchantID:           "PAYD0001",
		Criteria:             QRISSmall,
		NMID:                 "ID1020000000001",
		MerchantCategoryCode: "5411",
		MerchantName:         "Toko Sinar Jaya",
		MerchantCity:         "BANDUNG",
		PostalCode:           "40115",
		Amount:               "25000",
		AdditionalData:       AdditionalData{ReferenceLabel: "PI01HZX3K8"},
	}
}

func TestQRISRoundTrip(t *testing.T) {
	t.Parallel()
	defaultGUID := validQRIS()
	defaultGUID.GUID = ""
	defaultGUIDWant := validQRIS()
	defaultGUIDWant.GUID = "ID.CO.QRIS.WWW"
	longest := validQRIS()
	longest.MerchantPAN = "9360001400000000123"
	longest.MerchantID = "ABCDEFGHIJKLMNO"
	longest.NMID = "ID1234567890123"
	longest.MerchantName = "ABCDEFGHIJKLMNOPQRSTUVWXY"
	longest.MerchantCity = "KOTA TANGERANGS"
	longest.PostalCode = "1234567890"
	longest.Amount = "1000000"
	cents := validQRIS()
	cents.Amount = "0.01"
	cents.AdditionalData = AdditionalData{BillNumber: "INV-2025-0001", TerminalLabel: "A01"}
	tests := []struct {
		name string
		in   QRISParams
		want QRISParams
	}{
		{"issuer GUID", validQRIS(), validQRIS()},
		{"GUID defaults to national", defaultGUID, defaultGUIDWant},
		{"longest values, large amount", longest, longest},
		{"smallest amount with decimals", cents, cents},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := QRIS(tt.in)
			if err != nil {
				t.Fatalf("QRIS: %v", err)
			}
			p, err := Decode(payload)
			if err != nil {
				t.Fatalf("Decode(%q): %v", payload, err)
			}
			if got := qrisFromPayload(p); got != tt.want {
				t.Errorf("decoded\n got %+v\nwant %+v", got, tt.want)
			}
			if got, want := header(p), "01 12 360 ID"; got != want {
				t.Errorf("header = %q, want %q", got, want)
			}
			// Template 51 names the national GUID and repeats the criteria.
			if got, _ := lookup(p, "51.00"); got != "ID.CO.QRIS.WWW" {
				t.Errorf("51.00 = %q, want ID.CO.QRIS.WWW", got)
			}
			if got, _ := lookup(p, "51.03"); got != string(tt.want.Criteria) {
				t.Errorf("51.03 = %q, want %q", got, tt.want.Criteria)
			}
		})
	}
}

func TestQRISRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*QRISParams)
		want string
	}{
		{"GUID over 32", func(p *QRISParams) { p.GUID = strings.Repeat("A", 33) }, `build QRIS: invalid GUID: has 33 characters, more than 32`},
		{"PAN with letters", func(p *QRISParams) { p.MerchantPAN = "93600014000000001X" }, `build QRIS: invalid MerchantPAN: "93600014000000001X" is not 1 to 19 digits`},
		{"PAN over 19", func(p *QRISParams) { p.MerchantPAN = "93600014000000001234" }, `build QRIS: invalid MerchantPAN: "93600014000000001234" is not 1 to 19 digits`},
		{"missing merchant ID", func(p *QRISParams) { p.MerchantID = "" }, `build QRIS: invalid MerchantID: is required`},
		{"unknown criteria", func(p *QRISParams) { p.Criteria = "URE" }, `build QRIS: invalid Criteria: "URE" is not UMI, UKE, UME or UBE`},
		{"NMID without ID", func(p *QRISParams) { p.NMID = "1020000000001" }, `build QRIS: invalid NMID: "1020000000001" is not "ID" and up to 13 digits`},
		{"NMID too long", func(p *QRISParams) { p.NMID = "ID10200000000012" }, `build QRIS: invalid NMID: "ID10200000000012" is not "ID" and up to 13 digits`},
		{"MCC of 3 digits", func(p *QRISParams) { p.MerchantCategoryCode = "541" }, `build QRIS: invalid MerchantCategoryCode: "541" is not 4 digits`},
		{"name over 25", func(p *QRISParams) { p.MerchantName = "ABCDEFGHIJKLMNOPQRSTUVWXYZ" }, `build QRIS: invalid MerchantName: has 26 characters, more than 25`},
		{"city over 15", func(p *QRISParams) { p.MerchantCity = "JAKARTA SELATAN1" }, `build QRIS: invalid MerchantCity: has 16 characters, more than 15`},
		{"missing postal code", func(p *QRISParams) { p.PostalCode = "" }, `build QRIS: invalid PostalCode: is required`},
		{"three decimals", func(p *QRISParams) { p.Amount = "100.001" }, `build QRIS: invalid Amount: "100.001" has more than 2 decimal places`},
		{"zero amount", func(p *QRISParams) { p.Amount = "0" }, `build QRIS: invalid Amount: "0" is not greater than zero`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validQRIS()
			tt.edit(&p)
			_, err := QRIS(p)
			if got := errText(err); got != tt.want {
				t.Errorf("QRIS error = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("errors.Is(%v, ErrInvalidInput) = false", err)
			}
		})
	}
}
