package httpapi

import "strings"

// apiTag is one group of operations in the API reference, in the order the
// reference lists them.
type apiTag struct {
	name, description string
	// prefixes are the paths whose operations the tag holds.
	prefixes []string
}

// apiTags group the reference's operations by what a developer is doing; v1
// and v2 apart where both exist. A sandbox-only operation is in Sandbox.
var apiTags = []apiTag{
	{"Payins", "Money in from customers (v2): bank transfers, virtual accounts, QR codes, e-wallets, mobile money; refunds and cancellations.", []string{"/v2/payins"}},
	{"Payouts (v2)", "Batches of payouts by every method of the catalogue, with scheduling and approval.", []string{"/v2/payouts", "/v2/approval_policies"}},
	{"Payouts (v1)", "AUD payouts to a BSB account or a PayID, by JSON or CSV file.", []string{"/v1/payouts"}},
	{"PayID (v1)", "AUD PayID: one-time payment requests with a PayID of their own, and static open PayIDs per customer.", []string{"/v1/payment_requests", "/v1/merchants/create_payment", "/v1/customers"}},
	{"Gateway", "Hosted checkout: payment gateway v1 (card and PayID) and Payment Gateway 3 payin links.", []string{"/v1/payment_gateways", "/v3/payin_links"}},
	{"Balances", "Balances per currency and their history, on the double-entry ledger.", []string{"/v2/balances"}},
	{"Settlements", "Moving what is withdrawable to the merchant's bank account or treasury account.", []string{"/v2/settlements"}},
	{"Treasury", "Treasury accounts.", []string{"/v2/treasury_accounts"}},
	{"Transfers", "Transfers between the merchant's accounts, and out to a bank account.", []string{"/v2/transfers"}},
	{"Reports", "The daily and monthly settlement reports.", []string{"/v2/reports"}},
	{"Reconciliation", "Bank statements matched to the settlements and transfers payd sent, and CSV exports.", []string{"/v2/reconciliation", "/v2/exports"}},
	{"Banks", "Bank and branch directories and lookups.", []string{"/v2/banks"}},
	{"Contacts", "Contacts, customers and KYC.", []string{"/v2/contacts", "/v2/contact", "/v2/customers", "/v2/kyc"}},
	{"Webhooks", "Webhook endpoints, events, their replay and stream, and the delivery log.", []string{"/v2/webhooks", "/v2/webhook_endpoints", "/v2/events"}},
	{"Disputes", "Card payments' disputes and their evidence.", []string{"/v2/disputes"}},
	{"Reference", "This document.", []string{"/openapi.json"}},
	{"Sandbox", "Sandbox only: simulations, the test clock and the sandbox bank.", []string{"/v2/sandbox", "/v1/simulate_deposit"}},
}

// tagOf is the tag of rt's operation, or "" when no tag holds its path.
func tagOf(rt route) string {
	if rt.sandboxOnly {
		return "Sandbox"
	}
	for _, t := range apiTags {
		for _, p := range t.prefixes {
			if rt.path == p || strings.HasPrefix(rt.path, p+"/") || strings.HasPrefix(rt.path, p+".") {
				return t.name
			}
		}
	}
	return ""
}

// tagsSection is the document's tags list: every tag some operation has, in
// apiTags' order.
func (a *API) tagsSection() []map[string]any {
	used := map[string]bool{}
	for _, rt := range a.routes {
		if !rt.raw {
			used[tagOf(rt)] = true
		}
	}
	var out []map[string]any
	for _, t := range apiTags {
		if used[t.name] {
			out = append(out, map[string]any{"name": t.name, "description": t.description})
		}
	}
	return out
}
