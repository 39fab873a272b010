package httpapi

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"payd/internal/fault"
	"payd/internal/payout"
)

// TestV1Name: a member the engine names is the v1 body's member it stands
// for; the payout's own members, and anything that is no member of a
// transaction, are left as they are.
func TestV1Name(t *testing.T) {
	tests := []struct {
		engine, want string
	}{
		{"payout_transaction_details[0].first_name", "payout_transaction_details[0].payee"},
		{"payout_transaction_details[3].payout_method_params.account_name", "payout_transaction_details[3].payee"},
		{"payout_transaction_details[0].payout_method_params.pay_id", "payout_transaction_details[0].payid"},
		{"payout_transaction_details[12].payout_method_params.pay_id_type", "payout_transaction_details[12].payid_type"},
		{"payout_transaction_details[0].payout_method_params.bsb", "payout_transaction_details[0].bsb"},
		{"payout_transaction_details[0].payout_method_params.address", "payout_transaction_details[0].address"},
		{"payout_transaction_details[0].payout_method_params.first_name", "payout_transaction_details[0].first_name"},
		{"payout_transaction_details[0].payout_method_params", "payout_transaction_details[0].payout_method_params"},
		{"payout_transaction_details[0].amount", "payout_transaction_details[0].amount"},
		{"payout_transaction_details[0]", "payout_transaction_details[0]"},
		{"payout_transaction_details", "payout_transaction_details"},
		{"description", "description"},
		{"webhook_notification.endpoint_url", "webhook_notification.endpoint_url"},
		{"must be 6 digits", "must be 6 digits"},
	}
	for _, tt := range tests {
		t.Run(tt.engine, func(t *testing.T) {
			if got := v1Name(tt.engine); got != tt.want {
				t.Errorf("v1Name(%q) = %q, want %q", tt.engine, got, tt.want)
			}
		})
	}
}

// TestV1NamesMessage: an engine's error said in v1's members keeps its code
// and says its message again from them; one that names no member is left
// as it is.
func TestV1NamesMessage(t *testing.T) {
	outOfRange, _ := fault.As(fault.Fields{"payout_transaction_details[0].amount": "must be 1.00 to 1000000.00 AUD for au_bank_aud"}.Err())
	outOfRange.Code = fault.CodeAmountOutOfRange
	tests := []struct {
		name     string
		err      error
		wantCode string
		want     fault.Fields
	}{
		{"one member", fault.Fields{"payout_transaction_details[0].payout_method_params.pay_id": "is required for au_payid_npp_aud"}.Err(),
			fault.CodeValidation, fault.Fields{"payout_transaction_details[0].payid": "is required for au_payid_npp_aud"}},
		{"several members", fault.Fields{
			"payout_transaction_details[0].first_name":                       "must be at most 100 characters",
			"payout_transaction_details[1].payout_method_params.pay_id_type": "must be one of EMAIL, PHONE, ABN, ORGANISATION_ID",
			"description": "must be 5 to 140 characters",
		}.Err(), fault.CodeValidation, fault.Fields{
			"payout_transaction_details[0].payee":      "must be at most 100 characters",
			"payout_transaction_details[1].payid_type": "must be one of EMAIL, PHONE, ABN, ORGANISATION_ID",
			"description": "must be 5 to 140 characters",
		}},
		{"another code", outOfRange, fault.CodeAmountOutOfRange, fault.Fields{"payout_transaction_details[0].amount": "must be 1.00 to 1000000.00 AUD for au_bank_aud"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := fault.As(v1Names(tt.err))
			want, _ := fault.As(tt.want.Err())
			if got == nil || got.Code != tt.wantCode || got.Message != want.Message || strings.Contains(got.Message, "payout_method_params") {
				t.Fatalf("v1Names() = %v, want %s: %s", got, tt.wantCode, want.Message)
			}
			if !maps.Equal(got.Fields, want.Fields) {
				t.Errorf("v1Names() fields = %v, want %v", got.Fields, want.Fields)
			}
		})
	}
	plain := fault.Rule(fault.CodeInsufficientFunds, "the available balance is lower than the payout's 10.50 AUD")
	if got := v1Names(plain); got != error(plain) {
		t.Errorf("v1Names(%v) = %v, want it unchanged", plain, got)
	}
}

// TestPayoutV1RequestDocumented: the v1 body's documents state the bounds
// the code holds.
func TestPayoutV1RequestDocumented(t *testing.T) {
	tests := []struct {
		typ    reflect.Type
		member string
		want   string
	}{
		{reflect.TypeFor[payoutV1Request](), "ScheduledAt", fmt.Sprintf("at most %d days ahead", payout.MaxScheduleAheadDays)},
		{reflect.TypeFor[payoutV1Request](), "Description", fmt.Sprintf("%d to %d characters", payout.MinDescriptionLen, maxV1DescriptionLen)},
		{reflect.TypeFor[payoutV1Request](), "PayoutTransactionDetails", fmt.Sprintf("1 to %s transactions", thousands(payout.MaxTransactions))},
		{reflect.TypeFor[payoutV1Transaction](), "Payee", fmt.Sprintf("up to %d characters", maxV1PayeeLen)},
		{reflect.TypeFor[payoutV1Transaction](), "Address", fmt.Sprintf("Up to %d characters", maxV1AddressLen)},
	}
	for _, tt := range tests {
		t.Run(tt.typ.Name()+"."+tt.member, func(t *testing.T) {
			f, _ := tt.typ.FieldByName(tt.member)
			if doc := f.Tag.Get("doc"); !strings.Contains(doc, tt.want) {
				t.Errorf("doc %q does not say %q", doc, tt.want)
			}
		})
	}
}
