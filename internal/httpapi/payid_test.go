package httpapi

import (
	"reflect"
	"strings"
	"testing"

	"payd/internal/money"
	"payd/internal/payid"
	"payd/internal/payin"
)

// TestCreatePaymentStatesPayIDRules: create_payment's description states
// the bounds payid enforces, in words made from its constants and from
// au_payid_npp_aud's limits in the payin catalogue; the request's member
// docs state none of their own, which could drift.
func TestCreatePaymentStatesPayIDRules(t *testing.T) {
	a := New(Deps{Env: Sandbox, Metrics: NewMetrics()})
	var description string
	for _, rt := range a.routes {
		if rt.method == "POST" && rt.path == "/v1/merchants/create_payment" {
			description = rt.description
		}
	}
	method, err := payin.Lookup("au_payid_npp_aud")
	if err != nil {
		t.Fatal(err)
	}
	aud, err := money.Lookup("AUD")
	if err != nil {
		t.Fatal(err)
	}
	rules := payid.CreateRules()
	tests := []struct {
		name string
		want string
	}{
		{"amount's range, from the payin catalogue", money.Format(method.MinMinor, aud) + " to " + money.Format(method.MaxMinor, aud) + " AUD"},
		{"amount", "within " + rules.Amount},
		{"gst", "adds " + rules.GST},
		{"expired_at", "expired_at " + rules.Expiry},
		{"expired_at's default", "(default " + rules.DefaultExpiry + ")"},
		{"name", "name " + rules.Name},
		{"description", "description " + rules.Description},
		{"external_id", "external_id " + rules.ExternalID},
		{"emails", rules.Emails},
		{"metadata", "(" + rules.Metadata + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := description; !strings.Contains(got, tt.want) {
				t.Errorf("the description does not say %q:\n%s", tt.want, got)
			}
		})
	}
	for _, body := range []reflect.Type{reflect.TypeFor[payid.CreateRequest](), reflect.TypeFor[createPaymentBody]()} {
		for i := range body.NumField() {
			f := body.Field(i)
			t.Run("doc of "+body.Name()+"."+f.Name, func(t *testing.T) {
				if got := f.Tag.Get("doc"); strings.ContainsAny(got, "0123456789") {
					t.Errorf("the doc of %s.%s states a number of its own: %q", body.Name(), f.Name, got)
				}
			})
		}
	}
}
