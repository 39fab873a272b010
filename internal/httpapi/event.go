package httpapi

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/store"
	"payd/internal/webhook"
)

// replayRequest is the body of POST /v2/events/replay.
type replayRequest struct {
	EndpointID string   `json:"endpoint_id" doc:"The webhook endpoint to send the events to again." example:"we_0123456789ABCDEF"`
	FromDate   string   `json:"from_date" doc:"Events created from then (a date is its start in the merchant's time zone)." example:"2026-12-01"`
	ToDate     string   `json:"to_date" doc:"Events created before then (a date includes the whole day)." example:"2026-12-02"`
	Types      []string `json:"types,omitempty" doc:"Only these types (exact, prefix ending in *, or *); absent: every type the endpoint's enabled_events match." example:"[\"payin.*\"]"`
}

// currencyCode is what currency= takes.
var currencyCode = regexp.MustCompile(`^[A-Za-z]{3}$`)

var eventListParams = []param{
	{name: "type", typ: "string", doc: "Event types, comma-separated: exact (payin.received), a prefix ending in * (payout.*), or *."},
	{name: "from_date", typ: "string", doc: "Events created from then (inclusive)."},
	{name: "to_date", typ: "string", doc: "Events created before then (a date includes that day)."},
	{name: "currency", typ: "string", doc: "Only events whose record is in this currency (ISO 4217)."},
	{name: "cursor", typ: "string", doc: "next_cursor of the page before."},
	{name: "size", typ: "integer", doc: "Events per page, 1 to 100 (default 20)."},
}

func (a *API) eventRoutes() []route {
	return []route{
		{method: "GET", path: "/v2/events", auth: authKeys,
			summary: "The merchant's events, newest first (kept 30 days).",
			description: "Every event payd sent or would send a webhook for, in every currency, but ping. An event's id is the webhook-id of each delivery of it, " +
				"its data the record as its detail endpoint returned it when the event was written. Cursor-paged: give next_cursor as cursor while has_more.",
			params: eventListParams, response: webhook.EventPage{}, status: 200, handle: a.listEvents},
		{method: "POST", path: "/v2/events/replay", auth: authKeys,
			summary: "Send a range of events again to a webhook endpoint.",
			description: fmt.Sprintf("The events created in [from_date, to_date) whose type the endpoint's enabled_events (and types, when given) match are queued again for it, with their own webhook-ids. "+
				"At most %d events a replay (422 naming to_date); a disabled endpoint is 409 INVALID_STATE. Idempotent with Idempotency-Key.", webhook.MaxReplay),
			body: replayRequest{}, response: webhook.Replayed{}, status: 202, codes: []string{fault.CodeNotFound, fault.CodeInvalidState}, handle: a.replayEvents},
		{method: "GET", path: "/v2/events/stream", auth: authKeys, contentType: "text/event-stream",
			summary: "The merchant's events as they happen (Server-Sent Events).",
			description: fmt.Sprintf("Each event is sent as id: (the event id), event: (its type) and data: (the record, one line of JSON). "+
				"With a Last-Event-ID header the stream resumes right after that event, losing and repeating nothing within the retention; without it, it starts with the events written from now on. "+
				"An idle stream sends a comment line every 15 seconds. At most %d streams of a merchant are open on one payd process (429 RATE_LIMITED). "+
				"Events committed by another payd process on the same database arrive within about 100 ms (polling).", webhook.DefaultMaxStreams),
			params:   []param{{name: "type", typ: "string", doc: "Only these event types, comma-separated (exact, prefix ending in *, or *)."}},
			response: "", status: 200, codes: []string{fault.CodeRateLimited}, handle: a.streamEvents},
	}
}

// typeList reads a comma-separated type filter.
func typeList(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	for _, t := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(t))
	}
	return out
}

func (a *API) listEvents(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	p := principal(r)
	from, to := q.dateRange(a.location(p.Timezone))
	f := webhook.EventFilter{Types: typeList(q.str("type")), From: from, To: to, Cursor: q.str("cursor"), Currency: q.str("currency"),
		Size: q.intIn("size", webhook.DefaultEventPage, 1, webhook.MaxEventPage)}
	q.fields.AddErr(webhook.CheckTypes("type", f.Types))
	if f.Currency != "" && !currencyCode.MatchString(f.Currency) {
		q.fields.Add("currency", "must be an ISO 4217 code")
	}
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	page, err := a.Webhooks.Events(r.Context(), p.MerchantID, f)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeJSON(w, r, http.StatusOK, page)
}

func (a *API) replayEvents(w http.ResponseWriter, r *http.Request) {
	var req replayRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, r, err)
		return
	}
	p := principal(r)
	rp, err := readReplay(req, a.location(p.Timezone))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	expect(r, http.StatusAccepted, nil)
	res, err := inTx(a, r, func(tx *store.Tx) (webhook.Replayed, error) {
		return a.Webhooks.ReplayEvents(r.Context(), tx, p.MerchantID, rp)
	})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if body := claimOf(r).Body(); body != nil {
		writeBody(w, http.StatusAccepted, body)
		return
	}
	a.writeJSON(w, r, http.StatusAccepted, res)
}

// readReplay checks a replay's members and reads its dates in loc.
func readReplay(req replayRequest, loc *time.Location) (webhook.Replay, error) {
	f := fault.Fields{}
	rp := webhook.Replay{EndpointID: req.EndpointID, Types: req.Types}
	if req.EndpointID == "" || len(req.EndpointID) > 64 {
		f.Add("endpoint_id", "is required: a webhook endpoint's id")
	}
	var err error
	if req.FromDate == "" {
		f.Add("from_date", "is required")
	} else if rp.From, err = clock.ParseDate(req.FromDate, loc); err != nil {
		f.Add("from_date", "must be a date (YYYY-MM-DD or DD/MM/YY) or an RFC 3339 time")
	}
	if req.ToDate == "" {
		f.Add("to_date", "is required")
	} else if rp.To, err = clock.ParseDateEnd(req.ToDate, loc); err != nil {
		f.Add("to_date", "must be a date (YYYY-MM-DD or DD/MM/YY) or an RFC 3339 time")
	}
	if !rp.From.IsZero() && !rp.To.IsZero() && !rp.To.After(rp.From) {
		f.Add("to_date", "is not after from_date")
	}
	f.AddErr(webhook.CheckTypes("types", req.Types))
	return rp, f.Err()
}

func (a *API) streamEvents(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r)
	types := typeList(q.str("type"))
	if err := q.err(); err != nil {
		a.fail(w, r, err)
		return
	}
	ctx := r.Context()
	s, err := a.Webhooks.OpenStream(ctx, principal(r).MerchantID, r.Header.Get("Last-Event-ID"), types)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	defer s.Close()
	rc := http.NewResponseController(w)
	// A stream outlives the server's write timeout: each write has its own.
	const writeWithin = 30 * time.Second
	rc.SetWriteDeadline(time.Now().Add(writeWithin))
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, ": payd event stream\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	for {
		evs, ok, err := s.Next(ctx, a.Webhooks.StreamHeartbeat)
		if err != nil {
			a.log.Error("event stream", "request_id", requestID(ctx), "err", err)
			return
		}
		if !ok {
			return
		}
		rc.SetWriteDeadline(time.Now().Add(writeWithin))
		var b strings.Builder
		if len(evs) == 0 {
			b.WriteString(": heartbeat\n\n")
		}
		for _, e := range evs {
			fmt.Fprintf(&b, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
		}
		if _, err := w.Write([]byte(b.String())); err != nil || rc.Flush() != nil {
			return
		}
	}
}
