package transfer

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/money"
	"payd/internal/policy"
	"payd/internal/settlement"
	"payd/internal/store"
)

// row is a transfer as stored, with its accounts' numbers and kinds.
type row struct {
	uuid, merchantID, currency, description, bank, endpoint, auth string
	amount, createdAt                                             int64
	status                                                        Status
	fromAccountID                                                 int64
	fromKind, fromNumber, fromPublicID                            string
	toAccountID                                                   sql.NullInt64
	toKind, toNumber, toPublicID                                  sql.NullString
	completedAt                                                   sql.NullInt64
	failure, bankReference                                        sql.NullString
	// The approval of a transfer a policy held (CONTRACT §20, §25).
	createdBy, createdByUser, approvalStatus, approvalRoles string
	requiredApprovals                                       int
	policyName                                              sql.NullString
	policyVersion                                           sql.NullInt64
	decidedBy, rejectionReason                              string
	decidedAt, holdUntil                                    sql.NullInt64
	steps                                                   []policy.Step
}

// selectRows reads a transfer's row with its accounts; its callers add
// the WHERE (t is the transfer) and scan each row with scanRow.
const selectRows = `SELECT t.uuid, t.merchant_id, t.currency, t.description, t.bank_account, t.endpoint_url, t.authorization_header,
	t.amount, t.created_at, t.status, t.from_account_id, f.kind, f.account_number, COALESCE(f.public_id, ''),
	t.to_account_id, d.kind, d.account_number, d.public_id, t.completed_at, t.failure_reason, t.bank_reference,
	t.created_by, t.created_by_user, t.approval_status, t.approval_roles, t.required_approvals, t.policy_name, t.policy_version,
	t.decided_by, t.rejection_reason, t.decided_at, t.hold_until
	FROM transfers t JOIN accounts f ON f.merchant_id = t.merchant_id AND f.id = t.from_account_id
	LEFT JOIN accounts d ON d.merchant_id = t.merchant_id AND d.id = t.to_account_id `

func scanRow(sc interface{ Scan(...any) error }) (row, error) {
	var r row
	err := sc.Scan(&r.uuid, &r.merchantID, &r.currency, &r.description, &r.bank, &r.endpoint, &r.auth, &r.amount, &r.createdAt, &r.status,
		&r.fromAccountID, &r.fromKind, &r.fromNumber, &r.fromPublicID, &r.toAccountID, &r.toKind, &r.toNumber, &r.toPublicID,
		&r.completedAt, &r.failure, &r.bankReference,
		&r.createdBy, &r.createdByUser, &r.approvalStatus, &r.approvalRoles, &r.requiredApprovals, &r.policyName, &r.policyVersion,
		&r.decidedBy, &r.rejectionReason, &r.decidedAt, &r.holdUntil)
	return r, err
}

func (s *Service) get(ctx context.Context, q store.Querier, merchantID, uuid string) (row, error) {
	r, err := scanRow(q.QueryRowContext(ctx, selectRows+`WHERE t.uuid = $1 AND t.merchant_id = $2`, uuid, merchantID))
	if isNoRows(err) {
		return row{}, fault.NotFoundf("no transfer %s", uuid)
	}
	if err != nil {
		return row{}, fmt.Errorf("read transfer %s: %w", uuid, err)
	}
	rows := []row{r}
	if err := withSteps(ctx, q, merchantID, rows); err != nil {
		return row{}, err
	}
	return rows[0], nil
}

// withSteps reads the approval steps of the rows a policy held, in one
// query for all.
func withSteps(ctx context.Context, q store.Querier, merchantID string, rows []row) error {
	var held []string
	for _, r := range rows {
		if r.approvalStatus != "" {
			held = append(held, r.uuid)
		}
	}
	if len(held) == 0 {
		return nil
	}
	steps, err := policy.Steps(ctx, q, merchantID, policy.TransferSubject, held)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].steps = steps[rows[i].uuid]
	}
	return nil
}

func party(kind, number, publicID string) Party {
	if merchant.AccountKind(kind) == merchant.Treasury {
		return Party{Type: "treasury_account", TreasuryAccountID: &publicID, AccountNumber: &number}
	}
	return Party{Type: "payments_account", AccountNumber: &number}
}

func (r row) view() (Transfer, error) {
	c, err := money.Lookup(r.currency)
	if err != nil {
		return Transfer{}, fmt.Errorf("transfer %s: %w", r.uuid, err)
	}
	v := Transfer{UUID: r.uuid, Status: r.status, Currency: r.currency, Amount: money.StringOf(r.amount, c), Description: r.description,
		From: party(r.fromKind, r.fromNumber, r.fromPublicID), CreatedAt: clock.Time{T: clock.FromMillis(r.createdAt)}}
	if r.toAccountID.Valid {
		v.To = party(r.toKind.String, r.toNumber.String, r.toPublicID.String)
	} else {
		var b settlement.BankAccount
		if err := json.Unmarshal([]byte(r.bank), &b); err != nil {
			return Transfer{}, fmt.Errorf("transfer %s: bank account: %w", r.uuid, err)
		}
		v.To = Party{Type: "external_bank_account", ExternalBankAccount: &b}
	}
	if r.completedAt.Valid {
		v.CompletedAt = &clock.Time{T: clock.FromMillis(r.completedAt.Int64)}
	}
	if r.failure.Valid {
		v.FailureReason = &r.failure.String
	}
	if r.bankReference.Valid {
		v.BankReference = &r.bankReference.String
	}
	if r.approvalStatus != "" {
		v.Approval = r.approval()
	}
	return v, nil
}
