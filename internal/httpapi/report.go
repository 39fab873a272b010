package httpapi

import (
	"mime"
	"net/http"
	"strconv"

	"payd/internal/fault"
	"payd/internal/report"
)

// csvFile documents a text/csv answer (the OpenAPI schema of its body).
type csvFile string

func (a *API) reportRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/reports/settlements", auth: authKeys, summary: "Settlement reports of the calling app's account, latest period first.",
			description: "Reports are made at 09:00 local time in the merchant's time zone: daily (09:00 to 09:00) and monthly (09:00 on the 1st to 09:00 on the 1st), once per period, as a CSV with one row per balance record created in the period (columns Created At, Balance ID, Reference, Transaction Type, Request Type, Status, Currency, Amount, Fee, Total, Balance After; Status as it stood at period_end). Balance After is the available balance after the row: the previous row's plus the row's signed amount (money in adds its Amount once done, money out takes its Total unless it failed, money in still incoming or failed moves nothing; records of the same millisecond list money in before money out), and the last row's is summary.closing_balance; money that moved the available balance in the period without a row of its own (a record of an earlier period clearing or failing, a rolling reserve held or released) is counted before the first row. A report never changes (sha256). Each file_url is signed for this answer and valid 3 minutes on the merchant's clock; fetch it with a plain GET. Cursor paging: pass next_cursor back as cursor while has_more is true; a bad report_frequency, size or cursor is 422 VALIDATION_FAILED naming it.",
			params: []param{
				{name: "report_frequency", typ: "string", doc: "daily or monthly; absent: both."},
				{name: "currency", typ: "string", doc: "Absent: the calling app's currency."},
				{name: "cursor", typ: "string", doc: "next_cursor of the previous page."},
				{name: "size", typ: "integer", doc: "Reports per page, 1 to 100 (default 20)."},
			},
			response: report.Page{}, status: 200, codes: []string{fault.CodeNotFound}, handle: a.listReports},
		{method: "GET", path: report.FilePath, auth: authNone, summary: "A report's CSV file, through the signed link of its file_url.",
			description: "No headers needed: the link's signature is the authorisation. An altered link, one past its expiry (3 minutes after it was listed, on the merchant's clock), or one naming a report that is not the merchant's, is 403 LINK_INVALID, all alike.",
			params: []param{
				{name: "id", typ: "string", required: true, doc: "The report's id."},
				{name: "merchant", typ: "string", required: true, doc: "The merchant's id."},
				{name: "expires", typ: "integer", required: true, doc: "Expiry, unix milliseconds on the merchant's clock."},
				{name: "key", typ: "string", required: true, doc: "The signing key's id."},
				{name: "signature", typ: "string", required: true, doc: "HMAC-SHA256 (base64url) over merchant, report, expiry and key."},
			},
			contentType: report.ContentType, response: csvFile(""), status: 200, codes: []string{report.CodeLinkInvalid}, handle: a.reportFile},
	}
}

func (a *API) listReports(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	lq := report.ListQuery{Currency: currencyParam(q, principal(r)), Frequency: q.str("report_frequency"), Cursor: q.str("cursor"),
		Size: q.intIn("size", report.DefaultSize, 1, report.MaxSize)}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	page, err := a.Reports.List(r.Context(), principal(r), lq)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, page)
}

func (a *API) reportFile(w http.ResponseWriter, r *http.Request) {
	f, err := a.Reports.Open(r.Context(), r.URL.Query())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	h.Set("Content-Length", strconv.Itoa(len(f.Content)))
	h.Set("ETag", `"`+f.SHA256+`"`)
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	w.Write(f.Content)
}
