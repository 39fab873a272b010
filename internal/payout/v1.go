package payout

import (
	"context"
	"fmt"
	"strings"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
	"payd/internal/webhook"
)

// V1Request is the body of POST /v1/payouts (CONTRACT §6): AUD payouts
// addressed by PayID or by BSB and account number, never both. It is another
// way into the one payout engine: the batch becomes an au_payid_npp_aud or
// au_bank_aud payout.
type V1Request struct {
	Description              string          `json:"description" required:"true" doc:"5 to 140 characters." example:"Weekly payroll"`
	ScheduledAt              string          `json:"scheduled_at,omitempty" doc:"When to submit the payout (RFC 3339): in the future, at most 90 days ahead."`
	IsRetry                  bool            `json:"is_retry,omitempty" doc:"true reuses the external_id of an earlier payout with at least one failed transaction (completed or not; a rejected or expired payout's have all failed), and pays only what this request carries; without it, or when no transaction of that payout failed, a repeated external_id is 409 ALREADY_EXISTS naming the existing payout."`
	ExternalID               string          `json:"external_id,omitempty" doc:"Up to 100 characters; unique among the merchant's v1 payouts unless is_retry." example:"payroll-2025-05"`
	WebhookNotification      webhook.Target  `json:"webhook_notification,omitempty"`
	PayoutTransactionDetails []V1Transaction `json:"payout_transaction_details" required:"true" doc:"1 to 1,000 transactions, all addressed the same way."`
}

// V1Transaction is one payment of a v1 payout.
type V1Transaction struct {
	Payee         string      `json:"payee" required:"true" doc:"The recipient's name, up to 140 characters." example:"Jane Doe"`
	Email         string      `json:"email,omitempty"`
	Amount        money.Input `json:"amount" required:"true" doc:"AUD, at most 2 decimals." example:"125.50"`
	Address       string      `json:"address,omitempty" doc:"Up to 255 characters."`
	PayID         string      `json:"payid,omitempty" doc:"With payid_type: the recipient's PayID." example:"jane@example.com"`
	PayIDType     string      `json:"payid_type,omitempty" doc:"email, phone, abn or organisation_id (lower case in v1)." example:"email"`
	BSB           string      `json:"bsb,omitempty" doc:"With account_number: 6 digits." example:"062000"`
	AccountNumber string      `json:"account_number,omitempty" example:"12345678"`
}

// V1Payout is the v1 payout record: the detail endpoint's answer and the
// body of its webhooks.
type V1Payout struct {
	ID                  int64           `json:"id"`
	UUID                string          `json:"uuid"`
	Currency            string          `json:"currency" enum:"AUD"`
	Description         string          `json:"description"`
	TotalAmount         money.String    `json:"total_amount"`
	TotalFees           money.String    `json:"total_fees"`
	Status              Status          `json:"status" enum:"held,scheduled,processing,completed,rejected,expired"`
	ScheduledAt         *clock.Time     `json:"scheduled_at"`
	IsRetry             bool            `json:"is_retry"`
	ExternalID          string          `json:"external_id"`
	WebhookNotification *webhook.Target `json:"webhook_notification"`
	Approval            *Approval       `json:"approval"`
	Transactions        []V1TxRecord    `json:"payout_transactions"`
	CreatedAt           clock.Time      `json:"created_at"`
	UpdatedAt           clock.Time      `json:"updated_at"`
}

// V1TxRecord is one transaction of a v1 payout record.
type V1TxRecord struct {
	UUID          string       `json:"uuid"`
	Payee         string       `json:"payee"`
	Email         string       `json:"email"`
	Amount        money.String `json:"amount"`
	Fee           money.String `json:"fee"`
	Address       string       `json:"address"`
	PayID         *string      `json:"payid"`
	PayIDType     *string      `json:"payid_type"`
	BSB           *string      `json:"bsb"`
	AccountNumber *string      `json:"account_number"`
	Status        TxStatus     `json:"status" enum:"pending,done,failed"`
	FailureReason string       `json:"failure_reason"`
	BalanceID     string       `json:"balance_id"`
}

// Error codes of v1 payouts.
const (
	CodeMixedAddressing = "MIXED_ADDRESSING"
)

// v1 bounds.
const maxV1DescriptionLen = 140

// v1PayIDTypes maps v1's lower-case payid_type to v2's spelling.
var v1PayIDTypes = map[string]string{"email": "EMAIL", "phone": "PHONE", "abn": "ABN", "organisation_id": "ORGANISATION_ID"}

// addressing is how a v1 transaction names its recipient.
type addressing int

const (
	noAddress addressing = iota
	byPayID
	byAccount
)

func (t V1Transaction) addressing() (addressing, bool) {
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

// CheckAddressing applies the v1 rule that a transaction is addressed one way
// and a batch (a request or a file) one way throughout: both on one
// transaction, or a batch mixing them, is 422 MIXED_ADDRESSING naming the
// members (name gives each transaction's member prefix).
func CheckAddressing(txs []V1Transaction, name func(i int) string) error {
	f := fault.Fields{}
	first, firstAt := noAddress, -1
	for i, t := range txs {
		a, ok := t.addressing()
		if !ok {
			f.Add(name(i), "carries both payid and bsb/account_number; give one")
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
			f.Add(name(i), fmt.Sprintf("is addressed differently from %s: one payout uses payid throughout or bsb and account_number throughout", name(firstAt)))
		}
	}
	if err := f.Err(); err != nil {
		e, _ := fault.As(err)
		e.Code = CodeMixedAddressing
		return e
	}
	return nil
}

// toV2 turns a v1 request into the engine's request, each transaction
// mapped to au_payid_npp_aud or au_bank_aud, and adds the problems only v1
// has to f.
func (r V1Request) toV2(f fault.Fields) (Request, error) {
	name := func(i int) string { return fmt.Sprintf("payout_transaction_details[%d]", i) }
	if err := CheckAddressing(r.PayoutTransactionDetails, name); err != nil {
		return Request{}, err
	}
	if p := descriptionProblem(r.Description, maxV1DescriptionLen); p != "" {
		f.Add("description", p) // v1's bound, which wins over the engine's
	}
	out := Request{Currency: "AUD", PayoutMethodName: "au_bank_aud", Description: r.Description, ScheduledAt: r.ScheduledAt,
		ExternalID: r.ExternalID, WebhookNotification: r.WebhookNotification}
	for i, t := range r.PayoutTransactionDetails {
		prefix := name(i) + "."
		if len([]rune(t.Payee)) > maxNameLen+40 || strings.TrimSpace(t.Payee) == "" {
			f.Add(prefix+"payee", "must be 1 to 140 characters")
		}
		if len([]rune(t.Address)) > 255 {
			f.Add(prefix+"address", "must be at most 255 characters")
		}
		params := map[string]any{"account_name": t.Payee}
		a, _ := t.addressing()
		switch a {
		case byPayID:
			out.PayoutMethodName = "au_payid_npp_aud"
			params = map[string]any{"pay_id": t.PayID, "pay_id_type": t.PayIDType}
			if v2, ok := v1PayIDTypes[t.PayIDType]; ok {
				params["pay_id_type"] = v2
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
		out.PayoutTransactionDetails = append(out.PayoutTransactionDetails, TransactionRequest{FirstName: t.Payee, Email: t.Email,
			Amount: t.Amount, PayoutMethodParams: params})
	}
	return out, nil
}

// CreateV1 accepts a v1 payout: the v1 rules (addressing, payid_type in
// lower case, external_id unique unless is_retry), then the engine's.
func (s *Service) CreateV1(ctx context.Context, tx *store.Tx, p merchant.Principal, r V1Request) (V1Payout, error) {
	if p.Currency != "AUD" {
		return V1Payout{}, fault.Rule(fault.CodeCurrency, "v1 payouts are in AUD; this app's account is %s", p.Currency)
	}
	v1 := fault.Fields{}
	req, err := r.toV2(v1)
	if err != nil {
		return V1Payout{}, err
	}
	if len(v1) > 0 {
		// Report the engine's problems with v1's, all at once.
		if _, err := s.validate(p, &req, s.clock.Of(p)); err != nil {
			if e, ok := fault.As(v1Names(err)); ok {
				for k, v := range e.Fields {
					v1.Add(k, v)
				}
			}
		}
		return V1Payout{}, v1.Err()
	}
	if err := s.checkExternalID(ctx, tx, p.MerchantID, r.ExternalID, r.IsRetry); err != nil {
		return V1Payout{}, err
	}
	created, err := s.create(ctx, tx, p, req, Maker{Label: "app:" + p.AppID}, "v1", r.IsRetry)
	if err != nil {
		return V1Payout{}, v1Names(err)
	}
	return created.v1View(), nil
}

// v1Names renames the engine's members in an error to v1's: the method's
// parameters are members of the v1 transaction itself.
func v1Names(err error) error {
	e, ok := fault.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	names := strings.NewReplacer(".payout_method_params.pay_id_type", ".payid_type", ".payout_method_params.pay_id", ".payid",
		".payout_method_params.account_name", ".payee", ".payout_method_params.", ".", ".first_name", ".payee")
	out := *e
	out.Fields = map[string]string{}
	for k, v := range e.Fields {
		out.Fields[names.Replace(k)] = v
	}
	out.Message = names.Replace(e.Message)
	return &out
}

// checkExternalID applies the v1 rule on external_id: unique among the
// merchant's v1 payouts, unless is_retry reuses the id of a payout with a
// failed transaction (the retry pays only what it carries). Concurrent
// creates with one id are made one at a time.
func (s *Service) checkExternalID(ctx context.Context, tx *store.Tx, merchantID, externalID string, isRetry bool) error {
	if externalID == "" {
		if isRetry {
			return fault.Field("is_retry", "needs the external_id of the payout it retries")
		}
		return nil
	}
	if err := tx.LockKey(ctx, "payout.external_id", merchantID+"\x00"+externalID); err != nil {
		return fmt.Errorf("lock external_id: %w", err)
	}
	var uuid string
	err := tx.QueryRowContext(ctx, `SELECT uuid FROM payouts WHERE merchant_id = $1 AND external_id = $2 AND api_version = 'v1'
		ORDER BY id DESC LIMIT 1`, merchantID, externalID).Scan(&uuid)
	if store.IsNoRows(err) {
		if isRetry {
			return fault.Field("is_retry", fmt.Sprintf("no earlier payout has external_id %q to retry", externalID))
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("check external_id: %w", err)
	}
	earlier, err := s.get(ctx, tx, merchantID, uuid)
	if err != nil {
		return err
	}
	if !isRetry {
		return fault.New(fault.Conflict, fault.CodeAlreadyExists, "payout %d (uuid %s) already has external_id %q; send is_retry: true to retry a payout with a failed transaction",
			earlier.id, earlier.uuid, externalID)
	}
	if !earlier.hasFailed() {
		return fault.New(fault.Conflict, fault.CodeAlreadyExists, "payout %d (uuid %s) with external_id %q has no failed transaction (it is %s); only a payout with a failed transaction may be retried",
			earlier.id, earlier.uuid, externalID, earlier.status)
	}
	return nil
}

// hasFailed reports whether a transaction of r failed, which is what lets
// is_retry reuse r's external_id (CONTRACT §24), whether r is completed or
// still processing the others. A rejected or expired payout's transactions
// have all failed.
func (r row) hasFailed() bool {
	for _, t := range r.txs {
		if t.status == TxFailed {
			return true
		}
	}
	return false
}

// GetV1 reads one of the caller's v1 payouts by id (which wins) or uuid.
func (s *Service) GetV1(ctx context.Context, p merchant.Principal, id int64, uuid string) (V1Payout, error) {
	q := s.db.Read()
	if id != 0 {
		if err := q.QueryRowContext(ctx, `SELECT uuid FROM payouts WHERE id = $1 AND merchant_id = $2 AND api_version = 'v1'`,
			id, p.MerchantID).Scan(&uuid); err != nil {
			if store.IsNoRows(err) {
				return V1Payout{}, fault.NotFoundf("no payout %d", id)
			}
			return V1Payout{}, fmt.Errorf("read payout %d: %w", id, err)
		}
	}
	r, err := s.get(ctx, q, p.MerchantID, uuid)
	if err != nil {
		return V1Payout{}, err
	}
	if r.apiVersion != "v1" {
		return V1Payout{}, notFound(uuid)
	}
	return r.v1View(), nil
}

// v1View renders r as the v1 record.
func (r row) v1View() V1Payout {
	v2 := r.view()
	out := V1Payout{ID: r.id, UUID: r.uuid, Currency: r.currency, Description: r.description, TotalAmount: v2.TotalAmount,
		TotalFees: v2.TotalFees, Status: r.status, ScheduledAt: v2.ScheduledAt, IsRetry: r.isRetry, ExternalID: r.externalID,
		WebhookNotification: v2.WebhookNotification, Approval: v2.Approval, Transactions: []V1TxRecord{},
		CreatedAt: v2.CreatedAt, UpdatedAt: v2.UpdatedAt}
	for _, t := range v2.PayoutTransactions {
		rec := V1TxRecord{UUID: t.UUID, Payee: t.FirstName, Email: t.Email, Amount: t.Amount, Fee: t.Fee, Status: t.Status,
			FailureReason: t.FailureReason, BalanceID: t.BalanceID}
		rec.Address, _ = t.PayoutMethodParams["address"].(string)
		str := func(k string) *string {
			if v, ok := t.PayoutMethodParams[k].(string); ok {
				return &v
			}
			return nil
		}
		rec.BSB, rec.AccountNumber, rec.PayID = str("bsb"), str("account_number"), str("pay_id")
		if typ := str("pay_id_type"); typ != nil {
			lower := strings.ToLower(*typ)
			rec.PayIDType = &lower
		}
		out.Transactions = append(out.Transactions, rec)
	}
	return out
}
