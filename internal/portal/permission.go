package portal

import (
	"slices"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/payout"
)

// Permission is something a portal user does that not every role may. Its
// text says what a refusal says the role may not do.
type Permission string

// The portal's permissions (CONTRACT §13). What every signed-in user of the
// merchant may do (read the balances, payins, payouts, settlements,
// reports, users and audit log; manage their own second factor) needs none.
const (
	CreatePayouts       Permission = "create payouts"
	DecidePayouts       Permission = "decide payouts"
	SeeDevelopers       Permission = "see the developers page"
	CreateApps          Permission = "create apps"
	RevokeApps          Permission = "revoke apps"
	ResendWebhooks      Permission = "resend webhooks"
	SetEmbedOrigins     Permission = "change the embedding origins"
	SeeSigningSecret    Permission = "see the signing secret"
	RotateSigningSecret Permission = "rotate the signing secret"
	AddUsers            Permission = "add users"
	ChangeUsers         Permission = "change users"
	// ReconcileStatements is uploading bank statements and matching,
	// unmatching and ignoring their lines (CONTRACT §19: finance, admin).
	ReconcileStatements Permission = "reconcile bank statements"
	ChangePolicies      Permission = "change approval policies"
	DecideTransfers     Permission = "decide transfers"
	DecideBeneficiaries Permission = "decide beneficiary changes"
	// AnswerDisputes is seeing card disputes and answering them: evidence
	// and accepting (CONTRACT §22: finance, admin).
	AnswerDisputes Permission = "answer disputes"
	// ChangeSettlements is setting an account's settlement frequency and
	// beneficiary (PUT /v2/settlements/config from the portal: finance, admin).
	ChangeSettlements Permission = "change the settlement config"
)

// rolesOf is the one table of which roles are given each permission: admin
// everything; finance payouts (create and decide); developer the developers
// page, its apps, deliveries and embedding origins; viewer nothing but
// reading (CONTRACT §13). Who decides a payout is the payout service's rule
// (payout.DeciderRoles), which this table repeats by reference.
var rolesOf = map[Permission][]merchant.Role{
	CreatePayouts:       {merchant.Admin, merchant.Finance},
	DecidePayouts:       payout.DeciderRoles,
	SeeDevelopers:       {merchant.Admin, merchant.Developer},
	CreateApps:          {merchant.Admin, merchant.Developer},
	RevokeApps:          {merchant.Admin, merchant.Developer},
	ResendWebhooks:      {merchant.Admin, merchant.Developer},
	SetEmbedOrigins:     {merchant.Admin, merchant.Developer},
	SeeSigningSecret:    {merchant.Admin, merchant.Developer},
	RotateSigningSecret: {merchant.Admin, merchant.Developer},
	AddUsers:            {merchant.Admin},
	ChangeUsers:         {merchant.Admin},
	ReconcileStatements: {merchant.Admin, merchant.Finance},
	ChangePolicies:      {merchant.Admin},
	DecideTransfers:     payout.DeciderRoles,
	DecideBeneficiaries: payout.DeciderRoles,
	AnswerDisputes:      {merchant.Admin, merchant.Finance},
	ChangeSettlements:   {merchant.Admin, merchant.Finance},
}

// Roles are the roles given p, for a page that lists them.
func Roles(p Permission) []merchant.Role { return slices.Clone(rolesOf[p]) }

// May answers whether u's role is given p: nil, or the 403 to answer. A
// permission missing from the table is given to no one.
func (u User) May(p Permission) error {
	if slices.Contains(rolesOf[p], u.Role) {
		return nil
	}
	return Forbidden(string(p))
}

// Forbidden is the answer to a role that may not do something.
func Forbidden(what string) error {
	return fault.New(fault.Forbidden, fault.CodeForbidden, "your role may not %s", what)
}
