package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/input"
)

// Page list bounds (CONTRACT §3).
const (
	defaultPerPage = 20
	maxPerPage     = 100
	maxPage        = 1_000_000
	// maxQueryValueLen bounds any single query value.
	maxQueryValueLen = 256
)

// checkQuery refuses a query string that breaks the input rule (a control
// character or broken UTF-8 in any name or value: 422 naming the parameter)
// before the handler reads it, on every route alike (CONTRACT §24).
func (a *API) checkQuery(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			if err := input.Values(r.URL.Query()); err != nil {
				a.fail(w, r, err)
				return
			}
		}
		next(w, r)
	}
}

// queryReader reads query parameters, collecting every problem.
type queryReader struct {
	r      *http.Request
	fields fault.Fields
}

func newQuery(r *http.Request) *queryReader {
	return &queryReader{r: r, fields: fault.Fields{}}
}

func (q *queryReader) str(name string) string {
	v := q.r.URL.Query().Get(name)
	if len(v) > maxQueryValueLen {
		q.fields.Add(name, "is too long")
		return ""
	}
	return v
}

// required reads a parameter that must be given.
func (q *queryReader) required(name string) string {
	v := q.str(name)
	if v == "" {
		q.fields.Add(name, "is required") // a value too long was said so first
	}
	return v
}

// intIn reads an optional integer in [lo, hi], def when absent.
func (q *queryReader) intIn(name string, def, lo, hi int) int {
	v := q.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		q.fields.Add(name, "must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
		return def
	}
	return n
}

// from reads an inclusive date filter; a bare date is the start of that day in loc.
func (q *queryReader) from(name string, loc *time.Location) time.Time {
	v := q.str(name)
	if v == "" {
		return time.Time{}
	}
	t, err := clock.ParseDate(v, loc)
	if err != nil {
		q.fields.Add(name, "must be a date (YYYY-MM-DD or DD/MM/YY) or an RFC 3339 time")
	}
	return t
}

// to reads an exclusive date bound; a bare date includes that whole day.
func (q *queryReader) to(name string, loc *time.Location) time.Time {
	v := q.str(name)
	if v == "" {
		return time.Time{}
	}
	t, err := clock.ParseDateEnd(v, loc)
	if err != nil {
		q.fields.Add(name, "must be a date (YYYY-MM-DD or DD/MM/YY) or an RFC 3339 time")
	}
	return t
}

// dateRange reads from_date and to_date and refuses a range that ends before it starts.
func (q *queryReader) dateRange(loc *time.Location) (from, to time.Time) {
	from, to = q.from("from_date", loc), q.to("to_date", loc)
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		q.fields.Add("to_date", "is before from_date")
	}
	return from, to
}

// err returns the collected problems as a 422 naming each parameter.
func (q *queryReader) err() error { return q.fields.Err() }

// paging reads page (from 1) and per_page (1 to 100, default 20).
func (q *queryReader) paging() (page, perPage int) {
	return q.intIn("page", 1, 1, maxPage), q.intIn("per_page", defaultPerPage, 1, maxPerPage)
}

// pageList is the envelope of every page list (CONTRACT §3).
type pageList[T any] struct {
	PerPage   int `json:"per_page"`
	Page      int `json:"page"`
	TotalPage int `json:"total_page"`
	Total     int `json:"total"`
	Records   []T `json:"records"`
}

func newPageList[T any](records []T, page, perPage, total int) pageList[T] {
	if records == nil {
		records = []T{}
	}
	return pageList[T]{PerPage: perPage, Page: page, TotalPage: (total + perPage - 1) / perPage, Total: total, Records: records}
}

// pagingParams documents page and per_page.
var pagingParams = []param{
	{name: "page", typ: "integer", doc: "Page number, from 1."},
	{name: "per_page", typ: "integer", doc: "Records per page, 1 to 100 (default 20)."},
}
