package reconcile

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/store"
)

// MatchRequest is the body of POST /v2/reconciliation/lines/match.
type MatchRequest struct {
	LineID string     `json:"line_id" required:"true"`
	Type   RecordType `json:"type" required:"true" enum:"settlement,transfer"`
	UUID   string     `json:"uuid" required:"true" doc:"The settlement's or external transfer's uuid."`
}

// UnmatchRequest is the body of POST /v2/reconciliation/lines/unmatch.
type UnmatchRequest struct {
	LineID string `json:"line_id" required:"true"`
}

// IgnoreRequest is the body of POST /v2/reconciliation/lines/ignore.
type IgnoreRequest struct {
	LineID string `json:"line_id" required:"true"`
	Reason string `json:"reason" required:"true" doc:"1 to 500 characters."`
}

// Match says by hand which record line is: a settlement or an external
// transfer of the merchant to a bank account, in the statement's currency,
// on its way or arrived, that no other line is. The amount may differ
// (the person has looked). A matched line must be unmatched first (409).
func (s *Service) Match(ctx context.Context, tx *store.Tx, p merchant.Principal, by Actor, r MatchRequest) (Line, error) {
	f := fault.Fields{}
	if r.LineID == "" {
		f.Add("line_id", "is required")
	}
	if r.Type != SettlementRecord && r.Type != TransferRecord {
		f.Add("type", "must be settlement or transfer")
	}
	if r.UUID == "" {
		f.Add("uuid", "is required")
	}
	if err := f.Err(); err != nil {
		return Line{}, err
	}
	l, st, err := s.lockedLine(ctx, tx, p.MerchantID, r.LineID)
	if err != nil {
		return Line{}, err
	}
	if l.Status == Matched {
		return Line{}, fault.State("line %s is matched to %s %s already: unmatch it first", l.ID, l.MatchedTo.Type, l.MatchedTo.UUID)
	}
	if err := checkRecord(ctx, tx, p.MerchantID, r.Type, r.UUID, st.Currency); err != nil {
		return Line{}, err
	}
	var other string
	err = tx.QueryRowContext(ctx, `SELECT id FROM reconciliation_lines WHERE merchant_id = $1 AND matched_type = $2 AND matched_uuid = $3`,
		p.MerchantID, string(r.Type), r.UUID).Scan(&other)
	if err == nil {
		return Line{}, fault.State("%s %s is matched to line %s already", r.Type, r.UUID, other)
	}
	if !store.IsNoRows(err) {
		return Line{}, fmt.Errorf("find the line of %s %s: %w", r.Type, r.UUID, err)
	}
	return s.change(ctx, tx, p, by, l, Matched, string(r.Type), r.UUID, "", AuditMatched, string(r.Type)+" "+r.UUID)
}

// Unmatch makes a matched or ignored line unmatched again.
func (s *Service) Unmatch(ctx context.Context, tx *store.Tx, p merchant.Principal, by Actor, r UnmatchRequest) (Line, error) {
	if r.LineID == "" {
		return Line{}, fault.Field("line_id", "is required")
	}
	l, _, err := s.lockedLine(ctx, tx, p.MerchantID, r.LineID)
	if err != nil {
		return Line{}, err
	}
	if l.Status == Unmatched {
		return Line{}, fault.State("line %s is unmatched already", l.ID)
	}
	detail := string(l.Status)
	if l.MatchedTo != nil {
		detail = string(l.MatchedTo.Type) + " " + l.MatchedTo.UUID
	}
	return s.change(ctx, tx, p, by, l, Unmatched, nil, nil, "", AuditUnmatched, detail)
}

// Ignore says an unmatched line needs no explaining, and why.
func (s *Service) Ignore(ctx context.Context, tx *store.Tx, p merchant.Principal, by Actor, r IgnoreRequest) (Line, error) {
	f := fault.Fields{}
	if r.LineID == "" {
		f.Add("line_id", "is required")
	}
	reason := strings.TrimSpace(r.Reason)
	if n := utf8.RuneCountInString(reason); n == 0 || n > MaxReasonRunes {
		f.Add("reason", fmt.Sprintf("must be 1 to %d characters", MaxReasonRunes))
	}
	if err := f.Err(); err != nil {
		return Line{}, err
	}
	l, _, err := s.lockedLine(ctx, tx, p.MerchantID, r.LineID)
	if err != nil {
		return Line{}, err
	}
	if l.Status != Unmatched {
		return Line{}, fault.State("line %s is %s: only an unmatched line is ignored (unmatch it first)", l.ID, l.Status)
	}
	return s.change(ctx, tx, p, by, l, Ignored, nil, nil, reason, AuditIgnored, reason)
}

// lockedLine reads a line of the merchant and its statement, holding the
// merchant's reconciliation lock.
func (s *Service) lockedLine(ctx context.Context, tx *store.Tx, merchantID, id string) (storedLine, stored, error) {
	if err := tx.LockKey(ctx, lockNamespace, merchantID); err != nil {
		return storedLine{}, stored{}, err
	}
	var statementID string
	err := tx.QueryRowContext(ctx, `SELECT statement_id FROM reconciliation_lines WHERE merchant_id = $1 AND id = $2`, merchantID, id).Scan(&statementID)
	if store.IsNoRows(err) {
		return storedLine{}, stored{}, fault.NotFoundf("no statement line %s", id)
	}
	if err != nil {
		return storedLine{}, stored{}, fmt.Errorf("read statement line %s: %w", id, err)
	}
	st, err := getStatement(ctx, tx, merchantID, statementID)
	if err != nil {
		return storedLine{}, stored{}, err
	}
	l, err := scanLine(tx.QueryRowContext(ctx, `SELECT `+lineColumns+` FROM reconciliation_lines WHERE merchant_id = $1 AND id = $2`, merchantID, id), st.currency)
	return l, st, err
}

// checkRecord refuses a record a line cannot be: none of the merchant's
// (404), not to a bank account, in another currency (422), or one that
// never reached the bank (409).
func checkRecord(ctx context.Context, tx *store.Tx, merchantID string, typ RecordType, uuid, currency string) error {
	var (
		cur, status string
		internal    sql.NullInt64
		err         error
	)
	if typ == SettlementRecord {
		err = tx.QueryRowContext(ctx, `SELECT currency, status, treasury_account_id FROM settlements WHERE merchant_id = $1 AND uuid = $2`, merchantID, uuid).
			Scan(&cur, &status, &internal)
	} else {
		err = tx.QueryRowContext(ctx, `SELECT currency, status, to_account_id FROM transfers WHERE merchant_id = $1 AND uuid = $2`, merchantID, uuid).
			Scan(&cur, &status, &internal)
	}
	if store.IsNoRows(err) {
		return fault.NotFoundf("no %s %s", typ, uuid)
	}
	if err != nil {
		return fmt.Errorf("read %s %s: %w", typ, uuid, err)
	}
	switch {
	case internal.Valid:
		return fault.Field("uuid", fmt.Sprintf("%s %s went to one of the merchant's own accounts, not a bank account", typ, uuid))
	case cur != currency:
		return fault.Field("uuid", fmt.Sprintf("%s %s is in %s; the statement is in %s", typ, uuid, cur, currency))
	case status != statusProcessing && status != statusCompleted:
		return fault.State("%s %s is %s: it is not money the bank received", typ, uuid, status)
	}
	return nil
}

// change writes line l's new status and what it is matched to, with its
// audit entry, and returns the line as it now is.
func (s *Service) change(ctx context.Context, tx *store.Tx, p merchant.Principal, by Actor, l storedLine, to LineStatus, typ, uuid any, reason string,
	action portal.AuditAction, detail string) (Line, error) {
	now := s.clock.Of(p)
	if _, err := tx.ExecContext(ctx, `UPDATE reconciliation_lines SET status = $1, matched_type = $2, matched_uuid = $3, reason = $4, updated_at = $5
		WHERE merchant_id = $6 AND id = $7`, string(to), typ, uuid, reason, now.UnixMilli(), p.MerchantID, l.ID); err != nil {
		return Line{}, fmt.Errorf("change statement line %s: %w", l.ID, err)
	}
	if err := portal.Audit(ctx, tx, portal.Entry{MerchantID: p.MerchantID, Actor: by.Label, Action: action, Subject: l.ID, Detail: detail,
		Client: by.Client, At: now}); err != nil {
		return Line{}, err
	}
	l.Status, l.MatchedTo, l.Reason = to, nil, nil
	if to == Matched {
		l.MatchedTo = &RecordRef{Type: RecordType(typ.(string)), UUID: uuid.(string)}
	}
	if to == Ignored {
		l.Reason = &reason
	}
	return l.Line, nil
}
