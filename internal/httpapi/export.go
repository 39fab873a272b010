package httpapi

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"payd/internal/export"
	"payd/internal/fault"
	"payd/internal/store"
)

func (a *API) exportRoutes() []route {
	params := []param{
		{name: "from_date", typ: "string", doc: fmt.Sprintf("Inclusive lower bound: RFC 3339 time, YYYY-MM-DD or DD/MM/YY (a bare date in the merchant's time zone); absent: %d days before to_date.", export.DefaultDays)},
		{name: "to_date", typ: "string", doc: fmt.Sprintf("Upper bound: RFC 3339 time (exclusive), or a date whose whole day is included; absent: the end of today. At most %d days after from_date (422 naming to_date).", export.MaxDays)},
		{name: "currency", typ: "string", doc: "ISO 4217 code; defaults to the calling app's, or the account's when account is given."},
		{name: "account", typ: "string", doc: "A treasury account's id: its records instead of the payments account's."},
	}
	common := "A CSV (text/csv, header row first) streamed as it is read, oldest first, of the records created in the range. Amounts are in major units as the API writes them, times RFC 3339 with milliseconds and the merchant's UTC offset; a text cell starting with =, +, - or @ is written with a leading ' so that a spreadsheet does not read it as a formula (amounts never are). Columns: "
	return []route{
		{method: "GET", path: "/v2/exports/payins.csv", auth: authKeys, summary: "Export the account's payins as CSV.",
			description: common + strings.Join(export.PayinColumns, ", ") + ".", params: params, contentType: export.ContentType, response: csvFile(""),
			status: 200, codes: []string{fault.CodeNotFound}, handle: a.exportHandler("payins", export.Payins)},
		{method: "GET", path: "/v2/exports/payouts.csv", auth: authKeys, summary: "Export the account's payout transactions as CSV, one row a transaction.",
			description: common + strings.Join(export.PayoutColumns, ", ") + " (recipient is the transaction's first and last name; external_id the transaction's, else the payout's).", params: params,
			contentType: export.ContentType, response: csvFile(""), status: 200, codes: []string{fault.CodeNotFound}, handle: a.exportHandler("payouts", export.Payouts)},
		{method: "GET", path: "/v2/exports/balance_history.csv", auth: authKeys, summary: "Export the account's balance history as CSV.",
			description: common + strings.Join(export.BalanceHistoryColumns, ", ") + " (the members of a GET /v2/balances/history record; outgoing, fees and total are its balance_detail).", params: params,
			contentType: export.ContentType, response: csvFile(""), status: 200, codes: []string{fault.CodeNotFound}, handle: a.exportHandler("balance_history", export.BalanceHistory)},
	}
}

// exportCall writes one export.
type exportCall func(ctx context.Context, db store.Querier, q export.Query, w io.Writer) error

// exportHandler answers an export named name: its query read and checked
// before anything is written, then the rows streamed. An error after the
// first bytes cannot change the status: it is logged and the body ends
// short (the last line incomplete or missing).
func (a *API) exportHandler(name string, call exportCall) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p := principal(r)
		q := newQuery(r)
		loc := a.location(p.Timezone)
		from, to := q.dateRange(loc)
		acc, err := a.balanceAccount(r, q, p)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		from, to, err = export.Range(from, to, a.MerchantClock.Of(p), loc)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", export.ContentType)
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{
			"filename": fmt.Sprintf("%s_%s_%s_%s.csv", name, acc.Currency, from.Format("20060102"), to.Add(-time.Millisecond).Format("20060102"))}))
		h.Set("Cache-Control", "private, no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		eq := export.Query{MerchantID: p.MerchantID, AccountID: acc.ID, Currency: acc.Currency, From: from, To: to, Loc: loc}
		fw := &flushWriter{w: w}
		err = call(r.Context(), a.DB.Read(), eq, fw)
		switch {
		case err != nil && !fw.wrote:
			h.Del("Content-Disposition")
			a.fail(w, r, err)
		case err != nil && r.Context().Err() == nil:
			a.log.Error("export ended early", "request_id", requestID(r.Context()), "export", name, "err", err)
		}
	}
}

// flushWriter sends what the export wrote to the client at once, so that
// nothing piles up in a buffer.
type flushWriter struct {
	w     http.ResponseWriter
	wrote bool
}

func (f *flushWriter) Write(p []byte) (int, error) {
	f.wrote = true
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}
