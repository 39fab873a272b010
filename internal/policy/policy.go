// Package policy is a merchant's approval policies (CONTRACT §20, §25): the
// rules on who must approve money leaving, set by the merchant's admins and
// changed only when a second admin approves the change (four eyes on the
// rules themselves); their evaluation, once, when a payout or an external
// transfer is created; and the approvals a held one collects. The payout
// and transfer services call it; no entry point holds a rule of its own.
package policy

import (
	"slices"
	"strings"

	"payd/internal/clock"
	"payd/internal/merchant"
	"payd/internal/store"
)

// Kind is what a rule of approval_policies is.
type Kind string

const (
	// Threshold: a payout's total or an external transfer's amount at or
	// above min_amount needs approvals by roles.
	Threshold Kind = "threshold"
	// DailyLimit: a creator's payouts and external transfers of one local
	// day above the limit (min_amount) are held for one approval.
	DailyLimit Kind = "daily_limit"
	// BeneficiaryApproval: on (min_amount 1), a change of a settlement's
	// external beneficiary waits for a second person.
	BeneficiaryApproval Kind = "beneficiary_approval"
)

// Change is a proposed change of a rule, waiting for a second admin.
type Change string

const (
	NoChange Change = ""
	Create   Change = "create"
	Update   Change = "update"
	Delete   Change = "delete"
)

// Status of a policy as GET /v2/approval_policies shows it.
type Status string

const (
	Active  Status = "active"
	Pending Status = "pending"
)

// Error codes of approvals (CONTRACT §20, §25).
const (
	// CodeAlreadyApproved refuses a user's second approval of one record.
	CodeAlreadyApproved = "ALREADY_APPROVED"
	// CodeDecisionConflict refuses a decision on a record no longer held.
	CodeDecisionConflict = "DECISION_CONFLICT"
)

// Bounds of a policy.
const (
	MaxApprovals   = 3
	maxNameLen     = 100
	maxPolicies    = 50
	maxReasonLen   = 500
	minReasonLen   = 5
	defaultApprove = 1
)

// DeciderRoles are the roles that decide a held record when no policy
// narrows them (CONTRACT §5, §13): admin and finance.
var DeciderRoles = []merchant.Role{merchant.Admin, merchant.Finance}

// PolicyRoles are the roles a policy may name.
var PolicyRoles = []merchant.Role{merchant.Finance, merchant.Admin}

// Ref names the policy that caught a record, as approval.policy shows it:
// later changes of the policy do not touch it.
type Ref struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// Step is one approval of a held record, as approval.approvals lists it.
type Step struct {
	DecidedBy string        `json:"decided_by" doc:"The approving user's email."`
	Role      merchant.Role `json:"role" doc:"admin or finance."`
	DecidedAt clock.Time    `json:"decided_at"`
}

// Service keeps the policies and the approvals.
type Service struct {
	db *store.DB
}

// Deps are what a Service needs.
type Deps struct {
	DB *store.DB
}

// NewService returns the service on d's database.
func NewService(d Deps) *Service { return &Service{db: d.DB} }

// Actor is the portal user changing or approving: by user id (the maker's
// identity), Email for what the records show.
type Actor struct {
	UserID string
	Email  string
	Role   merchant.Role
}

// joinRoles and splitRoles are the roles column's text: "" is DeciderRoles.
func joinRoles(roles []merchant.Role) string {
	parts := make([]string, len(roles))
	for i, r := range roles {
		parts[i] = string(r)
	}
	return strings.Join(parts, ",")
}

// SplitRoles reads a roles column: "" is DeciderRoles.
func SplitRoles(s string) []merchant.Role {
	if s == "" {
		return slices.Clone(DeciderRoles)
	}
	var out []merchant.Role
	for _, p := range strings.Split(s, ",") {
		out = append(out, merchant.Role(p))
	}
	return out
}

// JoinRoles is the roles column's text of roles.
func JoinRoles(roles []merchant.Role) string { return joinRoles(roles) }
