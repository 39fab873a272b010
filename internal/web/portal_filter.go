package web

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"payd/internal/fault"
)

// A list a finance user can work (issue 54 item 3): a GET form of a status
// select built from the domain's statuses, a currency select of the
// merchant's accounts, a date range in the merchant's zone and a search
// box, kept in the query string so that paging and the Export link carry
// them. A value the form cannot have sent (a status typed into the
// address, a date that is not one) is an error on the page, never the
// whole list.

// maxSearch bounds the search box: a uuid, an external_id or an email.
const maxSearch = 254

// listFilter is a list page's filter form as the query string fills it.
type listFilter struct {
	// Path is the list's page, the form's action.
	Path string
	// Statuses are the select's options; Status the one chosen ("" for any).
	Statuses []string
	Status   string
	// Currencies are the merchant's accounts'; Currency the one chosen
	// ("" for every currency where AnyCurrency allows it).
	Currencies  []string
	Currency    string
	AnyCurrency bool
	// FromDate and ToDate are the dates as given (YYYY-MM-DD, the
	// merchant's zone); from and to the instants they start and end.
	FromDate, ToDate string
	from, to         time.Time
	// Search is a uuid, external_id or email.
	Search string
	// ZoneName is the zone the dates are in.
	ZoneName string
	// Keep are the query's other values the form sends again (the payouts'
	// waiting list), by name.
	Keep map[string]string
}

// readFilter reads r's filter of a list of statuses and currencies in loc:
// the filter as given, and a validation error naming each value the form
// could not have sent.
func readFilter[S ~string](r *http.Request, path string, statuses []S, currencies []string, anyCurrency bool, loc *time.Location) (listFilter, error) {
	q := r.URL.Query()
	f := listFilter{Path: path, Currencies: currencies, AnyCurrency: anyCurrency, Status: q.Get("status"), Currency: q.Get("currency"),
		FromDate: strings.TrimSpace(q.Get("from_date")), ToDate: strings.TrimSpace(q.Get("to_date")), Search: strings.TrimSpace(q.Get("search")), ZoneName: loc.String()}
	for _, s := range statuses {
		f.Statuses = append(f.Statuses, string(s))
	}
	problems := fault.Fields{}
	if f.Status != "" && !slices.Contains(f.Statuses, f.Status) {
		problems.Add("status", fmt.Sprintf("there is no status %q: choose one of %s", clipText(f.Status), strings.Join(f.Statuses, ", ")))
	}
	if f.Currency == "" && !anyCurrency && len(currencies) > 0 {
		f.Currency = currencies[0]
	}
	if f.Currency != "" && !slices.Contains(currencies, f.Currency) {
		problems.Add("currency", fmt.Sprintf("the merchant has no %q account: choose one of %s", clipText(f.Currency), strings.Join(currencies, ", ")))
	}
	if utf8.RuneCountInString(f.Search) > maxSearch {
		problems.Add("search", fmt.Sprintf("must be at most %d characters: a uuid, an external_id or an email", maxSearch))
	}
	from, to, err := exportDates(f.FromDate, f.ToDate, loc)
	problems.AddErr(err)
	if err == nil && !from.IsZero() && !to.IsZero() && !to.After(from) {
		problems.Add("to_date", "must not be before from_date")
	}
	f.from, f.to = from, to
	return f, problems.Err()
}

// clipText is a value typed into the address, short enough to repeat.
func clipText(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "…"
}

// Filtered reports whether any filter is set (the page says "No payins
// match" rather than "No payins").
func (f listFilter) Filtered() bool {
	return f.Status != "" || f.FromDate != "" || f.ToDate != "" || f.Search != "" || (f.AnyCurrency && f.Currency != "")
}

// Export is the link to the export file of currency for the filter's
// dates (package export's own range when there are none).
func (f listFilter) Export(file, currency string) string {
	q := url.Values{"currency": {currency}}
	if f.FromDate != "" {
		q.Set("from_date", f.FromDate)
	}
	if f.ToDate != "" {
		q.Set("to_date", f.ToDate)
	}
	return "/portal/exports/" + file + "?" + q.Encode()
}

// ExportCurrencies are the currencies the Export links are of: the one
// chosen, or every one.
func (f listFilter) ExportCurrencies() []string {
	if f.Currency != "" {
		return []string{f.Currency}
	}
	return f.Currencies
}

// problemText is a domain error's message with its fields, as a page says it.
func problemText(err error) string {
	e, ok := fault.As(err)
	if !ok {
		return "Something went wrong; try again."
	}
	msg := e.Message
	for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
		msg += " (" + k + ": " + e.Fields[k] + ")"
	}
	return msg
}
