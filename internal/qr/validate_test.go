package qr

import (
	"errors"
	"testing"
	"time"
)

// errText returns err's message, or "" for nil, so that tables can say
// "no error" as "".
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCheckAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		amount      string
		maxDecimals int
		want        string
	}{
		{"whole", "1000000", 0, ""},
		{"one", "1", 0, ""},
		{"smallest with decimals", "0.01", 2, ""},
		{"one decimal", "100.5", 2, ""},
		{"13 characters", "1234567890.12", 2, ""},
		{"empty", "", 2, `invalid Amount: is required`},
		{"14 characters", "12345678901.12", 2, `invalid Amount: "12345678901.12" has more than 13 characters`},
		{"letters", "12a", 2, `invalid Amount: "12a" is not a decimal number such as 100 or 100.50`},
		{"negative", "-5", 2, `invalid Amount: "-5" is not a decimal number such as 100 or 100.50`},
		{"comma", "1,000", 2, `invalid Amount: "1,000" is not a decimal number such as 100 or 100.50`},
		{"trailing mark", "1.", 2, `invalid Amount: "1." is not a decimal number such as 100 or 100.50`},
		{"leading mark", ".5", 2, `invalid Amount: ".5" is not a decimal number such as 100 or 100.50`},
		{"exponent", "1e3", 2, `invalid Amount: "1e3" is not a decimal number such as 100 or 100.50`},
		{"fraction in whole currency", "0.01", 0, `invalid Amount: "0.01" is not a whole number`},
		{"three decimals", "1.005", 2, `invalid Amount: "1.005" has more than 2 decimal places`},
		{"leading zero", "0100", 0, `invalid Amount: "0100" has a leading zero`},
		{"zero", "0", 0, `invalid Amount: "0" is not greater than zero`},
		{"zero with decimals", "0.00", 2, `invalid Amount: "0.00" is not greater than zero`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(checkAmount(tt.amount, tt.maxDecimals)); got != tt.want {
				t.Errorf("checkAmount(%q, %d) = %q, want %q", tt.amount, tt.maxDecimals, got, tt.want)
			}
		})
	}
}

func TestTwoDecimals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		amount  string
		want    string
		wantErr string
	}{
		{"100", "100.00", ""},
		{"100.5", "100.50", ""},
		{"0.01", "0.01", ""},
		{"1234567890", "1234567890.00", ""},
		{"12345678901", "", `invalid Amount: "12345678901.00" has more than 13 characters with two decimals`},
		{"1.005", "", `invalid Amount: "1.005" has more than 2 decimal places`},
	}
	for _, tt := range tests {
		t.Run(tt.amount, func(t *testing.T) {
			got, err := twoDecimals(tt.amount)
			if got != tt.want || errText(err) != tt.wantErr {
				t.Errorf("twoDecimals(%q) = %q, %v; want %q, %q", tt.amount, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		want string
	}{
		{"25 characters", "ABCDEFGHIJKLMNOPQRSTUVWXY", ""},
		{"26 characters", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", `invalid MerchantName: has 26 characters, more than 25`},
		{"empty", "", `invalid MerchantName: is required`},
		{"diacritics", "Cà phê", `invalid MerchantName: contains 'à', which is not printable ASCII`},
		{"control character", "A\nB", `invalid MerchantName: contains '\n', which is not printable ASCII`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(checkText("MerchantName", tt.s, 1, maxMerchantName)); got != tt.want {
				t.Errorf("checkText(%q) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

func TestCheckMillis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"now-ish", time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), ""},
		{"zero", time.Time{}, `invalid CreatedAt: is required`},
		{"too early for 13 digits", time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), `invalid CreatedAt: 2000-01-01T00:00:00Z is not between 2001 and 2286`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errText(checkMillis("CreatedAt", tt.t)); got != tt.want {
				t.Errorf("checkMillis(%v) = %q, want %q", tt.t, got, tt.want)
			}
		})
	}
}

func TestInputErrorIsInvalidInput(t *testing.T) {
	t.Parallel()
	_, err := VietQR(VietQRParams{BIN: "1"})
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("errors.Is(%v, ErrInvalidInput) = false, want true", err)
	}
	if got := inputField(err); got != "BIN" {
		t.Errorf("InputError.Field = %q, want %q", got, "BIN")
	}
}
