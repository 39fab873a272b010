package payid_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/payid"
	"payd/internal/server/servertest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// refusal is what a refused call answers: its code, and the member it
// names ("" for none).
type refusal struct {
	code, member string
}

func refusalOf(err error) refusal {
	if err == nil {
		return refusal{}
	}
	e, ok := fault.As(err)
	if !ok {
		return refusal{code: "not a fault: " + err.Error()}
	}
	member := ""
	for k := range e.Fields {
		member = k
	}
	if len(e.Fields) > 1 {
		member = "several members"
	}
	return refusal{e.Code, member}
}

// appIn makes a merchant of country with an account of currency and
// returns its app's principal.
func appIn(t *testing.T, e *servertest.Env, country, currency string) merchant.Principal {
	t.Helper()
	ctx := context.Background()
	c, err := e.Merchants.Create(ctx, merchant.CreateParams{Name: "Shop", Country: country, Timezone: "Australia/Sydney", Currencies: []string{currency}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Merchants.Authenticate(ctx, c.Accounts[0].AppID, c.Accounts[0].SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCreateRules: a payment request's rules (CONTRACT §9), each refusal
// with its code and the member it names; nothing is created.
func TestCreateRules(t *testing.T) {
	t.Parallel()
	ok := func(edit func(*payid.CreateRequest)) payid.CreateRequest {
		r := payid.CreateRequest{Amount: "100.00"}
		edit(&r)
		return r
	}
	at := func(d time.Duration) clock.Input { return clock.Input{T: servertest.Start.Add(d), Set: true} }
	tests := []struct {
		name string
		req  payid.CreateRequest
		want refusal
	}{
		{"name over 200 characters", ok(func(r *payid.CreateRequest) { r.Name = strings.Repeat("n", 201) }), refusal{fault.CodeValidation, "name"}},
		{"description over 255 characters", ok(func(r *payid.CreateRequest) { r.Description = strings.Repeat("d", 256) }), refusal{fault.CodeValidation, "description"}},
		{"external_id over 100 characters", ok(func(r *payid.CreateRequest) { r.ExternalID = strings.Repeat("e", 101) }), refusal{fault.CodeValidation, "external_id"}},
		{"eleven emails", ok(func(r *payid.CreateRequest) {
			for range 11 {
				r.Emails = append(r.Emails, "a@example.com")
			}
		}), refusal{fault.CodeValidation, "emails"}},
		{"an email that is none", ok(func(r *payid.CreateRequest) { r.Emails = payid.Emails{"a@example.com", "nope"} }), refusal{fault.CodeValidation, "emails[1]"}},
		{"an empty email", ok(func(r *payid.CreateRequest) { r.Emails = payid.Emails{""} }), refusal{fault.CodeValidation, "emails[0]"}},
		{"expiring in 10 minutes", ok(func(r *payid.CreateRequest) { r.ExpiredAt = at(10 * time.Minute) }), refusal{fault.CodeValidation, "expired_at"}},
		{"expiring in 31 days", ok(func(r *payid.CreateRequest) { r.ExpiredAt = at(31 * 24 * time.Hour) }), refusal{fault.CodeValidation, "expired_at"}},
		{"metadata nested too deep", ok(func(r *payid.CreateRequest) {
			r.Metadata = map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": map[string]any{"f": 1}}}}}}
		}), refusal{fault.CodeValidation, "metadata"}},
		{"an amount of three decimals", ok(func(r *payid.CreateRequest) { r.Amount = "100.001" }), refusal{fault.CodeValidation, "amount"}},
		{"an amount under the method's", ok(func(r *payid.CreateRequest) { r.Amount = "19.99" }), refusal{fault.CodeAmountOutOfRange, ""}},
		{"an amount over the method's", ok(func(r *payid.CreateRequest) { r.Amount = "10000.01" }), refusal{fault.CodeAmountOutOfRange, ""}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		p := e.Merchant(t, "AUD")["AUD"]
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(context.Background(), e.DB, e.PayIDs.Create, p, tt.req)
				if got := refusalOf(err); got != tt.want {
					t.Errorf("Create() = %v, want %+v", err, tt.want)
				}
			})
		}
		if _, total, err := e.PayIDs.List(context.Background(), p, payid.ListQuery{Page: 1, PerPage: 10}); err != nil || total != 0 {
			t.Errorf("after refusals: %d requests (%v), want none", total, err)
		}
	})
}

// TestCreateCurrencyAndGST: PayID takes AUD, and gst only from an AU
// merchant, where it adds 10 % to what the customer pays.
func TestCreateCurrencyAndGST(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		tests := []struct {
			name      string
			p         merchant.Principal
			want      refusal
			wantTotal string
		}{
			{"an AU merchant's AUD app", appIn(t, e, "AU", "AUD"), refusal{}, "110.00"},
			{"an AU merchant's USD app", appIn(t, e, "AU", "USD"), refusal{fault.CodeCurrency, ""}, ""},
			{"a NZ merchant's AUD app", appIn(t, e, "NZ", "AUD"), refusal{"GST_NOT_ALLOWED", ""}, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, tt.p, payid.CreateRequest{Amount: "100.00", GST: true})
				if refusalOf(err) != tt.want || (err == nil && got.Total.String() != tt.wantTotal) {
					t.Errorf("Create() = total %q, %v; want %+v and a total of %q", got.Total.String(), err, tt.want, tt.wantTotal)
				}
			})
		}
	})
}

// TestCreateStaticRules: a static PayID's rules, each refusal with its code
// and the member it names; a customer has one.
func TestCreateStaticRules(t *testing.T) {
	t.Parallel()
	ok := func(edit func(*payid.StaticRequest)) payid.StaticRequest {
		r := payid.StaticRequest{Name: "Jane Payer", Email: "jane@example.com", ExternalID: "cus-1"}
		edit(&r)
		return r
	}
	tests := []struct {
		name string
		req  payid.StaticRequest
		want refusal
	}{
		{"no name", ok(func(r *payid.StaticRequest) { r.Name = "  " }), refusal{fault.CodeValidation, "name"}},
		{"no external_id", ok(func(r *payid.StaticRequest) { r.ExternalID = "" }), refusal{fault.CodeValidation, "external_id"}},
		{"an email that is none", ok(func(r *payid.StaticRequest) { r.Email = "jane" }), refusal{fault.CodeValidation, "email"}},
		{"a phone that is none", ok(func(r *payid.StaticRequest) { r.Phone = "12" }), refusal{fault.CodeValidation, "phone"}},
		{"a zip code over 20 characters", ok(func(r *payid.StaticRequest) { r.ZipCode = strings.Repeat("1", 21) }), refusal{fault.CodeValidation, "zip_code"}},
		{"a prefix ending in a dot", ok(func(r *payid.StaticRequest) { r.PrefixStaticPayID = "jane." }), refusal{fault.CodeValidation, "prefix_static_payid"}},
		{"a prefix over 20 characters", ok(func(r *payid.StaticRequest) { r.PrefixStaticPayID = strings.Repeat("j", 21) }), refusal{fault.CodeValidation, "prefix_static_payid"}},
		{"a prefix of other letters", ok(func(r *payid.StaticRequest) { r.PrefixStaticPayID = "jané" }), refusal{fault.CodeValidation, "prefix_static_payid"}},
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(ctx, e.DB, e.PayIDs.CreateStatic, p, tt.req)
				if got := refusalOf(err); got != tt.want {
					t.Errorf("CreateStatic() = %v, want %+v", err, tt.want)
				}
			})
		}
		first, err := storetest.Write(ctx, e.DB, e.PayIDs.CreateStatic, p, ok(func(r *payid.StaticRequest) { r.PrefixStaticPayID = "Jane.Doe" }))
		if err != nil || !strings.HasPrefix(first.StaticPayID, "jane.doe.") {
			t.Fatalf("CreateStatic() = %+v, %v; want a PayID starting jane.doe.", first, err)
		}
		_, err = storetest.Write(ctx, e.DB, e.PayIDs.CreateStatic, p, ok(func(*payid.StaticRequest) {}))
		if got := refusalOf(err); got != (refusal{fault.CodeAlreadyExists, ""}) {
			t.Errorf("a second static PayID for the customer: %v, want %s", err, fault.CodeAlreadyExists)
		}
		usd := appIn(t, e, "AU", "USD")
		_, err = storetest.Write(ctx, e.DB, e.PayIDs.CreateStatic, usd, ok(func(r *payid.StaticRequest) { r.ExternalID = "cus-2" }))
		if got := refusalOf(err); got != (refusal{fault.CodeCurrency, ""}) {
			t.Errorf("a USD app: %v, want %s", err, fault.CodeCurrency)
		}
	})
}

// TestReceiveAndReturnRules: a payment names a PayID the registry knows and
// not one deregistered; a return names a received request and says why.
func TestReceiveAndReturnRules(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		p := e.Merchant(t, "AUD")["AUD"]
		req, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: "100.00"})
		if err != nil {
			t.Fatal(err)
		}
		cancelled, err := storetest.Write(ctx, e.DB, e.PayIDs.Create, p, payid.CreateRequest{Amount: "100.00"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := storetest.Write(ctx, e.DB, e.PayIDs.Cancel, p, payid.CancelRequest{ID: cancelled.ID}); err != nil {
			t.Fatal(err)
		}
		receives := []struct {
			name string
			pay  payid.Payment
			want refusal
		}{
			{"no PayID", payid.Payment{Amount: "100.00"}, refusal{fault.CodeValidation, "payid"}},
			{"a payer's name over 140 characters", payid.Payment{PayID: req.RequestPayID, Amount: "100.00", PayerName: strings.Repeat("p", 141)}, refusal{fault.CodeValidation, "payer_name"}},
			{"an amount of three decimals", payid.Payment{PayID: req.RequestPayID, Amount: "100.001"}, refusal{fault.CodeValidation, "amount"}},
			{"an unknown PayID", payid.Payment{PayID: "nobody@example.com", Amount: "100.00"}, refusal{fault.CodeNotFound, ""}},
			{"a cancelled request's PayID", payid.Payment{PayID: cancelled.RequestPayID, Amount: "100.00"}, refusal{payid.CodeDeregistered, ""}},
		}
		for _, tt := range receives {
			t.Run(tt.name, func(t *testing.T) {
				_, err := store.Do(ctx, e.DB, func(tx *store.Tx) (payid.Receipt, error) { return e.PayIDs.Receive(ctx, tx, tt.pay) })
				if got := refusalOf(err); got != tt.want {
					t.Errorf("Receive() = %v, want %+v", err, tt.want)
				}
			})
		}
		returns := []struct {
			name string
			req  payid.ReturnRequest
			want refusal
		}{
			{"no id", payid.ReturnRequest{Reason: "Order cancelled"}, refusal{fault.CodeValidation, "id"}},
			{"a reason under 5 characters", payid.ReturnRequest{ID: req.ID, Reason: " no "}, refusal{fault.CodeValidation, "reason"}},
			{"a request not received", payid.ReturnRequest{ID: req.ID, Reason: "Order cancelled"}, refusal{fault.CodeInvalidState, ""}},
		}
		for _, tt := range returns {
			t.Run(tt.name, func(t *testing.T) {
				_, err := storetest.Write(ctx, e.DB, e.PayIDs.Return, p, tt.req)
				if got := refusalOf(err); got != tt.want {
					t.Errorf("Return() = %v, want %+v", err, tt.want)
				}
			})
		}
		if b := e.Balance(t, p); b.Available != 0 || b.Incoming != 0 || b.Outgoing != 0 {
			t.Errorf("refusals moved money: %+v", b)
		}
	})
}
