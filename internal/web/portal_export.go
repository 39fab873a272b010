package web

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/export"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/store"
)

// Exports (CONTRACT §19): the CSV of the payins, payout transactions or
// balance history of a currency for a date range, what the API's
// /v2/exports answer, for the Export links of the list pages; every
// signed-in user reads them, as they read the lists.

func (h *portalPages) exportRoutes() []portalRoute {
	return []portalRoute{{method: "GET", path: "/portal/exports/{file}", handle: h.export}}
}

// exports are the files of /portal/exports/, by name.
var exports = map[string]exportWriter{
	"payins.csv":          export.Payins,
	"payouts.csv":         export.Payouts,
	"balance_history.csv": export.BalanceHistory,
}

// exportWriter is one of package export's exports.
type exportWriter = func(ctx context.Context, db store.Querier, q export.Query, w io.Writer) error

// export answers the export the path names, of the query's currency (the
// merchant's first without one) and from_date..to_date (dates in the
// merchant's zone).
func (h *portalPages) export(w http.ResponseWriter, r *http.Request, s portal.Session) {
	file := r.PathValue("file")
	write, ok := exports[file]
	if !ok {
		h.fail(w, r, s, fault.NotFoundf("there is no export %s: payins.csv, payouts.csv and balance_history.csv are", file))
		return
	}
	name := strings.TrimSuffix(file, ".csv")
	query := r.URL.Query()
	p, _, err := h.principal(r.Context(), s, query.Get("currency"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	loc := merchant.Location(p.Timezone)
	from, to, err := exportDates(query.Get("from_date"), query.Get("to_date"), loc)
	var now time.Time
	if err == nil {
		now, err = h.Merchants.Now(r.Context(), h.DB.Read(), p.MerchantID)
	}
	if err == nil {
		from, to, err = export.Range(from, to, now, loc)
	}
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	hd := w.Header()
	portalHeaders(hd)
	hd.Set("Content-Type", export.ContentType)
	hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{
		"filename": fmt.Sprintf("%s_%s_%s_%s.csv", name, p.Currency, from.Format("20060102"), to.Add(-time.Millisecond).Format("20060102"))}))
	q := export.Query{MerchantID: p.MerchantID, AccountID: p.AccountID, Currency: p.Currency, From: from, To: to, Loc: loc}
	if err := write(r.Context(), h.DB.Read(), q, w); err != nil && r.Context().Err() == nil {
		h.log.Error("portal export ended early", "export", name, "err", err)
	}
}

// exportDates reads an export's from_date and to_date (zero when absent).
func exportDates(fromText, toText string, loc *time.Location) (from, to time.Time, err error) {
	f := fault.Fields{}
	if fromText != "" {
		if from, err = clock.ParseDate(fromText, loc); err != nil {
			f.Add("from_date", "must be a date (YYYY-MM-DD or DD/MM/YY) or an RFC 3339 time")
		}
	}
	if toText != "" {
		if to, err = clock.ParseDateEnd(toText, loc); err != nil {
			f.Add("to_date", "must be a date (YYYY-MM-DD or DD/MM/YY) or an RFC 3339 time")
		}
	}
	return from, to, f.Err()
}
