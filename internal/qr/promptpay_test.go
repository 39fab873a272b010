package qr

import (
	"errors"
	"strings"
	"testing"
)

// promptPayFromPayload reads back the inputs of PromptPay from a decoded
// payload, turning the mobile proxy back into its local form.
func promptPayFromPayload(p Payload) PromptPayParams {
	account, _ := p.Template(promptPayTransferTemplate)
	mobile, _ := strings.CutPrefix(account.value(idPromptPayMobile), promptPayMobilePrefix)
	if mobile != "" {
		mobile = "0" + mobile
	}
	return PromptPayParams{
		MobileNumber: mobile,
		NationalID:   account.value(idPromptPayNationalID),
		EWalletID:    account.value(idPromptPayEWallet),
		Amount:       p.Amount(),
	}
}

func TestPromptPayRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        PromptPayParams
		wantProxy string // the proxy object as written, path and value
		want      PromptPayParams
	}{
		{
			"mobile, whole baht",
			PromptPayParams{MobileNumber: "0812345678", Amount: "100"},
			"29.01=0066812345678",
			PromptPayParams{MobileNumber: "0812345678", Amount: "100.00"},
		},
		{
			"national ID, smallest amount",
			PromptPayParams{NationalID: "1234567890123", Amount: "0.01"},
			"29.02=1234567890123",
			PromptPayParams{NationalID: "1234567890123", Amount: "0.01"},
		},
		{
			"e-wallet, large amount",
			PromptPayParams{EWalletID: "140000123456789", Amount: "1000000"},
			"29.03=140000123456789",
			PromptPayParams{EWalletID: "140000123456789", Amount: "1000000.00"},
		},
		{
			"one decimal",
			PromptPayParams{MobileNumber: "0912345678", Amount: "4.2"},
			"29.01=0066912345678",
			PromptPayParams{MobileNumber: "0912345678", Amount: "4.20"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := PromptPay(tt.in)
			if err != nil {
				t.Fatalf("PromptPay: %v", err)
			}
			p, err := Decode(payload)
			if err != nil {
				t.Fatalf("Decode(%q): %v", payload, err)
			}
			if got := promptPayFromPayload(p); got != tt.want {
				t.Errorf("decoded\n got %+v\nwant %+v", got, tt.want)
			}
			path, want, _ := strings.Cut(tt.wantProxy, "=")
			if got, _ := lookup(p, path); got != want {
				t.Errorf("%s = %q, want %q", path, got, want)
			}
			if got, want := header(p), "01 12 764 TH"; got != want {
				t.Errorf("header = %q, want %q", got, want)
			}
			if got, _ := lookup(p, "29.00"); got != promptPayTransferAID {
				t.Errorf("29.00 = %q, want %q", got, promptPayTransferAID)
			}
		})
	}
}

func TestPromptPayRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   PromptPayParams
		want string
	}{
		{"no proxy", PromptPayParams{Amount: "1"}, `build PromptPay: invalid proxy: exactly one of MobileNumber, NationalID and EWalletID is required, got 0`},
		{"two proxies", PromptPayParams{MobileNumber: "0812345678", NationalID: "1234567890123", Amount: "1"}, `build PromptPay: invalid proxy: exactly one of MobileNumber, NationalID and EWalletID is required, got 2`},
		{"international mobile", PromptPayParams{MobileNumber: "+66812345678", Amount: "1"}, `build PromptPay: invalid MobileNumber: "+66812345678" is not 10 digits starting with 0`},
		{"short mobile", PromptPayParams{MobileNumber: "081234567", Amount: "1"}, `build PromptPay: invalid MobileNumber: "081234567" is not 10 digits starting with 0`},
		{"short national ID", PromptPayParams{NationalID: "123456789012", Amount: "1"}, `build PromptPay: invalid NationalID: "123456789012" is not 13 digits`},
		{"dashed national ID", PromptPayParams{NationalID: "1-2345-67890-12-3", Amount: "1"}, `build PromptPay: invalid NationalID: "1-2345-67890-12-3" is not 13 digits`},
		{"short e-wallet", PromptPayParams{EWalletID: "14000012345678", Amount: "1"}, `build PromptPay: invalid EWalletID: "14000012345678" is not 15 digits`},
		{"missing amount", PromptPayParams{MobileNumber: "0812345678"}, `build PromptPay: invalid Amount: is required`},
		{"satang fraction", PromptPayParams{MobileNumber: "0812345678", Amount: "1.005"}, `build PromptPay: invalid Amount: "1.005" has more than 2 decimal places`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := PromptPay(tt.in)
			if got := errText(err); got != tt.want {
				t.Errorf("PromptPay error = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("errors.Is(%v, ErrInvalidInput) = false", err)
			}
		})
	}
}

// promptPayBillFromPayload reads back the inputs of PromptPayBill from a
// decoded payload.
func promptPayBillFromPayload(p Payload) PromptPayBillParams {
	biller, _ := p.Template(promptPayBillTemplate)
	return PromptPayBillParams{
		BillerID:       biller.value(idPromptPayBiller),
		Reference1:     biller.value(idPromptPayReference1),
		Reference2:     biller.value(idPromptPayReference2),
		Amount:         p.Amount(),
		MerchantName:   p.MerchantName(),
		AdditionalData: p.AdditionalData(),
	}
}

func TestPromptPayBillRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   PromptPayBillParams
		want PromptPayBillParams
	}{
		{
			"required only",
			PromptPayBillParams{BillerID: "010555600000001", Reference1: "PI01HZX3K8", Amount: "1250"},
			PromptPayBillParams{BillerID: "010555600000001", Reference1: "PI01HZX3K8", Amount: "1250.00"},
		},
		{
			"everything at its longest",
			PromptPayBillParams{
				BillerID: "010555600000001", Reference1: "ABCDEFGHIJ0123456789", Reference2: "abcdefghij0123456789",
				Amount: "0.01", MerchantName: "ABCDEFGHIJKLMNOPQRSTUVWXY", AdditionalData: AdditionalData{TerminalLabel: "ABCDEFGHIJKLMNOPQRSTUVWXY"},
			},
			PromptPayBillParams{
				BillerID: "010555600000001", Reference1: "ABCDEFGHIJ0123456789", Reference2: "abcdefghij0123456789",
				Amount: "0.01", MerchantName: "ABCDEFGHIJKLMNOPQRSTUVWXY", AdditionalData: AdditionalData{TerminalLabel: "ABCDEFGHIJKLMNOPQRSTUVWXY"},
			},
		},
		{
			"large amount",
			PromptPayBillParams{BillerID: "099400016000012", Reference1: "R1", Reference2: "R2", Amount: "1000000"},
			PromptPayBillParams{BillerID: "099400016000012", Reference1: "R1", Reference2: "R2", Amount: "1000000.00"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, err := PromptPayBill(tt.in)
			if err != nil {
				t.Fatalf("PromptPayBill: %v", err)
			}
			p, err := Decode(payload)
			if err != nil {
				t.Fatalf("Decode(%q): %v", payload, err)
			}
			if got := promptPayBillFromPayload(p); got != tt.want {
				t.Errorf("decoded\n got %+v\nwant %+v", got, tt.want)
			}
			if got, want := header(p), "01 12 764 TH"; got != want {
				t.Errorf("header = %q, want %q", got, want)
			}
			if got, _ := lookup(p, "30.00"); got != promptPayBillAID {
				t.Errorf("30.00 = %q, want %q", got, promptPayBillAID)
			}
		})
	}
}

func TestPromptPayBillRejects(t *testing.T) {
	t.Parallel()
	valid := PromptPayBillParams{BillerID: "010555600000001", Reference1: "PI01HZX3K8", Amount: "1250"}
	tests := []struct {
		name string
		edit func(*PromptPayBillParams)
		want string
	}{
		{"short biller ID", func(p *PromptPayBillParams) { p.BillerID = "0105556000000" }, `build PromptPay bill: invalid BillerID: "0105556000000" is not 15 digits`},
		{"missing reference 1", func(p *PromptPayBillParams) { p.Reference1 = "" }, `build PromptPay bill: invalid Reference1: is required`},
		{"reference 1 over 20", func(p *PromptPayBillParams) { p.Reference1 = strings.Repeat("A", 21) }, `build PromptPay bill: invalid Reference1: has 21 characters, more than 20`},
		{"punctuation in reference 2", func(p *PromptPayBillParams) { p.Reference2 = "pi_01" }, `build PromptPay bill: invalid Reference2: "pi_01" has '_', not a letter or digit`},
		{"name over 25", func(p *PromptPayBillParams) { p.MerchantName = strings.Repeat("N", 26) }, `build PromptPay bill: invalid MerchantName: has 26 characters, more than 25`},
		{"amount with comma", func(p *PromptPayBillParams) { p.Amount = "1,250" }, `build PromptPay bill: invalid Amount: "1,250" is not a decimal number such as 100 or 100.50`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := valid
			tt.edit(&p)
			_, err := PromptPayBill(p)
			if got := errText(err); got != tt.want {
				t.Errorf("PromptPayBill error = %q, want %q", got, tt.want)
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("errors.Is(%v, ErrInvalidInput) = false", err)
			}
		})
	}
}
