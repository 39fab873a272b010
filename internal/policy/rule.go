package policy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/store"
)

// Input is a proposed threshold policy (the portal's form).
type Input struct {
	Name      string
	Currency  string
	MinAmount money.Input
	Approvals int
	Roles     []merchant.Role
}

// Policy is a threshold policy as GET /v2/approval_policies lists it: its
// active values (the proposed ones while it was never approved), status
// pending while a change of it waits for a second admin.
type Policy struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Currency  string          `json:"currency"`
	MinAmount money.String    `json:"min_amount" doc:"A payout's total, or an external transfer's amount, at or above which the policy applies."`
	Approvals int             `json:"approvals" doc:"1 to 3 distinct approvers."`
	Roles     []merchant.Role `json:"roles" doc:"finance, admin or both."`
	Version   int             `json:"version" doc:"0 until the policy's proposal is approved; one more with each approved change."`
	Status    Status          `json:"status" enum:"active,pending" doc:"pending while a proposal, change or deletion waits for a second admin."`
	CreatedAt clock.Time      `json:"created_at"`
	// Change is the pending change (create, update, delete), for the portal.
	Change Change `json:"-"`
	// Proposed are the values a pending create or update proposes.
	Proposed *Proposal `json:"-"`
	Kind     Kind      `json:"-"`
	// ProposedBy is the pending change's proposer's email.
	ProposedBy string `json:"-"`
	live       bool
}

// Proposal is the values of a pending create or update.
type Proposal struct {
	Name      string
	MinAmount money.String
	Approvals int
	Roles     []merchant.Role
}

// Rules is a merchant's approval rules: the threshold policies, the daily
// limits by currency and the beneficiary approval switch, as GET
// /v2/approval_policies answers; Pending are the daily limit and switch
// changes waiting for a second admin (for the portal).
type Rules struct {
	Records             []Policy          `json:"records"`
	DailyLimits         map[string]string `json:"daily_limits" doc:"The active per-creator daily limit of each currency that has one."`
	BeneficiaryApproval bool              `json:"beneficiary_approval" doc:"On: a change of a settlement's external beneficiary waits for approval."`
	Pending             []Policy          `json:"-"`
}

type ruleRow struct {
	id, name, currency, roles, pName, pRoles, proposedBy, proposedByEmail string
	kind                                                                  Kind
	change                                                                Change
	minAmount, pMinAmount, createdAt                                      int64
	approvals, pApprovals, version                                        int
	deleted                                                               bool
}

const ruleColumns = `id, kind, name, currency, min_amount, approvals, roles, version, deleted, change, p_name, p_min_amount,
	p_approvals, p_roles, proposed_by, proposed_by_email, created_at`

func scanRule(sc interface{ Scan(...any) error }) (ruleRow, error) {
	var r ruleRow
	err := sc.Scan(&r.id, &r.kind, &r.name, &r.currency, &r.minAmount, &r.approvals, &r.roles, &r.version, &r.deleted, &r.change,
		&r.pName, &r.pMinAmount, &r.pApprovals, &r.pRoles, &r.proposedBy, &r.proposedByEmail, &r.createdAt)
	return r, err
}

func (r ruleRow) view() Policy {
	c, _ := money.Lookup(r.currency)
	p := Policy{ID: r.id, Kind: r.kind, Name: r.name, Currency: r.currency, MinAmount: money.StringOf(r.minAmount, c), Approvals: r.approvals,
		Roles: SplitRoles(r.roles), Version: r.version, Status: Active, CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)},
		Change: r.change, ProposedBy: r.proposedByEmail, live: r.version > 0}
	if r.change != NoChange {
		p.Status = Pending
	}
	if r.change == Create || r.change == Update {
		p.Proposed = &Proposal{Name: r.pName, MinAmount: money.StringOf(r.pMinAmount, c), Approvals: r.pApprovals, Roles: SplitRoles(r.pRoles)}
	}
	if !p.live && p.Proposed != nil { // never approved: show what it proposes
		p.Name, p.MinAmount, p.Approvals, p.Roles = r.pName, p.Proposed.MinAmount, r.pApprovals, p.Proposed.Roles
	}
	return p
}

// List is merchantID's rules (not deleted), by currency and min_amount.
func (s *Service) List(ctx context.Context, merchantID string) (Rules, error) {
	rows, err := s.db.Read().QueryContext(ctx, `SELECT `+ruleColumns+` FROM approval_policies WHERE merchant_id = $1 AND NOT deleted
		ORDER BY currency, kind, min_amount, p_min_amount, id LIMIT 200`, merchantID)
	if err != nil {
		return Rules{}, fmt.Errorf("list approval policies: %w", err)
	}
	defer rows.Close()
	out := Rules{Records: []Policy{}, DailyLimits: map[string]string{}}
	for rows.Next() {
		r, err := scanRule(rows)
		if err != nil {
			return Rules{}, fmt.Errorf("list approval policies: %w", err)
		}
		p := r.view()
		switch r.kind {
		case Threshold:
			out.Records = append(out.Records, p)
			continue
		case DailyLimit:
			if r.version > 0 {
				out.DailyLimits[r.currency] = p.MinAmount.String()
			}
		case BeneficiaryApproval:
			out.BeneficiaryApproval = r.version > 0 && r.minAmount == 1
		}
		if r.change != NoChange {
			out.Pending = append(out.Pending, p)
		}
	}
	return out, rows.Err()
}

// BeneficiaryApprovalOn reports whether merchantID's beneficiary approval
// switch is on (CONTRACT §20), in tx.
func (s *Service) BeneficiaryApprovalOn(ctx context.Context, q store.Querier, merchantID string) (bool, error) {
	var on int64
	err := q.QueryRowContext(ctx, `SELECT min_amount FROM approval_policies WHERE merchant_id = $1 AND kind = $2 AND version > 0 AND NOT deleted`,
		merchantID, string(BeneficiaryApproval)).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read beneficiary approval: %w", err)
	}
	return on == 1, nil
}

// mayChange is the rule on who changes policies: admins only (CONTRACT §20).
func mayChange(by Actor) error {
	if by.Role != merchant.Admin {
		return fault.New(fault.Forbidden, fault.CodeForbidden, "only admins change approval policies")
	}
	return nil
}

// checked is a validated Input in minor units.
type checked struct {
	name      string
	currency  string
	minAmount int64
	approvals int
	roles     string
}

func check(in Input) (checked, error) {
	f := fault.Fields{}
	c := checked{name: strings.TrimSpace(in.Name), currency: strings.ToUpper(strings.TrimSpace(in.Currency)), approvals: in.Approvals}
	if n := utf8.RuneCountInString(c.name); n == 0 || n > maxNameLen {
		f.Add("name", fmt.Sprintf("must be 1 to %d characters", maxNameLen))
	}
	cur, err := money.Lookup(c.currency)
	if err != nil {
		f.Add("currency", "is not a supported ISO 4217 currency code")
	} else if c.minAmount, _, err = money.ParseField("min_amount", in.MinAmount, cur); err != nil {
		if e, ok := fault.As(err); ok {
			for k, v := range e.Fields {
				f.Add(k, v)
			}
		}
	} else if c.minAmount < 0 {
		f.Add("min_amount", "must not be negative")
	}
	if c.approvals < 1 || c.approvals > MaxApprovals {
		f.Add("approvals", fmt.Sprintf("must be 1 to %d", MaxApprovals))
	}
	var roles []merchant.Role
	for _, r := range in.Roles {
		switch {
		case !slices.Contains(PolicyRoles, r):
			f.Add("roles", "must be finance, admin or both")
		case !slices.Contains(roles, r):
			roles = append(roles, r)
		}
	}
	if len(in.Roles) == 0 || len(in.Roles) > len(PolicyRoles)*2 {
		f.Add("roles", "must be finance, admin or both")
	}
	slices.Sort(roles)
	c.roles = joinRoles(roles)
	return c, f.Err()
}

// lockRules serialises the changes of merchantID's rules (PostgreSQL: the
// merchant's row), so the uniqueness of (currency, min_amount) holds.
func (s *Service) lockRules(ctx context.Context, tx *store.Tx, merchantID string) error {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM merchants WHERE id = $1`+s.db.ForUpdate(), merchantID).Scan(&id)
	if err != nil {
		return fmt.Errorf("lock approval policies: %w", err)
	}
	return nil
}

// clash refuses a threshold policy of currency and minAmount when another
// one (other than id) has that min_amount, live or proposed: 422.
func (s *Service) clash(ctx context.Context, tx *store.Tx, merchantID, id, currency string, minAmount int64) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM approval_policies WHERE merchant_id = $1 AND kind = $2 AND currency = $3 AND NOT deleted
		AND id <> $4 AND ((version > 0 AND min_amount = $5) OR (change IN ('create', 'update') AND p_min_amount = $5))`,
		merchantID, string(Threshold), currency, id, minAmount).Scan(&n); err != nil {
		return fmt.Errorf("check approval policies: %w", err)
	}
	if n > 0 {
		return fault.Field("min_amount", fmt.Sprintf("another %s policy has this min_amount", currency))
	}
	return nil
}

// Propose adds a threshold policy, pending until a second admin approves it.
func (s *Service) Propose(ctx context.Context, tx *store.Tx, merchantID string, by Actor, in Input, now time.Time) (Policy, error) {
	if err := mayChange(by); err != nil {
		return Policy{}, err
	}
	c, err := check(in)
	if err != nil {
		return Policy{}, err
	}
	if err := s.lockRules(ctx, tx, merchantID); err != nil {
		return Policy{}, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM approval_policies WHERE merchant_id = $1 AND kind = $2 AND NOT deleted`,
		merchantID, string(Threshold)).Scan(&n); err != nil {
		return Policy{}, fmt.Errorf("count approval policies: %w", err)
	}
	if n >= maxPolicies {
		return Policy{}, fault.Rule(fault.CodeValidation, "a merchant has at most %d approval policies", maxPolicies)
	}
	id := "pol_" + store.RandomID(16)
	if err := s.clash(ctx, tx, merchantID, id, c.currency, c.minAmount); err != nil {
		return Policy{}, err
	}
	return s.insert(ctx, tx, merchantID, id, Threshold, c, by, now)
}

func (s *Service) insert(ctx context.Context, tx *store.Tx, merchantID, id string, kind Kind, c checked, by Actor, now time.Time) (Policy, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO approval_policies (merchant_id, id, kind, name, currency, min_amount, approvals, roles, version,
		change, p_name, p_min_amount, p_approvals, p_roles, proposed_by, proposed_by_email, proposed_at, created_at, updated_at)
		VALUES ($1, $2, $3, '', $4, 0, 0, '', 0, $5, $6, $7, $8, $9, $10, $11, $12, $12, $12)`,
		merchantID, id, string(kind), c.currency, string(Create), c.name, c.minAmount, c.approvals, c.roles, by.UserID, by.Email, now.UnixMilli()); err != nil {
		return Policy{}, fmt.Errorf("propose approval policy: %w", err)
	}
	return s.get(ctx, tx, merchantID, id)
}

func (s *Service) get(ctx context.Context, q store.Querier, merchantID, id string) (Policy, error) {
	r, err := s.getRow(ctx, q, merchantID, id, "")
	return r.view(), err
}

func (s *Service) getRow(ctx context.Context, q store.Querier, merchantID, id, forUpdate string) (ruleRow, error) {
	r, err := scanRule(q.QueryRowContext(ctx, `SELECT `+ruleColumns+` FROM approval_policies WHERE merchant_id = $1 AND id = $2 AND NOT deleted`+forUpdate,
		merchantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return ruleRow{}, fault.NotFoundf("no approval policy %s", id)
	}
	if err != nil {
		return ruleRow{}, fmt.Errorf("read approval policy %s: %w", id, err)
	}
	return r, nil
}

// Get is one of merchantID's rules.
func (s *Service) Get(ctx context.Context, merchantID, id string) (Policy, error) {
	return s.get(ctx, s.db.Read(), merchantID, id)
}

// propose records change on the rule id, with c's values for an update.
func (s *Service) propose(ctx context.Context, tx *store.Tx, merchantID, id string, change Change, c checked, by Actor, now time.Time) (Policy, error) {
	r, err := s.getRow(ctx, tx, merchantID, id, s.db.ForUpdate())
	if err != nil {
		return Policy{}, err
	}
	if r.version == 0 || r.change != NoChange {
		return Policy{}, fault.State("approval policy %s has a change waiting for approval: approve or reject it first", id)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE approval_policies SET change = $1, p_name = $2, p_min_amount = $3, p_approvals = $4, p_roles = $5,
		proposed_by = $6, proposed_by_email = $7, proposed_at = $8, updated_at = $8 WHERE merchant_id = $9 AND id = $10`,
		string(change), c.name, c.minAmount, c.approvals, c.roles, by.UserID, by.Email, now.UnixMilli(), merchantID, id); err != nil {
		return Policy{}, fmt.Errorf("propose a change of approval policy %s: %w", id, err)
	}
	return s.get(ctx, tx, merchantID, id)
}

// ProposeUpdate proposes new values for the threshold policy id.
func (s *Service) ProposeUpdate(ctx context.Context, tx *store.Tx, merchantID, id string, by Actor, in Input, now time.Time) (Policy, error) {
	if err := mayChange(by); err != nil {
		return Policy{}, err
	}
	c, err := check(in)
	if err != nil {
		return Policy{}, err
	}
	if err := s.lockRules(ctx, tx, merchantID); err != nil {
		return Policy{}, err
	}
	r, err := s.getRow(ctx, tx, merchantID, id, "")
	if err != nil {
		return Policy{}, err
	}
	if r.kind != Threshold {
		return Policy{}, fault.NotFoundf("no approval policy %s", id)
	}
	if c.currency != r.currency {
		return Policy{}, fault.Field("currency", "a policy keeps its currency: propose a new one")
	}
	if err := s.clash(ctx, tx, merchantID, id, c.currency, c.minAmount); err != nil {
		return Policy{}, err
	}
	return s.propose(ctx, tx, merchantID, id, Update, c, by, now)
}

// ProposeDelete proposes the deletion of the rule id.
func (s *Service) ProposeDelete(ctx context.Context, tx *store.Tx, merchantID, id string, by Actor, now time.Time) (Policy, error) {
	if err := mayChange(by); err != nil {
		return Policy{}, err
	}
	return s.propose(ctx, tx, merchantID, id, Delete, checked{}, by, now)
}

// Decide approves or rejects the pending change of the rule id. Only an
// admin other than its proposer approves it (403); any admin rejects it
// (its proposer withdrawing it included). Approved, the change applies and
// the version goes up; a rejected proposal of a new rule removes the rule.
func (s *Service) Decide(ctx context.Context, tx *store.Tx, merchantID, id string, by Actor, approve bool, now time.Time) (Policy, error) {
	if err := mayChange(by); err != nil {
		return Policy{}, err
	}
	r, err := s.getRow(ctx, tx, merchantID, id, s.db.ForUpdate())
	if err != nil {
		return Policy{}, err
	}
	if r.change == NoChange {
		return Policy{}, fault.New(fault.Conflict, CodeDecisionConflict, "approval policy %s has no change waiting for approval", id)
	}
	if approve && r.proposedBy == by.UserID {
		return Policy{}, fault.New(fault.Forbidden, fault.CodeForbidden, "the admin who proposed a change may not approve it: another admin must")
	}
	var q string
	switch {
	case !approve && r.change == Create:
		q = `UPDATE approval_policies SET deleted = TRUE, change = '', updated_at = $1 WHERE merchant_id = $2 AND id = $3`
	case !approve:
		q = `UPDATE approval_policies SET change = '', updated_at = $1 WHERE merchant_id = $2 AND id = $3`
	case r.change == Delete:
		q = `UPDATE approval_policies SET deleted = TRUE, change = '', version = version + 1, updated_at = $1 WHERE merchant_id = $2 AND id = $3`
	default:
		q = `UPDATE approval_policies SET name = p_name, min_amount = p_min_amount, approvals = p_approvals, roles = p_roles,
			version = version + 1, change = '', updated_at = $1 WHERE merchant_id = $2 AND id = $3`
	}
	if _, err := tx.ExecContext(ctx, q, now.UnixMilli(), merchantID, id); err != nil {
		return Policy{}, fmt.Errorf("decide approval policy %s: %w", id, err)
	}
	if approve && r.change != Delete {
		return s.get(ctx, tx, merchantID, id)
	}
	r.change, r.deleted = NoChange, true
	return r.view(), nil
}

// singleton is the rule of kind for currency ("" for the switch), or "".
func (s *Service) singleton(ctx context.Context, tx *store.Tx, merchantID string, kind Kind, currency string) (string, error) {
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM approval_policies WHERE merchant_id = $1 AND kind = $2 AND currency = $3 AND NOT deleted`,
		merchantID, string(kind), currency).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", kind, err)
	}
	return id, nil
}

// setSingleton proposes value for the daily limit of a currency or the
// switch: a new rule, an update, or (remove) its deletion, pending until a
// second admin approves it as a policy's change.
func (s *Service) setSingleton(ctx context.Context, tx *store.Tx, merchantID string, kind Kind, c checked, remove bool, by Actor, now time.Time) (Policy, error) {
	if err := s.lockRules(ctx, tx, merchantID); err != nil {
		return Policy{}, err
	}
	id, err := s.singleton(ctx, tx, merchantID, kind, c.currency)
	if err != nil {
		return Policy{}, err
	}
	switch {
	case id == "" && remove:
		return Policy{}, fault.Field("amount", "there is no daily limit to remove")
	case id == "":
		return s.insert(ctx, tx, merchantID, kind.idPrefix()+store.RandomID(16), kind, c, by, now)
	case remove:
		return s.propose(ctx, tx, merchantID, id, Delete, checked{}, by, now)
	}
	return s.propose(ctx, tx, merchantID, id, Update, c, by, now)
}

func (k Kind) idPrefix() string {
	if k == DailyLimit {
		return "lim_"
	}
	return "ben_"
}

// maxDailyLimitMinor bounds a daily limit (and keeps sums in int64).
const maxDailyLimitMinor = 1 << 50

// ProposeDailyLimit proposes the per-creator daily limit of currency
// (CONTRACT §20): amount "" (or 0) removes it. Pending until a second admin
// approves it.
func (s *Service) ProposeDailyLimit(ctx context.Context, tx *store.Tx, merchantID string, by Actor, currency string, amount money.Input, now time.Time) (Policy, error) {
	if err := mayChange(by); err != nil {
		return Policy{}, err
	}
	currency = strings.ToUpper(strings.TrimSpace(currency))
	cur, err := money.Lookup(currency)
	if err != nil {
		return Policy{}, fault.Field("currency", "is not a supported ISO 4217 currency code")
	}
	c := checked{name: "daily limit " + currency, currency: currency, approvals: 1}
	if strings.TrimSpace(string(amount)) != "" {
		if c.minAmount, _, err = money.ParseField("amount", amount, cur); err != nil {
			return Policy{}, err
		}
		if c.minAmount < 0 || c.minAmount > maxDailyLimitMinor {
			return Policy{}, fault.Field("amount", "must be positive")
		}
	}
	return s.setSingleton(ctx, tx, merchantID, DailyLimit, c, c.minAmount == 0, by, now)
}

// ProposeBeneficiaryApproval proposes turning the beneficiary approval
// switch on or off (CONTRACT §20: changed like a policy).
func (s *Service) ProposeBeneficiaryApproval(ctx context.Context, tx *store.Tx, merchantID string, by Actor, on bool, now time.Time) (Policy, error) {
	if err := mayChange(by); err != nil {
		return Policy{}, err
	}
	c := checked{name: "beneficiary approval", approvals: 1}
	if on {
		c.minAmount = 1
	}
	return s.setSingleton(ctx, tx, merchantID, BeneficiaryApproval, c, false, by, now)
}
