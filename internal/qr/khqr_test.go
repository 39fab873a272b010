package qr

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// khqrFromPayload reads back the inputs of KHQR from a decoded payload.
func khqrFromPayload(p Payload) KHQRParams {
	var got KHQRParams
	if merchant, ok := p.Template(khqrMerchantTemplate); ok {
		got.BakongAccountID = merchant.value(idKHQRBakongAccount)
		got.MerchantID = merchant.value(idKHQRMerchantID)
		got.AcquiringBank = merchant.value(idKHQRAcquiringBank)
	}
	if individual, ok := p.Template(khqrIndividualTemplate); ok {
		got.BakongAccountID = individual.value(idKHQRBakongAccount)
		got.AccountInformation = individual.value(idKHQRAccountInfo)
		got.AcquiringBank = individual.value(idKHQRAcquiringBank)
	}
	got.MerchantName = p.MerchantName()
	got.MerchantCity = p.MerchantCity()
	got.MerchantCategoryCode = p.MerchantCategoryCode()
	got.Currency = p.Currency()
	got.Amount = p.Amount()
	got.AdditionalData = p.AdditionalData()
	timestamps, _ := p.Template(khqrTimestampTemplate)
	got.CreatedAt = unixMilli(timestamps.value(idKHQRCreatedAt))
	got.ExpiresAt = unixMilli(timestamps.value(idKHQRExpiresAt))
	return got
}

func unixMilli(s string) time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

var (
	khqrCreatedAt = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
	khqrExpiresAt = khqrCreatedAt.Add(10 * time.Minute)
)

// validKHQR returns a complete individual KHQRParams for tests to vary.
func validKHQR() KHQRParams {
	return KHQRParams{
		BakongAccountID:      "payd_test@aclb",
		MerchantName:         "PAYD TEST",
		MerchantCity:         "Phnom Penh",
		MerchantCategoryCode: "5999",
		Currency:             CurrencyKHR,
		Amount:               "40000",
		CreatedAt:            khqrCreatedAt,
		ExpiresAt:            khqrExpiresAt,
	}
}

func TestKHQRRoundTrip(t *testing.T) {
	t.Parallel()
	defaultMCC := validKHQR()
	defaultMCC.MerchantCategoryCode = ""
	individual := validKHQR()
	individual.AccountInformation = "012345678"
	individual.AcquiringBank = "Dev Bank"
	individual.AdditionalData = AdditionalData{BillNumber: "INV-2022-12-25", TerminalLabel: "012345", Purpose: "Payment"}
	merchant := validKHQR()
	merchant.MerchantID = "PAYD0001"
	merchant.AcquiringBank = "ACLEDA Bank"
	merchant.MerchantCategoryCode = "7372"
	merchant.MerchantName = "ABCDEFGHIJKLMNOPQRSTUVWXY"
	merchant.MerchantCity = "Sihanoukville12"
	merchant.Currency = CurrencyUSD
	merchant.Amount = "0.01"
	usdWhole := merchant
	usdWhole.Amount = "1000000"
	usdWholeWant := usdWhole
	usdWholeWant.Amount = "1000000.00"
	tests := []struct {
		name         string
		in           KHQRParams
		want         KHQRParams
		wantTemplate string
	}{
		{"individual, category defaults to 5999", defaultMCC, validKHQR(), "29"},
		{"individual with every option", individual, individual, "29"},
		{"merchant, longest name and city, smallest USD amount", merchant, merchant, "30"},
		{"merchant, USD written with two decimals", usdWhole, usdWholeWant, "30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := KHQR(tt.in)
			if err != nil {
				t.Fatalf("KHQR: %v", err)
			}
			p, err := Decode(payload)
			if err != nil {
				t.Fatalf("Decode(%q): %v", payload, err)
			}
			if got := khqrFromPayload(p); got != tt.want {
				t.Errorf("decoded\n got %+v\nwant %+v", got, tt.want)
			}
			if got, want := header(p), "01 12 "+tt.want.Currency+" KH"; got != want {
				t.Errorf("header = %q, want %q", got, want)
			}
			if got, _ := lookup(p, tt.wantTemplate+".00"); got != tt.want.BakongAccountID {
				t.Errorf("%s.00 = %q, want %q", tt.wantTemplate, got, tt.want.BakongAccountID)
			}
		})
	}
}

func TestKHQRRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*KHQRParams)
		want string
	}{
		{"missing account", func(p *KHQRParams) { p.BakongAccountID = "" }, `build KHQR: invalid BakongAccountID: is required`},
		{"account without bank", func(p *KHQRParams) { p.BakongAccountID = "payd_test" }, `build KHQR: invalid BakongAccountID: "payd_test" is not of the form name@bank`},
		{"account over 32", func(p *KHQRParams) { p.BakongAccountID = strings.Repeat("a", 28) + "@aclb" }, `build KHQR: invalid BakongAccountID: has 33 characters, more than 32`},
		{"merchant without bank", func(p *KHQRParams) { p.MerchantID = "PAYD0001" }, `build KHQR: invalid AcquiringBank: is required`},
		{"merchant with account information", func(p *KHQRParams) {
			p.MerchantID, p.AcquiringBank, p.AccountInformation = "PAYD0001", "ACLEDA", "012345"
		}, `build KHQR: invalid AccountInformation: is for an individual's code, not a merchant's (MerchantID is set)`},
		{"name over 25", func(p *KHQRParams) { p.MerchantName = strings.Repeat("N", 26) }, `build KHQR: invalid MerchantName: has 26 characters, more than 25`},
		{"missing city", func(p *KHQRParams) { p.MerchantCity = "" }, `build KHQR: invalid MerchantCity: is required`},
		{"Khmer city", func(p *KHQRParams) { p.MerchantCity = "ភ្នំពេញ" }, `build KHQR: invalid MerchantCity: contains 'ភ', which is not printable ASCII`},
		{"other currency", func(p *KHQRParams) { p.Currency = CurrencyTHB }, `build KHQR: invalid Currency: "764" is not 116 (KHR) or 840 (USD)`},
		{"riel with decimals", func(p *KHQRParams) { p.Amount = "100.50" }, `build KHQR: invalid Amount: "100.50" is not a whole number`},
		{"dollars with three decimals", func(p *KHQRParams) { p.Currency, p.Amount = CurrencyUSD, "1.005" }, `build KHQR: invalid Amount: "1.005" has more than 2 decimal places`},
		{"reference label", func(p *KHQRParams) { p.AdditionalData.ReferenceLabel = "PI1" }, `build KHQR: invalid AdditionalData.ReferenceLabel: KHQR has no reference label; use BillNumber`},
		{"missing creation time", func(p *KHQRParams) { p.CreatedAt = time.Time{} }, `build KHQR: invalid CreatedAt: is required`},
		{"missing expiry", func(p *KHQRParams) { p.ExpiresAt = time.Time{} }, `build KHQR: invalid ExpiresAt: is required`},
		{"expiry before creation", func(p *KHQRParams) { p.ExpiresAt = p.CreatedAt.Add(-time.Second) }, `build KHQR: invalid ExpiresAt: is not after CreatedAt`},
		{"expiry in the same millisecond", func(p *KHQRParams) { p.ExpiresAt = p.CreatedAt.Add(time.Microsecond) }, `build KHQR: invalid ExpiresAt: is not after CreatedAt`},
		{"account template over 99", func(p *KHQRParams) {
			p.BakongAccountID = strings.Repeat("a", 27) + "@aclb"
			p.AccountInformation = strings.Repeat("1", 32)
			p.AcquiringBank = strings.Repeat("B", 32)
		}, `build KHQR: invalid 29: value has 108 characters, want 1 to 99`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := validKHQR()
			tt.edit(&p)
			_, err := KHQR(p)
			if got := errText(err); got != tt.want {
				t.Errorf("KHQR error = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("errors.Is(%v, ErrInvalidInput) = false", err)
			}
		})
	}
}
