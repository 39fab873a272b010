package httpapi

import (
	"net/http"

	"payd/internal/bank"
)

// branchAnswer documents GET /v2/banks/branches: one branch with
// branch_code, a page list of the bank's branches without it.
type branchAnswer struct{}

func (branchAnswer) oneOfShapes() []any { return []any{bank.Branch{}, pageList[bank.Branch]{}} }

func (a *API) bankRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/banks/branches", auth: authKeys, summary: "Japanese bank branches (Zengin codes), from the directory shipped with payd.",
			description: "With branch_code: that branch, {bank_code, bank_name, bank_name_kana, branch_code, branch_name, branch_name_kana}. Without it: the bank's branches by branch code, as a page list. Names are the Zengin directory's (zengin-code data, pinned and embedded; the kana fields are half-width katakana, as Zengin transfers and simulate_deposit remitters carry them). A code that is not 4 (bank) or 3 (branch) digits is a 422; an unknown bank or branch a 404 naming it. The same directory checks jp_bank_jpy payouts' bank_code and branch_code.",
			params: append([]param{
				{name: "bank_code", typ: "string", required: true, doc: "Zengin bank code, 4 digits (0001)."},
				{name: "branch_code", typ: "string", doc: "Zengin branch code, 3 digits (001)."},
			}, pagingParams...),
			response: branchAnswer{}, status: 200, errors: []int{401, 404, 422}, handle: a.bankBranches},
	}
}

func (a *API) bankBranches(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	code, branch := q.str("bank_code"), q.str("branch_code")
	if code == "" {
		q.fields.Add("bank_code", "is required")
	}
	page, perPage := q.paging()
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	if r.URL.Query().Has("branch_code") {
		b, err := a.Banks.Branch(code, branch)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		a.writeJSON(w, r, http.StatusOK, b)
		return
	}
	list, total, err := a.Banks.Branches(code, page, perPage)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(list, page, perPage, total))
}
