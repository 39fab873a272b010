package httpapi

import (
	"net/http"
	"regexp"

	"payd/internal/bank"
	"payd/internal/fault"
)

// BranchView is a Zengin branch as GET /v2/banks/branches answers it.
type BranchView struct {
	BankCode       string `json:"bank_code" example:"0001"`
	BankName       string `json:"bank_name" example:"みずほ"`
	BankNameKana   string `json:"bank_name_kana" doc:"Half-width katakana, as Zengin transfers carry it." example:"ﾐｽﾞﾎ"`
	BranchCode     string `json:"branch_code" example:"001"`
	BranchName     string `json:"branch_name" example:"東京営業部"`
	BranchNameKana string `json:"branch_name_kana" doc:"Half-width katakana." example:"ﾄｳｷﾖｳ"`
}

func (a *API) bankRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/banks/branches", auth: authKeys, summary: "A Zengin (JPY) bank's branch, or its branches.",
			description: "With branch_code, the one branch (404 when the bank has no such branch); without, the bank's branches in code order as a page list. The directory is the zengin-code dataset shipped with payd (its release and date are in internal/bank/data/SOURCE).",
			params: append([]param{
				{name: "bank_code", typ: "string", required: true, doc: "4-digit Zengin bank code."},
				{name: "branch_code", typ: "string", doc: "3-digit Zengin branch code."},
			}, pagingParams...),
			responses: []any{BranchView{}, pageList[BranchView]{}}, status: 200, errors: []int{401, 404, 422}, handle: a.bankBranches},
	}
}

var (
	zenginBankCode   = regexp.MustCompile(`^[0-9]{4}$`)
	zenginBranchCode = regexp.MustCompile(`^[0-9]{3}$`)
)

func branchView(b bank.Bank, r bank.Branch) BranchView {
	return BranchView{BankCode: b.Code, BankName: b.Name, BankNameKana: b.Kana, BranchCode: r.Code, BranchName: r.Name, BranchNameKana: r.Kana}
}

func (a *API) bankBranches(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	bankCode, branchCode := q.str("bank_code"), q.str("branch_code")
	page, perPage := q.paging()
	if !zenginBankCode.MatchString(bankCode) {
		q.fields.Add("bank_code", "must be a 4-digit Zengin bank code")
	}
	if branchCode != "" && !zenginBranchCode.MatchString(branchCode) {
		q.fields.Add("branch_code", "must be a 3-digit Zengin branch code")
	}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	z := a.Banks.Zengin()
	b, ok := z.Bank(bankCode)
	if !ok {
		a.fail(w, r, fault.NotFoundf("no Zengin bank %s", bankCode))
		return
	}
	if branchCode != "" {
		br, ok := z.Branch(bankCode, branchCode)
		if !ok {
			a.fail(w, r, fault.NotFoundf("bank %s has no branch %s", bankCode, branchCode))
			return
		}
		a.writeJSON(w, r, http.StatusOK, branchView(b, br))
		return
	}
	all := z.Branches(bankCode)
	var views []BranchView
	for i := (page - 1) * perPage; i < len(all) && i < page*perPage; i++ {
		views = append(views, branchView(b, all[i]))
	}
	a.writeJSON(w, r, http.StatusOK, newPageList(views, page, perPage, len(all)))
}
