package payin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"payd/internal/money"
	"payd/internal/store"
)

// A payin paid at the operator's bank (CONTRACT §18, §25): a bank feed's
// booked credit names a pending payin by its payment details (a virtual
// account number, a jp_bank_jpy account number, an au_payid_npp_aud PayID)
// or by its uuid in the remittance text, and is applied by Receive here,
// which completes it as the sandbox's simulate does (complete).

// KeyPayCode names a payin's payment details in global_keys: the account
// number or PayID a bank credit is addressed to, whose merchant a feed
// looks up first. A detail that another payin's holds already (digits
// derived from two uuids that agree) is not claimed again: the first
// keeps it.
const KeyPayCode store.KeyKind = "payin_pay_code"

// payCodeFields are the pay_code members a bank credit can be addressed to.
var payCodeFields = []string{"virtual_account_number", "account_number", "pay_id"}

// payCodeKeys are the details of payCode a feed finds its payin by.
func payCodeKeys(payCode string) []string {
	var pc map[string]any
	if json.Unmarshal([]byte(payCode), &pc) != nil {
		return nil
	}
	var out []string
	for _, f := range payCodeFields {
		if v, ok := pc[f].(string); ok && v != "" {
			out = append(out, NormalizeDetail(v))
		}
	}
	return out
}

// NormalizeDetail is a payment detail as it is compared: without spaces
// and dashes, in lower case (a PayID's case does not matter).
func NormalizeDetail(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(s)))
}

// claimPayCode claims r's payment details in tx, sent with its next
// statement (no round trip of its own).
func claimPayCode(ctx context.Context, tx *store.Tx, r row) error {
	for _, k := range payCodeKeys(r.payCode) {
		if err := tx.Send(ctx, `INSERT INTO global_keys (key, kind, merchant_id) VALUES ($1, $2, $3) ON CONFLICT (key, kind) DO NOTHING`,
			k, string(KeyPayCode), r.merchantID); err != nil {
			return fmt.Errorf("claim the payment details of payin %s: %w", r.uuid, err)
		}
	}
	return nil
}

// Candidate is a payin a bank credit names.
type Candidate struct {
	MerchantID, UUID string
}

// ByPayCode is the pending payins whose payment details are detail
// (NormalizeDetail'd), at most two: a feed takes one and leaves two as
// unmatched.
func ByPayCode(ctx context.Context, q store.Querier, detail string) ([]Candidate, error) {
	detail = NormalizeDetail(detail)
	if detail == "" || len(detail) > 254 {
		return nil, nil
	}
	merchantID, err := store.KeyOwner(ctx, q, KeyPayCode, detail)
	if store.IsNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT uuid, pay_code FROM payins WHERE merchant_id = $1 AND status = $2 AND pay_code LIKE $3 ORDER BY created_at`,
		merchantID, string(Pending), "%"+likeEscape(detail)+"%")
	if err != nil {
		return nil, fmt.Errorf("find the payin of %s: %w", detail, err)
	}
	defer rows.Close()
	var out []Candidate
	for rows.Next() && len(out) < 2 {
		var uuid, payCode string
		if err := rows.Scan(&uuid, &payCode); err != nil {
			return nil, err
		}
		for _, k := range payCodeKeys(payCode) {
			if k == detail {
				out = append(out, Candidate{MerchantID: merchantID, UUID: uuid})
				break
			}
		}
	}
	return out, rows.Err()
}

// likeEscape drops LIKE's % from s; its _ matches itself too, and the
// details found are compared exactly.
func likeEscape(s string) string { return strings.ReplaceAll(s, "%", "") }

// ByUUID is the payin whose uuid is token (any case: uuids are upper-case
// base 36), if there is one.
func ByUUID(ctx context.Context, q store.Querier, token string) (Candidate, bool, error) {
	token = strings.ToUpper(token)
	if len(token) != store.UUIDLen {
		return Candidate{}, false, nil
	}
	merchantID, err := store.KeyOwner(ctx, q, store.KeyPayin, token)
	if store.IsNoRows(err) {
		return Candidate{}, false, nil
	}
	if err != nil {
		return Candidate{}, false, err
	}
	return Candidate{MerchantID: merchantID, UUID: token}, true, nil
}

// The refusals of Receive, which a feed turns into its exceptions.
var (
	// ErrNotReceivable: the payin is not pending, awaits its OTP, or is in
	// another currency than the credit (CONTRACT §25: unmatched).
	ErrNotReceivable = errors.New("the payin cannot take the credit")
	// ErrAmountMismatch: the credit is not the payin's total (CONTRACT
	// §25: amount_mismatch; nothing received, nothing sent back).
	ErrAmountMismatch = errors.New("the credit is not the payin's total")
)

// Credit is a bank's booked credit of a payin.
type Credit struct {
	MerchantID, UUID string
	// AmountMinor is in Currency's minor units; a statement's reader has
	// refused an amount with more decimals than the currency has, so that a
	// rounding currency's credit is whole already.
	AmountMinor int64
	Currency    string
	// BankReference is the entry's key, which the payin shows.
	BankReference string
}

// Receive applies a bank credit to its payin in tx: a pending payin of the
// credit's currency whose total it is becomes received exactly as the
// sandbox's simulate makes it (complete: the ledger, the clearing job, the
// webhook), with bank_reference the entry's key. Anything else changes
// nothing: ErrNotReceivable, ErrAmountMismatch (wrapped, with the reason).
func (s *Service) Receive(ctx context.Context, tx *store.Tx, c Credit) (Payin, error) {
	r, err := s.get(ctx, tx, c.MerchantID, c.UUID, lockPayin)
	if err != nil {
		return Payin{}, err
	}
	switch {
	case r.status != Pending:
		return Payin{}, fmt.Errorf("%w: payin %s of merchant %s is %s", ErrNotReceivable, r.uuid, r.merchantID, r.status)
	case r.stage == StageAuthorizeOTP:
		return Payin{}, fmt.Errorf("%w: payin %s of merchant %s awaits its OTP", ErrNotReceivable, r.uuid, r.merchantID)
	case r.currency != c.Currency:
		return Payin{}, fmt.Errorf("%w: payin %s of merchant %s is in %s, the credit in %s", ErrNotReceivable, r.uuid, r.merchantID, r.currency, c.Currency)
	case r.total != c.AmountMinor:
		return Payin{}, fmt.Errorf("%w: payin %s of merchant %s asks for %s %s, the credit is %s", ErrAmountMismatch, r.uuid, r.merchantID,
			money.Format(r.total, r.cur), r.currency, money.Format(c.AmountMinor, r.cur))
	}
	now, err := s.clock.Read(ctx, tx, r.merchantID)
	if err != nil {
		return Payin{}, err
	}
	if c.BankReference != "" {
		ref := c.BankReference
		r.bankReference = &ref
		if err := tx.Send(ctx, `UPDATE payins SET bank_reference = $1 WHERE uuid = $2 AND merchant_id = $3`, ref, r.uuid, r.merchantID); err != nil {
			return Payin{}, fmt.Errorf("receive payin %s: %w", r.uuid, err)
		}
	}
	if err := s.complete(ctx, tx, &r, "completed", c.AmountMinor, now); err != nil {
		return Payin{}, err
	}
	return r.view(), nil
}
