package rail

import (
	"context"
	"regexp"
	"testing"

	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/payfile"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// recorder is a rail that keeps the keys it was handed and the prefixes it
// listens to; as a FileRail it serves formats.
type recorder struct {
	submitted []string
	listened  []string
	formats   map[string]payfile.Format
}

func (r *recorder) Submit(_ context.Context, _ *store.Tx, t Transfer) error {
	r.submitted = append(r.submitted, t.Key)
	return nil
}

func (r *recorder) Listen(prefix string, _ OutcomeHandler) { r.listened = append(r.listened, prefix) }

func (r *recorder) FileFormat(_ context.Context, _ store.Querier, currency, method string) (payfile.Format, error) {
	return r.formats[currency+" "+RailMethod(method)], nil
}

// TestRouter: a transfer whose currency and method a bank-file rail serves
// goes to it, every other to the other rail, as it would without any; both
// rails hear every listener.
func TestRouter(t *testing.T) {
	t.Parallel()
	files := &recorder{formats: map[string]payfile.Format{"AUD au_bank_aud": payfile.ABA, "AUD settlements": payfile.ABA}}
	other := &recorder{}
	r := NewRouter(files, other)
	r.Listen("stl_", nil)
	for _, tr := range []Transfer{
		{Key: "T1", Currency: "AUD", Method: "au_bank_aud"},
		{Key: "T2", Currency: "AUD", Method: "au_payid_npp_aud"},
		{Key: "stl_S1", Currency: "AUD", Method: SettlementMethod},
		{Key: "trf_X1", Currency: "AUD", Method: TransferMethod},
		{Key: "T3", Currency: "JPY", Method: "jp_bank_jpy"},
	} {
		if err := r.Submit(context.Background(), nil, tr); err != nil {
			t.Fatal(err)
		}
	}
	if got := [2]string{join(files.submitted), join(other.submitted)}; got != [2]string{"T1 stl_S1", "T2 trf_X1 T3"} {
		t.Errorf("bank-file rail got %q, the other %q", got[0], got[1])
	}
	if join(files.listened) != "stl_" || join(other.listened) != "stl_" {
		t.Errorf("listeners: files %v, other %v; want stl_ on both", files.listened, other.listened)
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}

// TestDrawReference: a bank reference is 16 [A-Z0-9], ten digits where a
// zengin rail serves the transfer, and claimed once for its merchant.
func TestDrawReference(t *testing.T) {
	t.Parallel()
	files := &recorder{formats: map[string]payfile.Format{"JPY jp_bank_jpy": payfile.Zengin, "AUD au_bank_aud": payfile.ABA}}
	tests := []struct {
		name             string
		rail             Rail
		currency, method string
		want             *regexp.Regexp
	}{
		{"the sandbox network", &recorder{}, "AUD", "au_bank_aud", regexp.MustCompile(`^[A-Z0-9]{16}$`)},
		{"an aba rail", NewRouter(files, &recorder{}), "AUD", "au_bank_aud", regexp.MustCompile(`^[A-Z0-9]{16}$`)},
		{"a zengin rail", NewRouter(files, &recorder{}), "JPY", "jp_bank_jpy", regexp.MustCompile(`^[0-9]{10}$`)},
		{"no rail for JPY settlements", NewRouter(files, &recorder{}), "JPY", SettlementMethod, regexp.MustCompile(`^[A-Z0-9]{16}$`)},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		m, err := merchant.NewService(db, clock.Real{}).Create(context.Background(), merchant.CreateParams{Name: "Shop", Country: "AU",
			Timezone: "Australia/Sydney", Currencies: []string{"AUD"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				ref, err := store.Do(ctx, db, func(tx *store.Tx) (string, error) {
					return DrawReference(ctx, tx, tt.rail, m.MerchantID, tt.currency, tt.method)
				})
				if err != nil || !tt.want.MatchString(ref) {
					t.Fatalf("DrawReference = %q, %v; want %s", ref, err, tt.want)
				}
				owner, err := store.KeyOwner(ctx, db.Read(), KeyBankReference, ref)
				if err != nil || owner != m.MerchantID {
					t.Errorf("the reference's owner: %q, %v", owner, err)
				}
			})
		}
	})
}
