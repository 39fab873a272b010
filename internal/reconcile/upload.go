package reconcile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"payd/internal/fault"
	"payd/internal/input"
	"payd/internal/iso20022"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/portal"
	"payd/internal/statement"
	"payd/internal/statement/bai2"
	"payd/internal/store"
)

// Upload is a statement file as a merchant sends it.
type Upload struct {
	File []byte
	// AccountNumber is the bank account the file reports: required for a
	// CSV (which names none), checked against the file's otherwise.
	AccountNumber string
	// Currency is a CSV's currency (the caller's account's when empty);
	// camt.053 and BAI2 name their own.
	Currency string
}

// maxAccountRunes bounds an upload's account_number.
const maxAccountRunes = 34

// Upload reads u's statement, stores it with its credits and matches each
// (CONTRACT §19). The same file again (by its SHA-256) is the statement
// already stored: created is false and nothing is added. A file payd does
// not read is 415; one whose control totals fail, or beyond the bounds,
// 422 naming file.
func (s *Service) Upload(ctx context.Context, tx *store.Tx, p merchant.Principal, by Actor, u Upload) (st Statement, created bool, err error) {
	if len(u.File) == 0 {
		return Statement{}, false, fault.Field("file", "is required: a camt.053, BAI2 or CSV statement")
	}
	if len(u.File) > MaxFileBytes {
		return Statement{}, false, fault.New(fault.TooLarge, fault.CodeTooLarge, "file is larger than %d bytes", MaxFileBytes)
	}
	if err := checkUploadFields(u); err != nil {
		return Statement{}, false, err
	}
	sum := sha256.Sum256(u.File)
	digest := hex.EncodeToString(sum[:])
	if err := tx.LockKey(ctx, lockNamespace, p.MerchantID); err != nil {
		return Statement{}, false, err
	}
	loc := merchant.Location(p.Timezone)
	if id, err := idBySHA(ctx, tx, p.MerchantID, digest); err != nil || id != "" {
		if err != nil {
			return Statement{}, false, err
		}
		st, err := s.summary(ctx, tx, p.MerchantID, id, loc)
		return st, false, err
	}
	h, credits, err := read(u, p.Currency)
	if err != nil {
		return Statement{}, false, err
	}
	if err := checkHeader(h, u); err != nil {
		return Statement{}, false, err
	}
	now := s.clock.Of(p)
	id := store.RandomID(store.UUIDLen)
	if err := insertStatement(ctx, tx, p.MerchantID, id, digest, h, len(credits), by.Label, now); err != nil {
		return Statement{}, false, err
	}
	if err := s.insertLines(ctx, tx, p.MerchantID, id, h, credits, loc, now); err != nil {
		return Statement{}, false, err
	}
	if err := portal.Audit(ctx, tx, portal.Entry{MerchantID: p.MerchantID, Actor: by.Label, Action: AuditUploaded, Subject: id,
		Detail: fmt.Sprintf("%s %s %s..%s sha256 %s", h.Format, h.Account.Number, h.From, h.To, digest[:16]), Client: by.Client, At: now}); err != nil {
		return Statement{}, false, err
	}
	st, err = s.summary(ctx, tx, p.MerchantID, id, loc)
	return st, true, err
}

// checkUploadFields checks the upload's text fields by the input rule.
func checkUploadFields(u Upload) error {
	f := fault.Fields{}
	f.AddErr(input.Check("account_number", u.AccountNumber))
	if len([]rune(u.AccountNumber)) > maxAccountRunes {
		f.Add("account_number", fmt.Sprintf("is at most %d characters", maxAccountRunes))
	}
	f.AddErr(input.Check("currency", u.Currency))
	return f.Err()
}

// read detects u's format by content and reads it whole, keeping its
// booked credits; a refusal names file (or is 415 for a format payd does
// not take here).
func read(u Upload, callerCurrency string) (statement.Header, []statement.Entry, error) {
	format, err := statement.Detect(u.File)
	if err != nil {
		return statement.Header{}, nil, unsupported(err.Error())
	}
	var credits []statement.Entry
	entries := 0
	each := func(e statement.Entry) error {
		if entries++; entries > MaxEntries {
			return fault.Field("file", fmt.Sprintf("holds more than %d entries", MaxEntries))
		}
		if e.Direction == statement.Credit && e.Status == statement.Booked {
			credits = append(credits, e)
		}
		return nil
	}
	r := bytes.NewReader(u.File)
	var h statement.Header
	switch format {
	case statement.Camt053:
		h, err = iso20022.ReadCamt(r, each)
	case statement.BAI2:
		h, err = bai2.Read(r, each)
	case statement.CSV:
		if strings.TrimSpace(u.AccountNumber) == "" {
			return statement.Header{}, nil, fault.Field("account_number", "is required with a CSV statement, which names no account")
		}
		currency := strings.ToUpper(u.Currency)
		if currency == "" {
			currency = callerCurrency
		}
		if _, lookupErr := money.Lookup(currency); lookupErr != nil {
			return statement.Header{}, nil, fault.Field("currency", "is not an ISO 4217 currency payd knows")
		}
		h, err = statement.ReadCSV(r, statement.Account{Number: strings.TrimSpace(u.AccountNumber), Currency: currency}, each)
	default:
		return statement.Header{}, nil, unsupported(fmt.Sprintf("a %s file: a statement upload takes camt.053, BAI2 or CSV (date,amount,reference,description)", format))
	}
	if err != nil {
		return statement.Header{}, nil, fileError(err)
	}
	return h, credits, nil
}

func unsupported(why string) error {
	return fault.New(fault.UnsupportedMedia, fault.CodeUnsupportedMedia, "file is not a statement payd reads: %s", why)
}

// fileError is a reader's refusal as the upload's answer: 422 naming file,
// with the check that failed when it was a control total (CONTRACT §25).
func fileError(err error) error {
	if _, ok := fault.As(err); ok {
		return err
	}
	var se *statement.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("read statement: %w", err)
	}
	if errors.Is(err, statement.ErrUnknownFormat) {
		return unsupported(se.Error())
	}
	e := fault.Field("file", se.Error())
	if se.Check != "" {
		e.Message = "the statement's control totals disagree: check " + se.Check + " failed (" + se.Error() + ")"
	} else {
		e.Message = "the statement cannot be read: " + se.Error()
	}
	return e
}

// checkHeader refuses a statement whose account is not the upload's, or
// whose period is beyond MaxPeriodDays.
func checkHeader(h statement.Header, u Upload) error {
	if u.AccountNumber != "" && digitsOf(u.AccountNumber) == "" {
		return fault.Field("account_number", "must hold the account number's digits")
	}
	if u.AccountNumber != "" && !sameAccount(h.Account.Digits(), digitsOf(u.AccountNumber)) {
		return fault.Field("account_number", fmt.Sprintf("is not the account the statement reports (%s)", h.Account.Number))
	}
	if h.Account.Digits() == "" {
		return fault.Field("file", "names no account number with digits")
	}
	if h.From.IsZero() || h.To.IsZero() {
		return fault.Field("file", "reports no period (no dates)")
	}
	if h.To.In(time.UTC).Sub(h.From.In(time.UTC)) > (MaxPeriodDays-1)*24*time.Hour {
		return fault.Field("file", fmt.Sprintf("reports %s to %s: a statement reports at most %d days", h.From, h.To, MaxPeriodDays))
	}
	return nil
}

func idBySHA(ctx context.Context, q store.Querier, merchantID, digest string) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT id FROM reconciliation_statements WHERE merchant_id = $1 AND sha256 = $2`, merchantID, digest).Scan(&id)
	if store.IsNoRows(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("find statement: %w", err)
	}
	return id, nil
}

func insertStatement(ctx context.Context, tx *store.Tx, merchantID, id, digest string, h statement.Header, credits int, by string, now time.Time) error {
	var opening, closing any
	if h.Opening != nil {
		opening = h.Opening.AmountMinor
	}
	if h.Closing != nil {
		closing = h.Closing.AmountMinor
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO reconciliation_statements (merchant_id, id, sha256, format, account_number, currency, from_date, to_date,
		opening_balance, closing_balance, entries, credits, uploaded_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		merchantID, id, digest, string(h.Format), h.Account.Number, h.Account.Currency, h.From.String(), h.To.String(), opening, closing,
		h.Entries, credits, by, now.UnixMilli())
	if err != nil {
		return fmt.Errorf("store statement: %w", err)
	}
	return nil
}

// insertLines stores each credit as a line, matched when a record is it.
func (s *Service) insertLines(ctx context.Context, tx *store.Tx, merchantID, statementID string, h statement.Header, credits []statement.Entry, loc *time.Location, now time.Time) error {
	lo, hi := window(h.From, h.To, loc)
	rs, err := records(ctx, tx, merchantID, h.Account.Currency, h.Account.Digits(), lo, hi, loc)
	if err != nil {
		return err
	}
	m := newMatcher(rs)
	for i, e := range credits {
		c := creditOf(e)
		status, typ, uuid := Unmatched, any(nil), any(nil)
		if r, ok := m.match(c); ok {
			status, typ, uuid = Matched, string(r.typ), r.uuid
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO reconciliation_lines (merchant_id, id, statement_id, seq, value_date, amount, reference, description,
			status, matched_type, matched_uuid, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			merchantID, store.RandomID(store.BalanceIDLen), statementID, i, c.valueDate.String(), e.AmountMinor, e.Reference, e.Remittance,
			string(status), typ, uuid, now.UnixMilli()); err != nil {
			return fmt.Errorf("store statement line: %w", err)
		}
	}
	return nil
}
