package settlement

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/job"
	"payd/internal/ledger"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/rail"
	"payd/internal/store"
	"payd/internal/treasury"
	"payd/internal/webhook"
)

// Requester is who asks for a config change: a beneficiary change that
// waits for approval names them, and they may not approve it themselves.
type Requester struct {
	// Label is shown as pending_change.requested_by: app:<app-id>, or the
	// portal user's email.
	Label  string
	UserID string
}

// PutConfig sets an account's frequency and its one beneficiary, asked for
// by the calling app (PUT /v2/settlements/config).
func (s *Service) PutConfig(ctx context.Context, tx *store.Tx, p merchant.Principal, r ConfigRequest) (Config, error) {
	return s.PutConfigBy(ctx, tx, p, r, Requester{Label: "app:" + p.AppID})
}

// PutConfigBy is PutConfig asked for by by (a portal user). It applies to
// later settlements only. Turning end_of_day on schedules the end of
// today, on the merchant's time zone.
func (s *Service) PutConfigBy(ctx context.Context, tx *store.Tx, p merchant.Principal, r ConfigRequest, by Requester) (Config, error) {
	currency := currencyOf(p, r.Currency)
	f := fault.Fields{}
	if r.Frequency != EndOfDay && r.Frequency != OnDemand {
		f.Add("frequency", "must be end_of_day or on_demand")
	}
	if (r.TreasuryAccountID == "") == (r.ExternalBankAccount == nil) {
		f.Add("treasury_account_id", "give exactly one of treasury_account_id and external_bank_account")
	}
	if r.ExternalBankAccount != nil {
		r.ExternalBankAccount.Check(f, currency, s.banks)
		// A beneficiary whose name the bank-file rail's file cannot hold is
		// refused now, not at each settlement's cut-off (CONTRACT §17, §25).
		texts, err := rail.FileTextsOf(ctx, tx, s.rail, currency, rail.SettlementMethod, "settlements")
		if err != nil {
			return Config{}, err
		}
		texts.Name(f, "external_bank_account.account_name", r.ExternalBankAccount.AccountName)
	}
	if err := s.policy.Validate("webhook_notification", r.WebhookNotification); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	}
	if err := f.Err(); err != nil {
		return Config{}, err
	}
	acc, err := account(ctx, tx, p, currency)
	if err != nil {
		return Config{}, err
	}
	var treasuryID any
	if r.TreasuryAccountID != "" {
		t, err := treasury.Active(ctx, tx, p.MerchantID, r.TreasuryAccountID, currency)
		if err != nil {
			return Config{}, err
		}
		treasuryID = t.ID
	}
	bank := ""
	if r.ExternalBankAccount != nil {
		raw, _ := json.Marshal(r.ExternalBankAccount)
		bank = string(raw)
	}
	now := s.clock.Of(p)
	guarded, err := s.guarded(ctx, tx, p.MerchantID, acc.ID, r.ExternalBankAccount)
	if err != nil {
		return Config{}, err
	}
	if guarded {
		return s.proposeBeneficiary(ctx, tx, p, acc.ID, currency, r, by, now)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO settlement_configs (account_id, merchant_id, currency, frequency, treasury_account_id, bank_account,
		endpoint_url, authorization_header, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (merchant_id, account_id) DO UPDATE SET frequency = excluded.frequency, treasury_account_id = excluded.treasury_account_id,
		bank_account = excluded.bank_account, endpoint_url = excluded.endpoint_url, authorization_header = excluded.authorization_header,
		updated_at = excluded.updated_at, pending_change = NULL`, acc.ID, p.MerchantID, currency, string(r.Frequency), treasuryID, bank,
		r.WebhookNotification.EndpointURL, r.WebhookNotification.AuthorizationHeader, now.UnixMilli()); err != nil {
		return Config{}, fmt.Errorf("set settlement config: %w", err)
	}
	if r.Frequency == EndOfDay {
		if err := s.scheduleDay(ctx, tx, p.MerchantID, acc.ID, merchant.LocalDate(now, merchant.Location(p.Timezone))); err != nil {
			return Config{}, err
		}
	}
	c, _, err := s.readConfig(ctx, tx, p.MerchantID, acc.ID)
	c.Currency = currency
	return c, err
}

// SubmitRequest is the body of POST /v2/settlements.
type SubmitRequest struct {
	Currency string      `json:"currency,omitempty" doc:"Absent: the calling app's currency."`
	Amount   money.Input `json:"amount,omitempty" doc:"Absent: all of the withdrawable balance, less the fee." example:"250.00"`
}

// Submit asks for a settlement now (either frequency).
func (s *Service) Submit(ctx context.Context, tx *store.Tx, p merchant.Principal, r SubmitRequest) (Settlement, error) {
	currency := currencyOf(p, r.Currency)
	acc, err := account(ctx, tx, p, currency)
	if err != nil {
		return Settlement{}, err
	}
	c, err := money.Lookup(currency)
	if err != nil {
		return Settlement{}, err
	}
	var amount int64
	if !r.Amount.IsZero() {
		if amount, _, err = money.ParseField("amount", r.Amount, c); err != nil {
			return Settlement{}, err
		}
	}
	st, err := s.settle(ctx, tx, p.MerchantID, acc, amount, OnDemand, "", s.clock.Of(p))
	if err != nil {
		return Settlement{}, err
	}
	return st.view()
}

// row is a settlement as stored.
type row struct {
	uuid, merchantID, currency, balanceID, beneficiary, endpoint, auth string
	accountID, amount, fee, createdAt, updatedAt                       int64
	status                                                             Status
	frequency                                                          Frequency
	treasuryID, completedAt                                            sql.NullInt64
	eodDate, failure, bankReference                                    sql.NullString
}

// reference is the settlement's reference: its local date when it is an
// end-of-day settlement, its uuid otherwise.
func (r row) reference() string {
	if r.eodDate.Valid {
		return r.eodDate.String
	}
	return r.uuid
}

const rowColumns = `uuid, merchant_id, currency, balance_id, beneficiary, endpoint_url, authorization_header, account_id, amount, fee,
	created_at, updated_at, status, frequency, treasury_account_id, completed_at, eod_date, failure_reason, bank_reference`

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.uuid, &r.merchantID, &r.currency, &r.balanceID, &r.beneficiary, &r.endpoint, &r.auth, &r.accountID, &r.amount, &r.fee,
		&r.createdAt, &r.updatedAt, &r.status, &r.frequency, &r.treasuryID, &r.completedAt, &r.eodDate, &r.failure, &r.bankReference)
	return r, err
}

func (r row) view() (Settlement, error) {
	c, err := money.Lookup(r.currency)
	if err != nil {
		return Settlement{}, fmt.Errorf("settlement %s: %w", r.uuid, err)
	}
	v := Settlement{UUID: r.uuid, Currency: r.currency, Amount: money.StringOf(r.amount, c), Fee: money.StringOf(r.fee, c),
		Status: r.status, Frequency: r.frequency, BalanceID: r.balanceID, Reference: r.reference(), CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)}}
	if r.bankReference.Valid {
		v.BankReference = &r.bankReference.String
	}
	if err := json.Unmarshal([]byte(r.beneficiary), &v.Beneficiary); err != nil {
		return Settlement{}, fmt.Errorf("settlement %s: beneficiary: %w", r.uuid, err)
	}
	if r.completedAt.Valid {
		v.CompletedAt = &clock.Time{T: clock.FromMillis(r.completedAt.Int64)}
	}
	if r.failure.Valid {
		v.FailureReason = &r.failure.String
	}
	return v, nil
}

// CodeNoBeneficiary refuses a settlement of an account whose settlement
// config has no beneficiary yet.
const CodeNoBeneficiary = "NO_BENEFICIARY"

// settle submits a settlement of amount (0: everything withdrawable less
// the fee) from acc to its configured beneficiary. eodDate marks an
// end-of-day settlement: one per account and local date.
func (s *Service) settle(ctx context.Context, tx *store.Tx, merchantID string, acc merchant.Account, amount int64, freq Frequency, eodDate string, now time.Time) (row, error) {
	cfg, treasuryID, err := s.readConfig(ctx, tx, merchantID, acc.ID)
	if err != nil {
		return row{}, err
	}
	if cfg.UpdatedAt == nil {
		return row{}, fault.Rule(CodeNoBeneficiary, "set a beneficiary first: PUT /v2/settlements/config")
	}
	if err := ledger.LockAccounts(ctx, tx, merchantID, acc.Currency, acc.ID, treasuryID); err != nil {
		return row{}, err
	}
	balances, err := ledger.Balances(ctx, tx, merchantID, string(merchant.Payments), acc.Currency)
	if err != nil {
		return row{}, err
	}
	var withdrawable int64
	for _, b := range balances {
		if b.AccountID == acc.ID {
			withdrawable = b.Withdrawable
		}
	}
	c, err := money.Lookup(acc.Currency)
	if err != nil {
		return row{}, err
	}
	fee := feeMinor[acc.Currency]
	if amount == 0 {
		amount = withdrawable - fee
	}
	if amount <= 0 || amount+fee > withdrawable {
		return row{}, fault.Rule(fault.CodeInsufficientFunds, "%s %s is withdrawable; a settlement of it takes a fee of %s",
			money.Format(withdrawable, c), c.Code, money.Format(fee, c))
	}
	uuid := store.RandomID(store.UUIDLen)
	rec := ledger.Record{MerchantID: merchantID, AccountID: acc.ID, Currency: acc.Currency, RequestType: ledger.MoneyOut,
		TransactionType: ledger.Settlement, Status: ledger.Waiting, Amount: amount, Fees: fee, Outgoing: amount + fee, Total: amount + fee,
		ReferenceID: uuid, CreatedAt: now}
	if err := ledger.CreateRecord(ctx, tx, &rec); err != nil {
		return row{}, err
	}
	if _, err := ledger.Post(ctx, tx, ledger.Entry{MerchantID: merchantID, Currency: acc.Currency, Kind: "settlement.submit", RecordID: rec.ID, At: now,
		Legs: []ledger.Leg{
			{Account: acc.ID, Bucket: ledger.Available, Amount: -(amount + fee)},
			{Account: acc.ID, Bucket: ledger.Outgoing, Amount: amount + fee},
		}}); err != nil {
		return row{}, err
	}
	beneficiary, _ := json.Marshal(Beneficiary{TreasuryAccountID: cfg.TreasuryAccountID, ExternalBankAccount: cfg.ExternalBankAccount})
	var treasury, eod any
	if treasuryID != 0 {
		treasury = treasuryID
	}
	if eodDate != "" {
		eod = eodDate
	}
	endpoint, auth := "", ""
	if cfg.WebhookNotification != nil {
		endpoint, auth = cfg.WebhookNotification.EndpointURL, cfg.WebhookNotification.AuthorizationHeader
	}
	// Every settlement has its bank reference from its creation (CONTRACT
	// §25), into a treasury account too: what the beneficiary's statement
	// shows, and what reconciliation matches.
	reference, err := rail.DrawReference(ctx, tx, s.rail, merchantID, acc.Currency, rail.SettlementMethod)
	if err != nil {
		return row{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO settlements (uuid, merchant_id, account_id, currency, amount, fee, status, frequency, beneficiary,
		treasury_account_id, balance_id, eod_date, endpoint_url, authorization_header, created_at, updated_at, bank_reference)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16)`,
		uuid, merchantID, acc.ID, acc.Currency, amount, fee, string(Processing), string(freq), string(beneficiary), treasury, rec.ID, eod,
		endpoint, auth, now.UnixMilli(), reference); err != nil {
		return row{}, fmt.Errorf("store settlement: %w", err)
	}
	r, err := s.get(ctx, tx, merchantID, uuid)
	if err != nil {
		return row{}, err
	}
	if err := s.emit(ctx, tx, r, now); err != nil {
		return row{}, err
	}
	if fundingChecked[acc.Currency] {
		// JPY, VND, IDR and INR wait in processing for the funding check.
		return r, job.Enqueue(ctx, tx, s.queue, jobFunded, ref{MerchantID: merchantID, UUID: uuid}, job.Options{ClockOf: merchantID, RunAt: now.Add(s.FundingDelay)})
	}
	return r, s.release(ctx, tx, &r, now)
}

type ref struct {
	MerchantID string `json:"merchant_id"`
	UUID       string `json:"uuid"`
}

// release sends a settlement on: into the treasury account at once, or to
// the rail for an external bank account.
func (s *Service) release(ctx context.Context, tx *store.Tx, r *row, now time.Time) error {
	if r.treasuryID.Valid {
		return s.complete(ctx, tx, r, true, "", now)
	}
	var b Beneficiary
	if err := json.Unmarshal([]byte(r.beneficiary), &b); err != nil || b.ExternalBankAccount == nil {
		return fmt.Errorf("settlement %s: no beneficiary", r.uuid)
	}
	if !r.bankReference.Valid {
		return fmt.Errorf("settlement %s: no bank reference", r.uuid)
	}
	return s.rail.Submit(ctx, tx, rail.Transfer{Key: keyPrefix + r.uuid, MerchantID: r.merchantID, Method: rail.SettlementMethod,
		Currency: r.currency, AmountMinor: r.amount, Params: b.ExternalBankAccount.RailParams(), At: now,
		BankReference: r.bankReference.String, Description: "Settlement " + r.reference()})
}

// fundedJob ends a settlement's funding check.
func (s *Service) fundedJob(ctx context.Context, tx *store.Tx, _ job.Job, rf ref) error {
	r, now, err := s.locked(ctx, tx, rf.MerchantID, rf.UUID)
	if err != nil || r.status != Processing {
		return err
	}
	return s.release(ctx, tx, &r, now)
}

// outcome applies the rail's word on a settlement, in the outcome order
// (rail.Judge): a processing one completes or fails, a completed one is
// returned; any other word changes nothing.
func (s *Service) outcome(ctx context.Context, tx *store.Tx, o rail.Outcome) (rail.Applied, error) {
	r, now, err := s.locked(ctx, tx, o.MerchantID, o.Key[len(keyPrefix):])
	if err != nil {
		return rail.Applied{}, err
	}
	applied := rail.Applied{Effect: rail.Judge(StateOf(r.status), o.Verdict), Was: string(r.status), Status: string(r.status)}
	if applied.Effect != rail.Changed {
		return applied, nil
	}
	if o.Verdict == rail.Returned {
		err = s.giveBack(ctx, tx, &r, o.Reason, now)
	} else {
		err = s.complete(ctx, tx, &r, o.Verdict == rail.Done, o.Reason, now)
	}
	return rail.Applied{Effect: rail.Changed, Was: applied.Was, Status: string(r.status)}, err
}

// StateOf is where a settlement or a transfer of status stands in the
// outcome order (their statuses are the same words).
func StateOf(status Status) rail.State {
	switch status {
	case Completed:
		return rail.StateDone
	case Failed:
		return rail.StateFailed
	case Returned:
		return rail.StateReturned
	}
	return rail.StatePending
}

// giveBack books the return of a completed settlement (Return) and sends
// settlement.returned.
func (s *Service) giveBack(ctx context.Context, tx *store.Tx, r *row, reason string, now time.Time) error {
	end, err := Return(ctx, tx, Settlements, ledger.Outflow{MerchantID: r.merchantID, Currency: r.currency, Operation: "settlement",
		RecordID: r.balanceID, Reference: r.uuid, From: r.accountID, To: r.treasuryID, Amount: r.amount, Fee: r.fee}, reason, now)
	if err != nil {
		return err
	}
	r.status, r.failure, r.updatedAt = Status(end.Status), end.Failure, now.UnixMilli()
	return s.emit(ctx, tx, *r, now)
}

// locked reads a settlement under the ledger locks of its account and of
// the treasury account it goes into, if any (ledger.LockAccounts), and the
// merchant's time.
func (s *Service) locked(ctx context.Context, tx *store.Tx, merchantID, uuid string) (row, time.Time, error) {
	read := func() (row, error) { return s.get(ctx, tx, merchantID, uuid) }
	return ReadLocked(ctx, tx, s.clock, merchantID, read, func(r row) error {
		return ledger.LockAccounts(ctx, tx, merchantID, r.currency, r.accountID, r.treasuryID.Int64)
	})
}

// complete ends a settlement: done, its amount leaves outgoing (into the
// treasury account's available, with a Transfer In record there, or out);
// failed, amount and fee return to available.
func (s *Service) complete(ctx context.Context, tx *store.Tx, r *row, done bool, reason string, now time.Time) error {
	end, err := Finish(ctx, tx, Settlements, ledger.Outflow{MerchantID: r.merchantID, Currency: r.currency, Operation: "settlement",
		RecordID: r.balanceID, Reference: r.uuid, From: r.accountID, To: r.treasuryID, Amount: r.amount, Fee: r.fee}, done, reason, now)
	if err != nil {
		return err
	}
	r.status, r.completedAt, r.failure, r.updatedAt = Status(end.Status), end.CompletedAt, end.Failure, now.UnixMilli()
	return s.emit(ctx, tx, *r, now)
}

func (s *Service) emit(ctx context.Context, tx *store.Tx, r row, now time.Time) error {
	return Announce(ctx, tx, s.webhooks, webhook.Event{MerchantID: r.merchantID, Type: "settlement." + string(r.status), RecordUUID: r.uuid,
		Target: webhook.Target{EndpointURL: r.endpoint, AuthorizationHeader: r.auth}, At: now}, func() (any, error) { return r.view() })
}

func (s *Service) get(ctx context.Context, q store.Querier, merchantID, uuid string) (row, error) {
	r, err := scanRow(q.QueryRowContext(ctx, `SELECT `+rowColumns+` FROM settlements WHERE uuid = $1 AND merchant_id = $2`, uuid, merchantID))
	if isNoRows(err) {
		return row{}, fault.NotFoundf("no settlement %s", uuid)
	}
	if err != nil {
		return row{}, fmt.Errorf("read settlement %s: %w", uuid, err)
	}
	return r, nil
}

// Get is one settlement.
func (s *Service) Get(ctx context.Context, p merchant.Principal, uuid string) (Settlement, error) {
	r, err := s.get(ctx, s.db.Read(), p.MerchantID, uuid)
	if err != nil {
		return Settlement{}, err
	}
	return r.view()
}

// List is a page of the merchant's settlements in the caller's currency, newest first.
func (s *Service) List(ctx context.Context, p merchant.Principal, currency string, page, perPage int) ([]Settlement, int, error) {
	currency = currencyOf(p, currency)
	var total int
	if err := s.db.Read().QueryRowContext(ctx, `SELECT count(*) FROM settlements WHERE merchant_id = $1 AND currency = $2`, p.MerchantID, currency).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count settlements: %w", err)
	}
	rows, err := s.db.Read().QueryContext(ctx, `SELECT `+rowColumns+` FROM settlements WHERE merchant_id = $1 AND currency = $2
		ORDER BY created_at DESC, uuid DESC LIMIT $3 OFFSET $4`, p.MerchantID, currency, perPage, (page-1)*perPage)
	if err != nil {
		return nil, 0, fmt.Errorf("list settlements: %w", err)
	}
	defer rows.Close()
	var out []Settlement
	for rows.Next() {
		r, err := scanRow(rows)
		if err != nil {
			return nil, 0, err
		}
		v, err := r.view()
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	return out, total, rows.Err()
}
