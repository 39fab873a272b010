package httpapi

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/payout"
	"payd/internal/store"
	"payd/internal/webhook"
)

// payoutV1Request is the body of POST /v1/payouts (CONTRACT §6): AUD
// payouts addressed by PayID or by BSB and account number, never both. It is
// another way into the one payout engine: the batch becomes an
// au_payid_npp_aud or au_bank_aud payout.Request, and the engine's problems
// come back named by this body's members (v1Names).
type payoutV1Request struct {
	Description              string                `json:"description" required:"true" doc:"5 to 140 characters." example:"Weekly payroll"`
	ScheduledAt              string                `json:"scheduled_at,omitempty" doc:"When to submit the payout (RFC 3339): in the future, at most 90 days ahead."`
	IsRetry                  bool                  `json:"is_retry,omitempty" doc:"true reuses the external_id of an earlier payout with at least one failed transaction (completed or not; a rejected or expired payout's have all failed), and pays only what this request carries; without it, or when no transaction of that payout failed, a repeated external_id is 409 ALREADY_EXISTS naming the existing payout."`
	ExternalID               string                `json:"external_id,omitempty" doc:"Up to 100 characters; unique among the merchant's v1 payouts unless is_retry." example:"payroll-2025-05"`
	WebhookNotification      webhook.Target        `json:"webhook_notification,omitempty"`
	PayoutTransactionDetails []payoutV1Transaction `json:"payout_transaction_details" required:"true" doc:"1 to 1,000 transactions, all addressed the same way."`
}

// payoutV1Transaction is one payment of a v1 payout.
type payoutV1Transaction struct {
	Payee         string      `json:"payee" required:"true" doc:"The recipient's name, up to 140 characters." example:"Jane Doe"`
	Email         string      `json:"email,omitempty"`
	Amount        money.Input `json:"amount" required:"true" doc:"AUD, at most 2 decimals." example:"125.50"`
	Address       string      `json:"address,omitempty" doc:"Up to 255 characters."`
	PayID         string      `json:"payid,omitempty" doc:"With payid_type: the recipient's PayID." example:"jane@example.com"`
	PayIDType     string      `json:"payid_type,omitempty" doc:"email, phone, abn or organisation_id (lower case in v1)." example:"email"`
	BSB           string      `json:"bsb,omitempty" doc:"With account_number: 6 digits." example:"062000"`
	AccountNumber string      `json:"account_number,omitempty" example:"12345678"`
}

// codeMixedAddressing refuses a v1 batch that mixes PayID and BSB
// addressing: one v1 payout is one engine payout of one method.
const codeMixedAddressing = "MIXED_ADDRESSING"

// Bounds of a v1 payout's members, the contract's (CONTRACT §6), where
// they are v1's own (the engine's apply besides).
const (
	maxV1DescriptionLen = 140
	maxV1PayeeLen       = 140
	maxV1AddressLen     = 255
)

// v1PayIDTypes maps v1's lower-case payid_type to the engine's spelling
// (payout.PayIDTypes).
var v1PayIDTypes = map[string]string{"email": "EMAIL", "phone": "PHONE", "abn": "ABN", "organisation_id": "ORGANISATION_ID"}

// addressing is how a v1 transaction names its recipient.
type addressing int

const (
	noAddress addressing = iota
	byPayID
	byAccount
)

func (t payoutV1Transaction) addressing() (addressing, bool) {
	payid := t.PayID != "" || t.PayIDType != ""
	account := t.BSB != "" || t.AccountNumber != ""
	switch {
	case payid && account:
		return noAddress, false
	case payid:
		return byPayID, true
	case account:
		return byAccount, true
	}
	return noAddress, true
}

// v1TransactionName names a transaction of a v1 body.
func v1TransactionName(i int) string { return fmt.Sprintf("payout_transaction_details[%d]", i) }

// checkAddressing applies the v1 rule that a transaction is addressed one
// way and a batch (a request or a file) one way throughout: both on one
// transaction, or a batch mixing them, is 422 MIXED_ADDRESSING naming the
// transactions.
func checkAddressing(txs []payoutV1Transaction) error {
	f := fault.Fields{}
	first, firstAt := noAddress, -1
	for i, t := range txs {
		a, ok := t.addressing()
		if !ok {
			f.Add(v1TransactionName(i), "carries both payid and bsb/account_number; give one")
			continue
		}
		if a == noAddress {
			continue
		}
		if first == noAddress {
			first, firstAt = a, i
			continue
		}
		if a != first {
			f.Add(v1TransactionName(i), fmt.Sprintf("is addressed differently from %s: one payout uses payid throughout or bsb and account_number throughout", v1TransactionName(firstAt)))
		}
	}
	if err := f.Err(); err != nil {
		e, _ := fault.As(err)
		e.Code = codeMixedAddressing
		return e
	}
	return nil
}

// engineRequest turns a v1 body into the engine's request, each transaction
// mapped to au_payid_npp_aud or au_bank_aud, and adds the problems only v1
// has to f, named by the v1 body's members.
func (r payoutV1Request) engineRequest(f fault.Fields) (payout.Request, error) {
	if err := checkAddressing(r.PayoutTransactionDetails); err != nil {
		return payout.Request{}, err
	}
	if p := payout.DescriptionProblem(r.Description, maxV1DescriptionLen); p != "" {
		f.Add("description", p) // v1's bound, which wins over the engine's
	}
	out := payout.Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: r.Description, ScheduledAt: r.ScheduledAt,
		ExternalID: r.ExternalID, WebhookNotification: r.WebhookNotification}
	for i, t := range r.PayoutTransactionDetails {
		prefix := v1TransactionName(i) + "."
		if n := utf8.RuneCountInString(t.Payee); n > maxV1PayeeLen || strings.TrimSpace(t.Payee) == "" {
			f.Add(prefix+"payee", fmt.Sprintf("must be 1 to %d characters", maxV1PayeeLen))
		}
		if utf8.RuneCountInString(t.Address) > maxV1AddressLen {
			f.Add(prefix+"address", fmt.Sprintf("must be at most %d characters", maxV1AddressLen))
		}
		params := map[string]any{"account_name": t.Payee}
		a, _ := t.addressing()
		switch a {
		case byPayID:
			out.PayoutMethodName = "au_payid_npp_aud"
			params = map[string]any{"pay_id": t.PayID, "pay_id_type": t.PayIDType}
			if engine, ok := v1PayIDTypes[t.PayIDType]; ok {
				params["pay_id_type"] = engine
			} else if _, upper := v1PayIDTypes[strings.ToLower(t.PayIDType)]; upper {
				f.Add(prefix+"payid_type", fmt.Sprintf("must be lower case in v1 (email, phone, abn, organisation_id); %q is the v2 spelling", t.PayIDType))
			} else {
				f.Add(prefix+"payid_type", "must be email, phone, abn or organisation_id")
			}
		case byAccount:
			params["bsb"], params["account_number"] = t.BSB, t.AccountNumber
		default:
			f.Add(prefix+"payid", "give payid and payid_type, or bsb and account_number")
		}
		if t.Address != "" {
			params["address"] = t.Address
		}
		out.PayoutTransactionDetails = append(out.PayoutTransactionDetails, payout.TransactionRequest{FirstName: t.Payee, Email: t.Email,
			Amount: t.Amount, PayoutMethodParams: params})
	}
	return out, nil
}

// createPayoutV1 accepts a v1 payout: the v1 rules (AUD only, addressing,
// payid_type in lower case, v1's bounds), then the payout service's
// (external_id unique unless is_retry, then the engine's), its problems
// named by the v1 body's members. When v1's own rules refuse, the engine's
// problems are reported with them, all at once.
func (a *API) createPayoutV1(ctx context.Context, tx *store.Tx, p merchant.Principal, r payoutV1Request) (payout.V1Payout, error) {
	if p.Currency != "AUD" {
		return payout.V1Payout{}, fault.Rule(fault.CodeCurrency, "v1 payouts are in AUD; this app's account is %s", p.Currency)
	}
	v1 := fault.Fields{}
	req, err := r.engineRequest(v1)
	if err != nil {
		return payout.V1Payout{}, err
	}
	if len(v1) > 0 {
		v1.AddErr(v1Names(a.Payouts.ValidateRequest(p, req)))
		return payout.V1Payout{}, v1.Err()
	}
	created, err := a.Payouts.CreateV1(ctx, tx, p, req, r.IsRetry)
	return created, v1Names(err)
}

// engineMember is how the engine names a member of a transaction of its
// request: payout_transaction_details[i], then the member, a method
// parameter under payout_method_params.
var engineMember = regexp.MustCompile(`^(payout_transaction_details\[\d+\])\.(payout_method_params\.)?(.+)$`)

// v1Members and v1Params are the v1 transaction's members that the
// engine's members and method parameters stand for: the method's parameters
// are members of the v1 transaction itself, and the payee is both the first
// name and the account's name.
var (
	v1Members = map[string]string{"first_name": "payee"}
	v1Params  = map[string]string{"account_name": "payee", "pay_id": "payid", "pay_id_type": "payid_type"}
)

// v1Name is the v1 body's name of a member the engine names; anything else
// (a member of the payout itself, or prose) is left as it is.
func v1Name(engine string) string {
	m := engineMember.FindStringSubmatch(engine)
	if m == nil {
		return engine
	}
	names := v1Members
	if m[2] != "" {
		names = v1Params
	}
	if v1, ok := names[m[3]]; ok {
		return m[1] + "." + v1
	}
	return m[1] + "." + m[3]
}

// v1Names says an engine's error in the v1 body's members: each member
// renamed (v1Name), and the message said again from them as
// fault.Fields.Err says it, so that message and members agree.
func v1Names(err error) error {
	return renameMembers(err, v1Name)
}

// renameMembers says an error again under other names: each member it
// names, and what each says (which may name another), renamed by name; its
// code and kind kept, its message said again from the renamed members as
// fault.Fields.Err says it. An error that names no member is left as it is.
func renameMembers(err error, name func(string) string) error {
	e, ok := fault.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	out := *e
	out.Fields = map[string]string{}
	for k, v := range e.Fields {
		out.Fields[name(k)] = name(v)
	}
	said, _ := fault.As(fault.Fields(out.Fields).Err())
	out.Message = said.Message
	return &out
}
