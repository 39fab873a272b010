package e2e

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payd/internal/job"
	"payd/internal/server"
	"payd/internal/store"
)

// TestSandboxClockReadsAndMoves: GET answers {"now"} in RFC 3339 UTC with
// milliseconds, near the real time for a new merchant; advance_seconds moves
// it forward by that much; "now" sets a later time exactly; each POST answers
// the new time.
func TestSandboxClockReadsAndMoves(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		r := p.get("/v2/sandbox/clock", m)
		want(t, r, 200)
		var members map[string]string
		r.Decode(t, &members)
		if len(members) != 1 || !timePattern.MatchString(members["now"]) {
			t.Fatalf("clock = %s, want exactly {\"now\": \"YYYY-MM-DDThh:mm:ss.mmmZ\"}", r.Body)
		}
		start := p.clockNow(m)
		if d := time.Since(start).Abs(); d > time.Minute {
			t.Errorf("a new merchant's clock is %s off the real clock", d)
		}

		moved := p.post("/v2/sandbox/clock", m, map[string]any{"advance_seconds": 86400})
		want(t, moved, 200)
		var answer struct {
			Now string `json:"now"`
		}
		moved.Decode(t, &answer)
		afterAdvance := p.clockNow(m)
		if got := afterAdvance.Sub(start); got < 24*time.Hour || got > 24*time.Hour+time.Minute {
			t.Errorf("after advancing a day the clock moved %s", got)
		}
		answered, err := time.Parse(time.RFC3339Nano, answer.Now)
		if err != nil || !timePattern.MatchString(answer.Now) || answered.After(afterAdvance) || answered.Sub(start) < 24*time.Hour {
			t.Errorf("POST answered now %q; want a day after %s and not after the GET that followed (%s)", answer.Now, start, afterAdvance)
		}

		target := afterAdvance.Add(90 * time.Minute).Truncate(time.Millisecond).UTC()
		set := p.post("/v2/sandbox/clock", m, map[string]any{"now": target.Format("2006-01-02T15:04:05.000+0000")})
		want(t, set, 200)
		if got, want := strings.TrimSpace(string(set.Body)), `{"now":"`+target.Format("2006-01-02T15:04:05.000Z")+`"}`; got != want {
			t.Errorf("POST now answered %s, want %s", got, want)
		}
		if got := p.clockNow(m); got.Before(target) || got.Sub(target) > time.Minute {
			t.Errorf("after setting %s the clock reads %s", target, got)
		}
	})
}

// TestSandboxClockReset: POST /v2/sandbox/clock/reset starts a moved clock
// over at the real time (CONTRACT §25) and answers {"now"}; records keep
// the times the moved clock gave them; an access token issued on the moved
// clock keeps what was left of its hour, one that had expired there stays
// expired; the clock moves forward again from the real time; another
// merchant's clock is not touched.
func TestSandboxClockReset(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		ms := p.merchant("AUD")
		m, other := ms["AUD"], p.merchant("AUD")["AUD"]
		early := p.bearerFor(m)
		p.advance(m, 2*86400)
		p.advance(other, 86400)
		ahead := p.bearerFor(m)
		moved := p.clockNow(m)
		p.simulateDeposit(m, m.AccountNumber, "10")

		r := p.post("/v2/sandbox/clock/reset", m, nil)
		want(t, r, 200)
		var answer map[string]string
		r.Decode(t, &answer)
		now, err := time.Parse(time.RFC3339Nano, answer["now"])
		if len(answer) != 1 || err != nil || time.Since(now).Abs() > time.Minute {
			t.Fatalf("reset answered %s, want exactly {\"now\"} at the real time", r.Body)
		}
		if got := p.clockNow(m); time.Since(got).Abs() > time.Minute {
			t.Errorf("after the reset the clock reads %s, %s off the real time", got, time.Since(got))
		}
		if got := p.clockNow(other); got.Sub(time.Now()) < 23*time.Hour {
			t.Errorf("another merchant's clock reads %s after this one's reset, want still a day ahead", got)
		}
		history := p.history(m, "size=1") // newest first: the deposit's
		if len(history.Records) != 1 {
			t.Fatalf("no balance record of the deposit")
		}
		if created, err := time.Parse(time.RFC3339Nano, history.Records[0].CreatedAt); err != nil || created.Before(moved.Add(-time.Minute)) {
			t.Errorf("the deposit's record made on the moved clock reads %q after the reset, want the moved clock's time (about %s)", history.Records[0].CreatedAt, moved)
		}
		if r := p.get("/v2/balances/detail", ahead); r.Status != 200 {
			t.Errorf("a token issued on the moved clock: %d after the reset, want 200 (what was left of its hour)", r.Status)
		}
		if r := p.get("/v2/balances/detail", early); r.Status != 401 {
			t.Errorf("a token that had expired on the moved clock: %d after the reset, want 401", r.Status)
		}
		p.advance(m, 3600)
		if got := p.clockNow(m); got.Sub(time.Now()) < 59*time.Minute || got.Sub(time.Now()) > 61*time.Minute {
			t.Errorf("an hour's advance after the reset reads %s", got)
		}
	})
}

// TestMovedClockNamedInRefusals: with the merchant's test clock moved two
// days ahead, a time that is ahead of the real clock but behind the moved
// one is refused naming the test clock and its time (issue 54 item 10): a
// payin's expired_at, a payout's scheduled_at; on a clock never moved the
// refusals keep their words.
func TestMovedClockNamedInRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		ms := p.merchant("IDR", "AUD")
		idr, aud := ms["IDR"], ms["AUD"]
		past := pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"expired_at": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)})
		if r := p.post("/v2/payins", idr, past); r.Status != 422 || !strings.Contains(string(r.Body), "30 days from now\"") {
			t.Errorf("an hour ago on a clock never moved: %d %s, want the usual words", r.Status, r.Body)
		}
		soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		body := pinWith(pinBody("IDR", "id_bank_qris_idr", 100000), map[string]any{"expired_at": soon})
		p.advance(idr, 2*86400)
		p.advance(aud, 2*86400)
		moved := clockText(p.clockNow(idr))
		r := p.post("/v2/payins", idr, body)
		if r.Status != 422 || !strings.Contains(string(r.Body), "from the merchant's test clock, now "+moved[:16]) {
			t.Errorf("expired_at behind the moved clock: %d %s, want the test clock named (now %s)", r.Status, r.Body, moved)
		}
		p.fund(aud, "100")
		po := payoutBody("AUD", "au_bank_aud", "10", bsbOK)
		po["scheduled_at"] = soon
		r = p.post("/v2/payouts", aud, po)
		if r.Status != 422 || !strings.Contains(string(r.Body), "must be after the merchant's test clock, now ") {
			t.Errorf("scheduled_at behind the moved clock: %d %s, want the test clock named", r.Status, r.Body)
		}
	})
}

// clockText is t as payd writes times.
func clockText(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// TestSandboxClockRefusals: a clock never moves back and takes exactly one of
// advance_seconds and now; refused requests leave it where it was.
func TestSandboxClockRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		p.advance(m, 3600)
		before := p.clockNow(m)
		earlier := before.Add(-time.Minute).Format(time.RFC3339)
		tests := []struct {
			name   string
			body   string
			status int
			code   string
			field  string
		}{
			{name: "now earlier than the clock", body: `{"now":"` + earlier + `"}`, status: 422, code: "VALIDATION_FAILED", field: "now"},
			{name: "now far in the past", body: `{"now":"2000-01-01T00:00:00Z"}`, status: 422, code: "VALIDATION_FAILED", field: "now"},
			{name: "negative advance_seconds", body: `{"advance_seconds":-1}`, status: 422, code: "VALIDATION_FAILED", field: "advance_seconds"},
			{name: "more than ten years", body: `{"advance_seconds":315360001}`, status: 422, code: "VALIDATION_FAILED", field: "advance_seconds"},
			{name: "both members", body: `{"advance_seconds":10,"now":"2099-01-01T00:00:00Z"}`, status: 422, code: "VALIDATION_FAILED", field: "advance_seconds"},
			{name: "neither member", body: `{}`, status: 422, code: "VALIDATION_FAILED", field: "advance_seconds"},
			{name: "both null", body: `{"advance_seconds":null,"now":null}`, status: 422, code: "VALIDATION_FAILED", field: "advance_seconds"},
			{name: "advance_seconds as a string", body: `{"advance_seconds":"10"}`, status: 400, code: "WRONG_TYPE", field: "advance_seconds"},
			{name: "advance_seconds fractional", body: `{"advance_seconds":1.5}`, status: 400, code: "WRONG_TYPE", field: "advance_seconds"},
			{name: "now not a time", body: `{"now":"tomorrow"}`, status: 400, code: "WRONG_TYPE", field: "now"},
			{name: "now a number", body: `{"now":1700000000}`, status: 400, code: "WRONG_TYPE", field: "now"},
			{name: "not JSON", body: `advance_seconds=10`, status: 400, code: "MALFORMED_JSON"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.post("/v2/sandbox/clock", m, tt.body), tt.status, tt.code, tt.field)
			})
		}
		if after := p.clockNow(m); after.Sub(before) > time.Minute {
			t.Errorf("refused requests moved the clock from %s to %s", before, after)
		}
	})
}

// TestSandboxClocksArePerMerchant: advancing one merchant's clock does not
// move another's, and every app of a merchant shares its clock.
func TestSandboxClocksArePerMerchant(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := p.merchant("AUD", "JPY")
		b := p.merchant("AUD")["AUD"]
		p.advance(a["AUD"], 10*86400)
		got := []time.Duration{
			time.Until(p.clockNow(a["AUD"])).Round(time.Hour),
			time.Until(p.clockNow(a["JPY"])).Round(time.Hour),
			time.Until(p.clockNow(b)).Round(time.Hour),
		}
		if got[0] != 240*time.Hour || got[1] != 240*time.Hour || got[2] != 0 {
			t.Errorf("clocks ahead of real time: A's AUD app %s, A's JPY app %s, B %s; want 240h, 240h, 0", got[0], got[1], got[2])
		}
	})
}

// TestProductionHasNoSandboxRoutes: production serves neither the deposit
// simulation nor the test clock (404 in the errors envelope, with or without
// credentials) and still serves balances.
func TestProductionHasNoSandboxRoutes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		tests := []struct {
			name string
			r    req
		}{
			{name: "simulate_deposit", r: req{method: "POST", path: "/v1/simulate_deposit", as: &m, body: map[string]any{"account_number": m.AccountNumber, "amount": "10"}}},
			{name: "simulate_deposit without credentials", r: req{method: "POST", path: "/v1/simulate_deposit", body: `{}`}},
			{name: "read the clock", r: req{method: "GET", path: "/v2/sandbox/clock", as: &m}},
			{name: "move the clock", r: req{method: "POST", path: "/v2/sandbox/clock", as: &m, body: map[string]any{"advance_seconds": 60}}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.do(tt.r), 404, "NOT_FOUND", "")
			})
		}
		r := p.get("/v2/balances", m)
		want(t, r, 200)
		if got, want := strings.TrimSpace(string(r.Body)), `{"records":[{"currency":"AUD","available_balance":0.00,"incoming_balance":0.00,"outgoing_balance":0.00,"rolling_reserve_balance":0.00,"withdrawable_balance":0.00}]}`; got != want {
			t.Errorf("balances = %s, want %s", got, want)
		}
	}, production)
}

// TestSandboxClockBoundsItsWait: a clock advance whose due work outlasts its
// limit (here, a job that enqueues another due job each time it runs) answers
// 503 CLOCK_WORK_RUNNING with Retry-After instead of holding the request past
// the server's write deadline; the clock has moved, and once the work can
// finish an advance of 0 waits for it and answers 200.
func TestSandboxClockBoundsItsWait(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		kind := job.NewKind[struct{}]("e2e.chain")
		var stop atomic.Bool
		job.Register(p.srv.Queue, kind, func(ctx context.Context, tx *store.Tx, j job.Job, _ struct{}) error {
			if stop.Load() {
				return nil
			}
			return job.Enqueue(ctx, tx, p.srv.Queue, kind, struct{}{}, job.Options{ClockOf: j.ClockOf})
		})
		m := p.merchant("AUD")["AUD"]
		before := p.clockNow(m)
		if err := p.srv.DB.Exec(context.Background(), func(tx *store.Tx) error {
			return job.Enqueue(context.Background(), tx, p.srv.Queue, kind, struct{}{}, job.Options{ClockOf: m.MerchantID})
		}); err != nil {
			t.Fatal(err)
		}

		r := p.post("/v2/sandbox/clock", m, map[string]any{"advance_seconds": 3600})
		wantError(t, r, 503, "CLOCK_WORK_RUNNING", "")
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
		if moved := p.clockNow(m).Sub(before); moved < time.Hour {
			t.Errorf("after the 503 the clock moved %s, want an hour", moved)
		}
		stop.Store(true)
		want(t, p.post("/v2/sandbox/clock", m, map[string]any{"advance_seconds": 0}), 200)
		var left int
		if err := p.srv.DB.Read().QueryRowContext(context.Background(), `SELECT count(*) FROM jobs WHERE kind = $1`, kind.String()).Scan(&left); err != nil || left != 0 {
			t.Errorf("after the 200, %d jobs of the chain are left (%v), want 0", left, err)
		}
	}, func(c *server.Config) { c.ClockWorkLimit = 300 * time.Millisecond })
}
