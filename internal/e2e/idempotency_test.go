package e2e

import (
	"strings"
	"sync"
	"testing"
)

// keyed POSTs body to path with an Idempotency-Key.
func (p *payd) keyed(as creds, path, key string, body any) response {
	p.t.Helper()
	return p.do(req{method: "POST", path: path, as: &as, body: body, header: map[string]string{"Idempotency-Key": key}})
}

// TestIdempotentReplay: the same key with the same request gets the first
// answer back byte for byte, marked Idempotent-Replayed: true, and the
// deposit happens once: one history record, the amount counted once.
func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		body := map[string]any{"account_number": m.AccountNumber, "amount": "40"}
		first := p.keyed(m, "/v1/simulate_deposit", "order-1", body)
		want(t, first, 201)
		again := p.keyed(m, "/v1/simulate_deposit", "order-1", body)
		p.runDue(m)
		later := p.keyed(m, "/v1/simulate_deposit", "order-1", body) // after the deposit cleared

		tests := []struct {
			name string
			r    response
		}{{"right away", again}, {"after clearing", later}}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if tt.r.Status != 201 || string(tt.r.Body) != string(first.Body) || tt.r.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("replay: %d %s (Idempotent-Replayed %q); want 201 %s marked replayed",
						tt.r.Status, tt.r.Body, tt.r.Header.Get("Idempotent-Replayed"), first.Body)
				}
			})
		}
		if got := first.Header.Get("Idempotent-Replayed"); got != "" {
			t.Errorf("first answer has Idempotent-Replayed %q", got)
		}
		if h := p.history(m, ""); len(h.Records) != 1 || h.Records[0].ID != first.JSON(t)["balance_id"] {
			t.Errorf("history = %+v, want the one deposit", h.Records)
		}
		wantBalanceSplit(t, p.balanceOf(m, "AUD"), 4000)
	})
}

// TestIdempotencyKeyMisuse: a key reused with another body (even the same
// members in another order: the body is compared byte for byte; even one
// refused before any effect) or on another path is 422 IDEMPOTENCY_KEY_REUSED, a key over 255 characters is a 422
// VALIDATION_FAILED like any other refused field (255 is accepted), and none of the refused requests has an effect.
func TestIdempotencyKeyMisuse(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		body := map[string]any{"account_number": m.AccountNumber, "amount": "40"}
		want(t, p.keyed(m, "/v1/simulate_deposit", "k1", body), 201)
		want(t, p.keyed(m, "/v1/simulate_deposit", strings.Repeat("k", 255), body), 201)
		tests := []struct {
			name   string
			path   string
			key    string
			body   any
			status int
			code   string
		}{
			{name: "same key, other amount", path: "/v1/simulate_deposit", key: "k1", body: map[string]any{"account_number": m.AccountNumber, "amount": "41"}, status: 422, code: "IDEMPOTENCY_KEY_REUSED"},
			{name: "same key, same members in another order", path: "/v1/simulate_deposit", key: "k1", body: `{"amount":"40","account_number":"` + m.AccountNumber + `"}`, status: 422, code: "IDEMPOTENCY_KEY_REUSED"},
			{name: "same key, a body refused before any effect", path: "/v1/simulate_deposit", key: "k1", body: `{"amount":`, status: 422, code: "IDEMPOTENCY_KEY_REUSED"},
			{name: "same key, other path", path: "/v2/sandbox/clock", key: "k1", body: map[string]any{"advance_seconds": 0}, status: 422, code: "IDEMPOTENCY_KEY_REUSED"},
			{name: "key of 256 characters", path: "/v1/simulate_deposit", key: strings.Repeat("k", 256), body: body, status: 422, code: "VALIDATION_FAILED"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				wantError(t, p.keyed(m, tt.path, tt.key, tt.body), tt.status, tt.code, "")
			})
		}
		p.runDue(m)
		if h := p.history(m, ""); len(h.Records) != 2 {
			t.Errorf("history has %d records, want the 2 accepted deposits", len(h.Records))
		}
		wantBalanceSplit(t, p.balanceOf(m, "AUD"), 8000)
	})
}

// TestIdempotencyKeysArePerMerchant: merchant B may use a key merchant A used;
// each gets its own deposit and neither sees a replay.
func TestIdempotencyKeysArePerMerchant(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		a := p.merchant("AUD")["AUD"]
		b := p.merchant("AUD")["AUD"]
		ra := p.keyed(a, "/v1/simulate_deposit", "shared-key", map[string]any{"account_number": a.AccountNumber, "amount": "10"})
		rb := p.keyed(b, "/v1/simulate_deposit", "shared-key", map[string]any{"account_number": b.AccountNumber, "amount": "20"})
		want(t, ra, 201)
		want(t, rb, 201)
		if rb.Header.Get("Idempotent-Replayed") != "" || ra.JSON(t)["uuid"] == rb.JSON(t)["uuid"] {
			t.Errorf("merchant B got A's answer: %s", rb.Body)
		}
		p.runDue(a)
		p.runDue(b)
		wantBalanceSplit(t, p.balanceOf(a, "AUD"), 1000)
		wantBalanceSplit(t, p.balanceOf(b, "AUD"), 2000)
	})
}

// TestIdempotentErrorIsReplayed: a 422 answer is stored like a success: the
// same request gets it back marked replayed, and the key stays spent, so a
// corrected body under it is refused as a reuse.
func TestIdempotentErrorIsReplayed(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		bad := map[string]any{"account_number": m.AccountNumber, "amount": "10.50"}
		first := p.keyed(m, "/v1/simulate_deposit", "k-422", bad)
		wantError(t, first, 422, "VALIDATION_FAILED", "amount")
		again := p.keyed(m, "/v1/simulate_deposit", "k-422", bad)
		if again.Status != 422 || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %d %s (Idempotent-Replayed %q); want the stored 422", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"))
		}
		wantError(t, p.keyed(m, "/v1/simulate_deposit", "k-422", map[string]any{"account_number": m.AccountNumber, "amount": "10"}), 422, "IDEMPOTENCY_KEY_REUSED", "")
		if h := p.history(m, ""); len(h.Records) != 0 {
			t.Errorf("history = %+v, want none", h.Records)
		}
	})
}

// raceKeyed sends the same keyed deposit n times at once, half through each
// of the given servers, and returns the answers.
func raceKeyed(t *testing.T, servers []*payd, as creds, key string, body any, n int) []response {
	t.Helper()
	var wg sync.WaitGroup
	answers := make([]response, n)
	for i := range n {
		p := servers[i%len(servers)]
		wg.Go(func() {
			r, err := p.send(req{method: "POST", path: "/v1/simulate_deposit", as: &as, body: body, header: map[string]string{"Idempotency-Key": key}})
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			answers[i] = r
		})
	}
	wg.Wait()
	return answers
}

// wantOneEffect checks the answers to racing duplicates: a retry after the
// race replays a 201, each racing answer is that 201 byte for byte (the
// original or a replay) or 409 IDEMPOTENCY_KEY_IN_USE, and exactly one
// deposit exists.
func wantOneEffect(t *testing.T, p *payd, as creds, key string, body any, answers []response, amount int64) {
	t.Helper()
	retry := p.do(req{method: "POST", path: "/v1/simulate_deposit", as: &as, body: body, header: map[string]string{"Idempotency-Key": key}})
	if retry.Status != 201 || retry.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry after the race: %d %s (Idempotent-Replayed %q), want the stored 201", retry.Status, retry.Body, retry.Header.Get("Idempotent-Replayed"))
	}
	created, inUse := 0, 0
	for i, r := range answers {
		switch {
		case r.Status == 201 && string(r.Body) == string(retry.Body):
			created++
		case r.Status == 409 && r.ErrorCode(t) == "IDEMPOTENCY_KEY_IN_USE":
			inUse++
		default:
			t.Errorf("answer %d: %d %s; want the 201 %s or 409 IDEMPOTENCY_KEY_IN_USE", i, r.Status, r.Body, retry.Body)
		}
	}
	if created == 0 {
		t.Errorf("no racing request got the 201 (%d got 409)", inUse)
	}
	p.runDue(as)
	if h := p.history(as, ""); len(h.Records) != 1 {
		t.Errorf("history has %d records, want 1", len(h.Records))
	}
	wantBalanceSplit(t, p.balanceOf(as, as.Currency), amount)
}

// TestIdempotencyRace: 20 identical keyed deposits sent at once make exactly
// one deposit; every answer is the 201 or a 409 IDEMPOTENCY_KEY_IN_USE.
func TestIdempotencyRace(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		body := map[string]any{"account_number": m.AccountNumber, "amount": "25"}
		answers := raceKeyed(t, []*payd{p}, m, "race-key", body, 20)
		wantOneEffect(t, p, m, "race-key", body, answers, 2500)
	})
}

// TestIdempotencyRaceAcrossProcesses: the same race with the requests split
// between two payd processes on one PostgreSQL database, repeated over a
// few keys: still one deposit per key, and a retry after the race always
// gets the 201 back (never a stored 409).
func TestIdempotencyRaceAcrossProcesses(t *testing.T) {
	t.Parallel()
	eachShared(t, func(t *testing.T, a, b *payd) {
		for i := range 5 {
			m := a.merchant("AUD")["AUD"]
			body := map[string]any{"account_number": m.AccountNumber, "amount": "25"}
			key := "cross-" + string(rune('a'+i))
			answers := raceKeyed(t, []*payd{a, b}, m, key, body, 20)
			wantOneEffect(t, a, m, key, body, answers, 2500)
		}
	})
}
