package qr

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files")

// goldenCreatedAt is the fixed creation time of the golden KHQR codes.
var goldenCreatedAt = time.Date(2025, 1, 2, 3, 4, 5, 678_000_000, time.UTC)

// TestGolden pins one payload per builder for fixed inputs, byte for byte, so
// that any change in what payd shows payers is seen in review. Run
// go test ./internal/qr -update to rewrite the files after a deliberate
// change.
func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		build func() (string, error)
	}{
		{"vietqr", func() (string, error) {
			return VietQR(VietQRParams{
				BIN:            "970436",
				Account:        "1234567890",
				Amount:         "250000",
				AdditionalData: AdditionalData{Purpose: "PAYD PI01HZX3K8"},
			})
		}},
		{"qris", func() (string, error) {
			return QRIS(QRISParams{
				GUID:                 "ID.CO.QRIS.WWW",
				MerchantPAN:          "936000140000000012",
				MerchantID:           "PAYD0001",
				Criteria:             QRISMicro,
				NMID:                 "ID1020000000001",
				MerchantCategoryCode: "5999",
				MerchantName:         "PAYD TEST MERCHANT",
				MerchantCity:         "JAKARTA",
				PostalCode:           "10110",
				Amount:               "150000",
				AdditionalData:       AdditionalData{ReferenceLabel: "PI01HZX3K8", TerminalLabel: "A01"},
			})
		}},
		{"promptpay", func() (string, error) {
			return PromptPay(PromptPayParams{MobileNumber: "0812345678", Amount: "350.5"})
		}},
		{"promptpay_bill", func() (string, error) {
			return PromptPayBill(PromptPayBillParams{
				BillerID:       "010555600000001",
				Reference1:     "PI01HZX3K8",
				Reference2:     "PAYD",
				Amount:         "1250",
				MerchantName:   "PAYD TEST MERCHANT",
				AdditionalData: AdditionalData{TerminalLabel: "PAYD01"},
			})
		}},
		{"khqr", func() (string, error) {
			return KHQR(KHQRParams{
				BakongAccountID: "payd_test@aclb",
				MerchantName:    "PAYD TEST",
				MerchantCity:    "Phnom Penh",
				Currency:        CurrencyKHR,
				Amount:          "40000",
				AdditionalData:  AdditionalData{BillNumber: "PI01HZX3K8"},
				CreatedAt:       goldenCreatedAt,
				ExpiresAt:       goldenCreatedAt.Add(15 * time.Minute),
			})
		}},
		{"khqr_merchant", func() (string, error) {
			return KHQR(KHQRParams{
				BakongAccountID: "payd_test@aclb",
				MerchantID:      "PAYD0001",
				AcquiringBank:   "ACLEDA Bank",
				MerchantName:    "PAYD TEST MERCHANT",
				MerchantCity:    "Phnom Penh",
				Currency:        CurrencyUSD,
				Amount:          "12.5",
				AdditionalData:  AdditionalData{BillNumber: "PI01HZX3K8", TerminalLabel: "WEB"},
				CreatedAt:       goldenCreatedAt,
				ExpiresAt:       goldenCreatedAt.Add(15 * time.Minute),
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.build()
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if _, err := Decode(got); err != nil {
				t.Errorf("Decode(%q): %v", got, err)
			}
			checkGolden(t, tt.name, got)
		})
	}
}

// checkGolden compares got with testdata/name.golden, or rewrites the file
// when -update is set.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("payload differs from %s (run go test -update if the change is intended)\n got: %s\nwant: %s", path, got, want)
	}
}
