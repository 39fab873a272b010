package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payd/internal/server"
	"payd/internal/store"
)

// delivery is one request an endpointReceiver got.
type delivery struct {
	id, typ, timestamp, signature, auth string
	body                                []byte
}

// endpointReceiver records every delivery and answers status.
type endpointReceiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []delivery
}

func newEndpointReceiver(t *testing.T) *endpointReceiver {
	e := &endpointReceiver{}
	e.status.Store(200)
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got = append(e.got, delivery{id: r.Header.Get("webhook-id"), typ: r.Header.Get("X-Event-Type"), timestamp: r.Header.Get("webhook-timestamp"),
			signature: r.Header.Get("webhook-signature"), auth: r.Header.Get("Authorization"), body: body})
		e.mu.Unlock()
		w.WriteHeader(int(e.status.Load()))
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpointReceiver) deliveries() []delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// ids counts the deliveries by webhook-id.
func (e *endpointReceiver) ids() map[string]int {
	out := map[string]int{}
	for _, d := range e.deliveries() {
		out[d.id]++
	}
	return out
}

func (e *endpointReceiver) ofType(typ string) []delivery {
	var out []delivery
	for _, d := range e.deliveries() {
		if d.typ == typ {
			out = append(out, d)
		}
	}
	return out
}

// verifies reports whether d is signed with secret (Standard Webhooks).
func (d delivery) verifies(secret string) bool {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return false
	}
	h := http.Header{}
	h.Set("webhook-id", d.id)
	h.Set("webhook-timestamp", d.timestamp)
	h.Set("webhook-signature", d.signature)
	return wh.Verify(d.body, h) == nil
}

// loggedEvents reads GET /v2/events?query and its records.
func (p *payd) loggedEvents(as creds, query string) (records []map[string]any, next string) {
	p.t.Helper()
	r := p.get("/v2/events?"+query, as)
	want(p.t, r, 200)
	body := r.JSON(p.t)
	for _, rec := range body["records"].([]any) {
		records = append(records, rec.(map[string]any))
	}
	next, _ = body["next_cursor"].(string)
	if (next != "") != (body["has_more"] == true) {
		p.t.Errorf("next_cursor %q with has_more %v", next, body["has_more"])
	}
	return records, next
}

func eventIDs(records []map[string]any) []string {
	var out []string
	for _, r := range records {
		out = append(out, r["id"].(string))
	}
	return out
}

func eventTypes(records []map[string]any) []string {
	var out []string
	for _, r := range records {
		out = append(out, r["type"].(string))
	}
	return out
}

func (p *payd) newEndpoint(as creds, url string, events ...string) map[string]any {
	p.t.Helper()
	r := p.post("/v2/webhook_endpoints", as, map[string]any{"url": url, "enabled_events": events, "description": "test receiver"})
	want(p.t, r, 201)
	return r.JSON(p.t)
}

// TestEventsList: every event payd emits is in GET /v2/events, newest
// first, with the webhook-id its deliveries carry and the record as its
// detail endpoint returned it then; type (exact and prefix), currency and
// dates filter; size and the cursor page through without a repeat; ping
// is not listed; bad parameters are 422 naming them; another merchant sees
// none of it.
func TestEventsList(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		apps := p.merchant("IDR", "AUD")
		idr, aud := apps["IDR"], apps["AUD"]
		hooks := newHookReceiver(t, true)
		uuid := str(pinCreate(t, p, idr, pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"webhook_notification": map[string]any{"endpoint_url": hooks.URL}})), "uuid")
		pinSimulate(t, p, idr, uuid)
		detail := pinDetail(t, p, idr, uuid)
		p.newContact(aud, "jane@example.com", nil)
		audPayin := str(pinCreate(t, p, aud, pinBody("AUD", "au_payid_npp_aud", "25.00")), "uuid")
		pinSimulate(t, p, aud, audPayin)
		want(t, p.post("/v2/webhooks/test", idr, map[string]any{"endpoint_url": hooks.URL}), 201)

		all, next := p.loggedEvents(idr, "")
		if next != "" || len(all) < 2 {
			t.Fatalf("events = %v (next %q)", eventTypes(all), next)
		}
		if slices.Contains(eventTypes(all), "ping") {
			t.Errorf("ping is listed: %v", eventTypes(all))
		}
		for i := 1; i < len(all); i++ {
			if all[i-1]["created_at"].(string) < all[i]["created_at"].(string) {
				t.Errorf("not newest first: %v", all)
			}
		}
		var received map[string]any
		for _, e := range all {
			if e["type"] == "payin.received" && e["data"].(map[string]any)["uuid"] == uuid {
				received = e
			}
		}
		if received == nil {
			t.Fatalf("no payin.received of %s in %v", uuid, eventTypes(all))
		}
		if got, want := received["data"].(map[string]any)["status"], detail["status"]; got != want {
			t.Errorf("data status = %v, detail %v", got, want)
		}
		waitUntil(t, "the payin's webhooks delivered", 10*time.Second, func() bool { return hooks.count(received["id"].(string)) == 1 })

		payins, _ := p.loggedEvents(idr, "type=payin.*&currency=IDR")
		if len(payins) == 0 || slices.ContainsFunc(payins, func(e map[string]any) bool { return e["data"].(map[string]any)["uuid"] != uuid }) {
			t.Errorf("type=payin.*&currency=IDR = %v", payins)
		}
		exact, _ := p.loggedEvents(idr, "type=payin.received")
		if len(exact) != 2 || !slices.Equal(eventTypes(exact), []string{"payin.received", "payin.received"}) {
			t.Errorf("type=payin.received = %v, want the IDR and AUD receipts", eventTypes(exact))
		}
		if aud, _ := p.loggedEvents(idr, "currency=aud&type=payin.received"); len(aud) != 1 || aud[0]["data"].(map[string]any)["uuid"] != audPayin {
			t.Errorf("currency=aud = %v", aud)
		}
		if none, _ := p.loggedEvents(idr, "type=payout.*,transfer.*"); len(none) != 0 {
			t.Errorf("type=payout.*,transfer.* = %v", eventTypes(none))
		}
		tomorrow := p.clockNow(idr).Add(48 * time.Hour).Format("2006-01-02")
		if none, _ := p.loggedEvents(idr, "from_date="+tomorrow); len(none) != 0 {
			t.Errorf("from_date=%s = %v", tomorrow, eventTypes(none))
		}

		var paged []string
		cursor := ""
		for range len(all) + 1 {
			page, next := p.loggedEvents(idr, "size=1&cursor="+url.QueryEscape(cursor))
			paged = append(paged, eventIDs(page)...)
			if cursor = next; cursor == "" {
				break
			}
		}
		if !slices.Equal(paged, eventIDs(all)) {
			t.Errorf("paged by one = %v, want %v", paged, eventIDs(all))
		}

		for _, q := range []struct{ query, field string }{
			{"size=0", "size"}, {"size=101", "size"}, {"type=payin%20received", "type"}, {"cursor=zzz", "cursor"},
			{"currency=AUDX", "currency"}, {"from_date=yesterday", "from_date"},
		} {
			wantError(t, p.get("/v2/events?"+q.query, idr), 422, "VALIDATION_FAILED", q.field)
		}

		other := p.merchant("IDR")["IDR"]
		if theirs, _ := p.loggedEvents(other, ""); len(theirs) != 0 {
			t.Errorf("another merchant sees %v", eventTypes(theirs))
		}
	})
}

// TestWebhookEndpoints: an endpoint gets the events its enabled_events
// match, with the event's webhook-id, signed with its own secret (shown
// once) and no Authorization; rotation signs with both secrets; update,
// list (never the secret) and delete; the record's own endpoint_url gets
// its events as before; another merchant cannot touch the endpoint.
func TestWebhookEndpoints(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		idr := p.merchant("IDR")["IDR"]
		own := newHookReceiver(t, true)
		recv := newEndpointReceiver(t)
		ep := p.newEndpoint(idr, recv.URL, "payin.*")
		id, secret := str(ep, "id"), str(ep, "secret")
		if !strings.HasPrefix(secret, "whsec_") || ep["status"] != "enabled" || !slices.Equal(anyStrings(ep["enabled_events"]), []string{"payin.*"}) {
			t.Fatalf("created = %v", ep)
		}
		list := p.get("/v2/webhook_endpoints", idr)
		want(t, list, 200)
		if strings.Contains(string(list.Body), secret) || strings.Contains(string(list.Body), `"secret"`) {
			t.Errorf("the list shows a secret: %s", list.Body)
		}

		uuid := str(pinCreate(t, p, idr, pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"webhook_notification": map[string]any{"endpoint_url": own.URL, "authorization_header": "Basic b3du"}})), "uuid")
		pinSimulate(t, p, idr, uuid)
		events, _ := p.loggedEvents(idr, "type=payin.*")
		waitUntil(t, "every payin event at the endpoint", 10*time.Second, func() bool { return len(recv.deliveries()) == len(events) })
		for _, d := range recv.deliveries() {
			if !slices.Contains(eventIDs(events), d.id) || d.auth != "" || !d.verifies(secret) || strings.Contains(d.signature, " ") {
				t.Errorf("delivery %s %s: auth %q, signature %q (listed %v)", d.typ, d.id, d.auth, d.signature, eventIDs(events))
			}
		}
		for _, e := range events {
			waitUntil(t, "the record's own endpoint_url got "+e["id"].(string), 10*time.Second, func() bool { return own.count(e["id"].(string)) == 1 })
		}

		r := p.post("/v2/webhook_endpoints/rotate_secret", idr, map[string]any{"id": id})
		want(t, r, 200)
		rotated := r.JSON(t)
		newSecret := str(rotated, "secret")
		if newSecret == secret || rotated["previous_secret_expires_at"] == nil {
			t.Fatalf("rotated = %v", rotated)
		}
		pinReceived(t, p, idr, nil, "")
		waitUntil(t, "a delivery after the rotation", 10*time.Second, func() bool { return len(recv.deliveries()) > len(events) })
		after := recv.deliveries()[len(events)]
		if strings.Count(after.signature, "v1,") != 2 || !after.verifies(newSecret) || !after.verifies(secret) {
			t.Errorf("after the rotation webhook-signature = %q", after.signature)
		}

		r = p.post("/v2/webhook_endpoints/update", idr, map[string]any{"id": id, "enabled_events": []string{"payout.*", "payin.received"}, "description": "changed"})
		want(t, r, 200)
		if got := r.JSON(t); got["description"] != "changed" || !slices.Equal(anyStrings(got["enabled_events"]), []string{"payout.*", "payin.received"}) {
			t.Errorf("updated = %v", got)
		}
		third := str(pinCreate(t, p, idr, pinBody("IDR", "id_bank_qris_idr", 100000)), "uuid")
		want(t, p.post("/v2/payins/simulate", idr, map[string]any{"uuid": third, "status": "failed"}), 200)
		if failed, _ := p.loggedEvents(idr, "type=payin.failed"); len(failed) != 1 {
			t.Fatalf("payin.failed events = %v", failed)
		}
		if dels := p.get("/v2/webhooks/deliveries?uuid="+third, idr).JSON(t)["records"].([]any); len(dels) != 0 {
			t.Errorf("payin.failed went to an endpoint that wants payout.* and payin.received: %v", dels)
		}
		pinReceived(t, p, idr, nil, "")
		waitUntil(t, "payin.received after the update", 10*time.Second, func() bool { return len(recv.ofType("payin.received")) == 3 })

		other := p.merchant("IDR")["IDR"]
		for _, path := range []string{"/v2/webhook_endpoints/update", "/v2/webhook_endpoints/rotate_secret", "/v2/webhook_endpoints/delete"} {
			wantError(t, p.post(path, other, map[string]any{"id": id, "description": "theirs"}), 404, "NOT_FOUND", "")
		}
		if theirs := p.get("/v2/webhook_endpoints", other).JSON(t)["records"].([]any); len(theirs) != 0 {
			t.Errorf("another merchant lists %v", theirs)
		}

		for _, bad := range []map[string]any{
			{"url": recv.URL},
			{"url": recv.URL, "enabled_events": []string{}},
			{"url": recv.URL, "enabled_events": []string{"Payin Received"}},
			{"url": "ftp://example.com", "enabled_events": []string{"*"}},
			{"url": recv.URL, "enabled_events": []string{"*"}, "description": strings.Repeat("x", 501)},
		} {
			r := p.post("/v2/webhook_endpoints", idr, bad)
			want(t, r, 422)
		}
		wantError(t, p.post("/v2/webhook_endpoints/update", idr, map[string]any{"id": id, "status": "paused"}), 422, "VALIDATION_FAILED", "status")

		r = p.post("/v2/webhook_endpoints/delete", idr, map[string]any{"id": id})
		want(t, r, 200)
		if got := r.JSON(t); got["id"] != id || got["deleted"] != true {
			t.Errorf("deleted = %v", got)
		}
		wantError(t, p.post("/v2/webhook_endpoints/delete", idr, map[string]any{"id": id}), 404, "NOT_FOUND", "")
		if left := p.get("/v2/webhook_endpoints", idr).JSON(t)["records"].([]any); len(left) != 0 {
			t.Errorf("after delete: %v", left)
		}
	})
}

func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestWebhookEndpointsProductionURL: production refuses an endpoint url
// that is not https (422 naming url).
func TestWebhookEndpointsProductionURL(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		for _, u := range []string{"http://shop.example/hooks", "https://127.0.0.1/hooks"} {
			wantError(t, p.post("/v2/webhook_endpoints", m, map[string]any{"url": u, "enabled_events": []string{"*"}}), 422, "VALIDATION_FAILED", "url")
		}
	}, production)
}

// TestWebhookEndpointDisabled: an endpoint that answers 410 is disabled at
// once, and one whose deliveries fail for the disable period (shortened
// here from 3 days) too; each time webhook_endpoint.disabled goes to the
// merchant's other endpoints; a replay to a disabled endpoint is 409.
func TestWebhookEndpointDisabled(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		idr := p.merchant("IDR")["IDR"]
		watcher := newEndpointReceiver(t)
		p.newEndpoint(idr, watcher.URL, "webhook_endpoint.*")
		gone := newEndpointReceiver(t)
		gone.status.Store(410)
		goneID := str(p.newEndpoint(idr, gone.URL, "*"), "id")
		failing := newEndpointReceiver(t)
		failing.status.Store(500)
		failingID := str(p.newEndpoint(idr, failing.URL, "payin.*"), "id")

		pinReceived(t, p, idr, nil, "")
		waitUntil(t, "two webhook_endpoint.disabled events", 20*time.Second, func() bool { return len(watcher.ofType("webhook_endpoint.disabled")) == 2 })
		reasons := map[string]string{}
		for _, ep := range p.get("/v2/webhook_endpoints", idr).JSON(t)["records"].([]any) {
			ep := ep.(map[string]any)
			if ep["status"] == "disabled" {
				reasons[ep["id"].(string)] = ep["disabled_reason"].(string)
			}
		}
		if !strings.Contains(reasons[goneID], "410") || !strings.Contains(reasons[failingID], "failed") || len(reasons) != 2 {
			t.Errorf("disabled = %v", reasons)
		}
		for _, d := range watcher.ofType("webhook_endpoint.disabled") {
			var ep map[string]any
			json.Unmarshal(d.body, &ep)
			if ep["status"] != "disabled" || (ep["id"] != goneID && ep["id"] != failingID) {
				t.Errorf("webhook_endpoint.disabled body = %s", d.body)
			}
		}
		if got, _ := p.loggedEvents(idr, "type=webhook_endpoint.disabled"); len(got) != 2 {
			t.Errorf("listed webhook_endpoint.disabled = %d", len(got))
		}
		today := p.clockNow(idr).In(sydney(t)).Format("2006-01-02")
		wantError(t, p.post("/v2/events/replay", idr, map[string]any{"endpoint_id": goneID, "from_date": today, "to_date": today}), 409, "INVALID_STATE", "")
		want(t, p.post("/v2/webhook_endpoints/update", idr, map[string]any{"id": failingID, "status": "enabled"}), 200)
	}, func(c *server.Config) {
		c.WebhookSchedule = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
		c.WebhookDisableAfter = 5 * time.Millisecond
	})
}

// TestEventsReplay: a replay sends the range's events again to the
// endpoint with the same webhook-ids; with an Idempotency-Key it is done
// once; over 10,000 events is 422 naming to_date; another merchant's
// endpoint is 404.
func TestEventsReplay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		idr := p.merchant("IDR")["IDR"]
		recv := newEndpointReceiver(t)
		id := str(p.newEndpoint(idr, recv.URL, "payin.*"), "id")
		pinReceived(t, p, idr, nil, "")
		events, _ := p.loggedEvents(idr, "type=payin.*")
		waitUntil(t, "first deliveries", 10*time.Second, func() bool { return len(recv.deliveries()) == len(events) })

		today := p.clockNow(idr).In(sydney(t)).Format("2006-01-02")
		body := map[string]any{"endpoint_id": id, "from_date": today, "to_date": today, "types": []string{"payin.received"}}
		key := map[string]string{"Idempotency-Key": "replay-1"}
		r := p.do(req{method: "POST", path: "/v2/events/replay", as: &idr, body: body, header: key})
		want(t, r, 202)
		if got := r.JSON(t)["queued"]; fmt.Sprint(got) != "1" {
			t.Fatalf("queued = %v, want 1 (the payin.received)", got)
		}
		again := p.do(req{method: "POST", path: "/v2/events/replay", as: &idr, body: body, header: key})
		want(t, again, 202)
		if again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the same key again was not a replay: %v", again.Header)
		}
		waitUntil(t, "the replayed event", 10*time.Second, func() bool { return len(recv.deliveries()) == len(events)+1 })
		counts := recv.ids()
		for _, e := range events {
			want := 1
			if e["type"] == "payin.received" {
				want = 2
			}
			if counts[e["id"].(string)] != want {
				t.Errorf("%s %s delivered %d times, want %d", e["type"], e["id"], counts[e["id"].(string)], want)
			}
		}
		r = p.post("/v2/events/replay", idr, map[string]any{"endpoint_id": id, "from_date": today, "to_date": today})
		want(t, r, 202)
		if got := fmt.Sprint(r.JSON(t)["queued"]); got != strconv.Itoa(len(events)) {
			t.Errorf("replay of every type queued %s, want %d", got, len(events))
		}

		other := p.merchant("IDR")["IDR"]
		wantError(t, p.post("/v2/events/replay", other, body), 404, "NOT_FOUND", "")
		wantError(t, p.post("/v2/events/replay", idr, map[string]any{"endpoint_id": id, "from_date": today}), 422, "VALIDATION_FAILED", "to_date")
		wantError(t, p.post("/v2/events/replay", idr, map[string]any{"endpoint_id": id, "from_date": today, "to_date": "2000-01-01"}), 422, "VALIDATION_FAILED", "to_date")

		// 10,001 events in the range: written straight to the table, as
		// making them through the API would take minutes.
		now := p.clockNow(idr).UnixMilli()
		err := p.srv.DB.Exec(context.Background(), func(tx *store.Tx) error {
			for i := range 10_001 {
				if err := tx.Send(context.Background(), `INSERT INTO events (merchant_id, id, event_type, record_uuid, currency, body, created_at, written_at)
					VALUES ($1, $2, 'payin.pending', 'BULK', 'IDR', $3, $4, $4)`, idr.MerchantID, fmt.Sprintf("msg_bulk%08d", i), []byte(`{}`), now); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, p.post("/v2/events/replay", idr, map[string]any{"endpoint_id": id, "from_date": today, "to_date": today}), 422, "VALIDATION_FAILED", "to_date")
	})
}

// sseReader reads an event stream.
type sseReader struct {
	res    *http.Response
	events chan delivery
	done   chan struct{}
	beats  atomic.Int64
}

// openStream opens GET /v2/events/stream as as, after lastEventID when given.
func (p *payd) openStream(as creds, query, lastEventID string) (*http.Response, error) {
	hr, err := http.NewRequest("GET", p.base+"/v2/events/stream?"+query, nil)
	if err != nil {
		return nil, err
	}
	hr.Header.Set("app-id", as.AppID)
	hr.Header.Set("secret-key", as.SecretKey)
	if lastEventID != "" {
		hr.Header.Set("Last-Event-ID", lastEventID)
	}
	return http.DefaultClient.Do(hr)
}

func (p *payd) stream(as creds, lastEventID string) *sseReader {
	p.t.Helper()
	res, err := p.openStream(as, "", lastEventID)
	if err != nil {
		p.t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(res.Body)
		p.t.Fatalf("stream answered %d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	s := &sseReader{res: res, events: make(chan delivery, 1000), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 8<<20)
		var d delivery
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && d.id != "":
				s.events <- d
				d = delivery{}
			case strings.HasPrefix(line, ": heartbeat"):
				s.beats.Add(1)
			case strings.HasPrefix(line, "id: "):
				d.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				d.typ = line[7:]
			case strings.HasPrefix(line, "data: "):
				d.body = []byte(line[6:])
			}
		}
	}()
	p.t.Cleanup(func() { res.Body.Close() })
	return s
}

// next reads n events of the stream.
func (s *sseReader) next(t *testing.T, n int) []delivery {
	t.Helper()
	var out []delivery
	timeout := time.After(15 * time.Second)
	for len(out) < n {
		select {
		case d := <-s.events:
			out = append(out, d)
		case <-timeout:
			t.Fatalf("stream: %d of %d events within 15s", len(out), n)
		}
	}
	return out
}

func (s *sseReader) close() {
	s.res.Body.Close()
	<-s.done
}

func deliveryIDs(ds []delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.id)
	}
	return out
}

// TestEventStream: the stream sends each new event (id, event, data);
// after Last-Event-ID it resumes with exactly the events after it (none
// lost, none repeated), oldest first; an idle stream beats; a merchant's
// open streams are bounded (429 RATE_LIMITED); a Last-Event-ID that is no
// event of the merchant is 422.
func TestEventStream(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		idr := p.merchant("IDR")["IDR"]
		s := p.stream(idr, "")
		first := str(pinCreate(t, p, idr, pinBody("IDR", "id_bank_qris_idr", 100000)), "uuid")
		pinSimulate(t, p, idr, first)
		listed, _ := p.loggedEvents(idr, "")
		got := s.next(t, len(listed))
		slices.Reverse(listed)
		if !slices.Equal(deliveryIDs(got), eventIDs(listed)) {
			t.Fatalf("streamed %v, listed %v", deliveryIDs(got), eventIDs(listed))
		}
		for i, d := range got {
			var data map[string]any
			if err := json.Unmarshal(d.body, &data); err != nil || d.typ != listed[i]["type"] || data["uuid"] != first {
				t.Errorf("streamed %s %s %s", d.id, d.typ, d.body)
			}
		}
		waitUntil(t, "a heartbeat", 10*time.Second, func() bool { return s.beats.Load() > 0 })
		s.close()

		var more []string
		for range 3 {
			more = append(more, pinReceived(t, p, idr, nil, ""))
		}
		resumed := p.stream(idr, got[len(got)-1].id)
		rest := resumed.next(t, 3)
		for i, d := range rest {
			var data map[string]any
			json.Unmarshal(d.body, &data)
			if d.typ != "payin.received" || data["uuid"] != more[i] {
				t.Errorf("resumed event %d = %s %s", i, d.typ, d.body)
			}
		}
		select {
		case extra := <-resumed.events:
			t.Errorf("resumed stream repeated or invented %s %s", extra.id, extra.typ)
		default:
		}

		var open []*sseReader
		for range 4 {
			open = append(open, p.stream(idr, ""))
		}
		res, err := p.openStream(idr, "", "")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 429 || !strings.Contains(string(body), "RATE_LIMITED") {
			t.Errorf("sixth stream answered %d %s", res.StatusCode, body)
		}
		for _, o := range open {
			o.close()
		}
		other := p.merchant("IDR")["IDR"]
		res, err = p.openStream(other, "", got[0].id)
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 422 || !strings.Contains(string(body), "Last-Event-ID") {
			t.Errorf("another merchant's Last-Event-ID answered %d %s", res.StatusCode, body)
		}
		res, err = p.openStream(idr, "type=bad%20type", "")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 422 {
			t.Errorf("type=bad type answered %d", res.StatusCode)
		}
	}, func(c *server.Config) { c.StreamHeartbeat = 200 * time.Millisecond })
}

// TestEventStreamAcrossProcesses: a stream on one payd process sees the
// events another process commits to the same PostgreSQL database, in order,
// each once.
func TestEventStreamAcrossProcesses(t *testing.T) {
	t.Parallel()
	eachShared(t, func(t *testing.T, a, b *payd) {
		m := a.merchant("IDR")["IDR"]
		s := a.stream(m, "")
		var made []string
		for range 5 {
			made = append(made, pinReceived(t, b, m, nil, ""))
		}
		got := s.next(t, 5)
		for i, d := range got {
			var data map[string]any
			json.Unmarshal(d.body, &data)
			if data["uuid"] != made[i] {
				t.Errorf("event %d from the other process = %s", i, d.body)
			}
		}
	})
}

// TestEventStreamSignalledAcrossProcesses: the events one payd process
// commits wake a stream open on another process sharing its PostgreSQL
// database at once, by the signal the committing process sends (LISTEN and
// NOTIFY), not by the stream's poll: both processes here poll and beat once
// an hour, so without the signal the stream would see nothing within the
// reader's bound. Each payin's events are awaited before the next is made
// (an event of the stream's own process would wake it for the other's
// too); they arrive in order, each once, whichever process made them.
func TestEventStreamSignalledAcrossProcesses(t *testing.T) {
	t.Parallel()
	eachShared(t, func(t *testing.T, a, b *payd) {
		m := a.merchant("IDR")["IDR"]
		s := a.stream(m, "")
		seen := 0
		for i, by := range []*payd{b, b, a, b} {
			uuid := pinReceived(t, by, m, nil, "")
			listed, _ := a.loggedEvents(m, "size=100")
			slices.Reverse(listed)
			fresh := listed[seen:]
			got := s.next(t, len(fresh))
			seen = len(listed)
			if !slices.Equal(deliveryIDs(got), eventIDs(fresh)) {
				t.Fatalf("payin %d: streamed %v, listed %v", i, deliveryIDs(got), eventIDs(fresh))
			}
			for _, d := range got {
				var data map[string]any
				json.Unmarshal(d.body, &data)
				if data["uuid"] != uuid {
					t.Errorf("payin %d: streamed %s %s, not of %s", i, d.typ, d.body, uuid)
				}
			}
		}
	}, func(c *server.Config) { c.StreamPoll, c.StreamHeartbeat = time.Hour, time.Hour })
}

// TestEventStreamClosedOnShutdown: a server shutting down (SIGTERM) ends
// its open streams at once instead of waiting for its grace to pass.
func TestEventStreamClosedOnShutdown(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		s := p.stream(m, "")
		started := time.Now()
		p.srv.Webhooks.CloseStreams()
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("the stream is still open 5s after shutdown began")
		}
		if took := time.Since(started); took > 2*time.Second {
			t.Errorf("the stream took %s to end", took)
		}
		res, err := p.openStream(m, "", "")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 503 {
			t.Errorf("a stream opened while shutting down answered %d, want 503", res.StatusCode)
		}
	})
}
