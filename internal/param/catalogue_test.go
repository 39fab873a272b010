package param_test

import (
	"slices"
	"strings"
	"testing"

	"payd/internal/param"
)

type method struct {
	Code     string
	Currency string
	prepared bool
}

func prepare(m *method) string {
	m.prepared = true
	return m.Code
}

// TestCatalogueLookup: a method is found by its code, prepared; an unknown
// code is an error naming it and the catalogue's kind.
func TestCatalogueLookup(t *testing.T) {
	c := param.NewCatalogue("payout", []method{{Code: "au_bank_aud", Currency: "AUD"}, {Code: "jp_bank_jpy", Currency: "JPY"}}, prepare)
	tests := []struct {
		code    string
		want    method
		wantErr string
	}{
		{"au_bank_aud", method{Code: "au_bank_aud", Currency: "AUD", prepared: true}, ""},
		{"jp_bank_jpy", method{Code: "jp_bank_jpy", Currency: "JPY", prepared: true}, ""},
		{"AU_BANK_AUD", method{}, `"AU_BANK_AUD" is not a payout method`},
		{"", method{}, `"" is not a payout method`},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			got, err := c.Lookup(tt.code)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("Lookup(%q) = %+v, %q; want %+v, %q", tt.code, got, gotErr, tt.want, tt.wantErr)
			}
			if gotHas, wantHas := c.Has(tt.code), tt.wantErr == ""; gotHas != wantHas {
				t.Errorf("Has(%q) = %v, want %v", tt.code, gotHas, wantHas)
			}
		})
	}
}

// TestCatalogueAllKeepsItsOrder: All lists every method, prepared, in the
// order of the table.
func TestCatalogueAllKeepsItsOrder(t *testing.T) {
	c := param.NewCatalogue("payin", []method{{Code: "b"}, {Code: "a"}, {Code: "c"}}, prepare)
	var got []string
	for m := range c.All() {
		if !m.prepared {
			t.Errorf("%s is not prepared", m.Code)
		}
		got = append(got, m.Code)
	}
	if want := []string{"b", "a", "c"}; !slices.Equal(got, want) {
		t.Errorf("All = %v, want %v", got, want)
	}
}

// TestCatalogueRefusesACodeTwice: a method defined twice panics at start,
// naming the catalogue and the code.
func TestCatalogueRefusesACodeTwice(t *testing.T) {
	defer func() {
		got, _ := recover().(string)
		if want := "payin catalogue: a twice"; !strings.Contains(got, want) {
			t.Errorf("panic %q, want %q", got, want)
		}
	}()
	param.NewCatalogue("payin", []method{{Code: "a"}, {Code: "b"}, {Code: "a"}}, prepare)
}
