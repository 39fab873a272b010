package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuthRefusals: missing, wrong, unknown and revoked credentials are all
// answered 401 with exactly the contract's body (CONTRACT §2), which does not
// tell one failure from another, and with a request id.
func TestAuthRefusals(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		revoked := p.merchant("AUD")["AUD"]
		if err := p.srv.Merchants.RevokeApp(context.Background(), revoked.MerchantID, revoked.AppID); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			header map[string]string
		}{
			{name: "no headers", header: nil},
			{name: "wrong secret", header: map[string]string{"app-id": m.AppID, "secret-key": m.SecretKey + "x"}},
			{name: "unknown app-id", header: map[string]string{"app-id": "no-such-app-id-000000000", "secret-key": m.SecretKey}},
			{name: "app-id without secret", header: map[string]string{"app-id": m.AppID}},
			{name: "revoked app", header: map[string]string{"app-id": revoked.AppID, "secret-key": revoked.SecretKey}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.do(req{method: "GET", path: "/v2/balances", header: tt.header})
				want(t, r, 401)
				if got := strings.TrimSpace(string(r.Body)); got != notAuthorised || r.Header.Get("X-Request-Id") == "" {
					t.Errorf("body %s, X-Request-Id %q; want %s and a request id", got, r.Header.Get("X-Request-Id"), notAuthorised)
				}
			})
		}
	})
}

// tokenAnswer is the body of GET /v1/payment_gateways/access_token.
type tokenAnswer struct {
	AccessToken string      `json:"access_token"`
	ExpiresIn   json.Number `json:"expires_in"`
	TokenType   string      `json:"token_type"`
}

// bearerFor exchanges the app's keys for an access token and returns creds that
// send it as Authorization: Bearer.
func (p *payd) bearerFor(as creds) creds {
	p.t.Helper()
	r := p.get("/v1/payment_gateways/access_token", as)
	want(p.t, r, 200)
	var a tokenAnswer
	r.Decode(p.t, &a)
	as.Token = a.AccessToken
	return as
}

// TestAccessToken: the token endpoint answers exactly access_token,
// expires_in 3600 and token_type Bearer; the token stands in for the keys as
// Authorization: Bearer or in the access-token header and acts as the app
// (its currency is the default); it is not accepted by the token endpoint
// itself; revoking the app ends both its keys and its tokens.
func TestAccessToken(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		accounts := p.merchant("AUD", "JPY")
		m := accounts["JPY"]
		r := p.get("/v1/payment_gateways/access_token", m)
		want(t, r, 200)
		var members map[string]json.RawMessage
		r.Decode(t, &members)
		var got tokenAnswer
		r.Decode(t, &got)
		if len(members) != 3 || got.ExpiresIn != "3600" || got.TokenType != "Bearer" || len(got.AccessToken) < 32 {
			t.Errorf("token answer = %s, want exactly access_token, expires_in 3600, token_type Bearer", r.Body)
		}
		bearer := m
		bearer.Token = got.AccessToken

		withKeys := p.get("/v2/balances/detail", m)
		tests := []struct {
			name   string
			r      req
			status int
		}{
			{name: "Authorization: Bearer", r: req{method: "GET", path: "/v2/balances/detail", as: &bearer}, status: 200},
			{name: "lower-case bearer", r: req{method: "GET", path: "/v2/balances/detail", header: map[string]string{"Authorization": "bearer " + got.AccessToken}}, status: 200},
			{name: "access-token header", r: req{method: "GET", path: "/v2/balances/detail", header: map[string]string{"access-token": got.AccessToken}}, status: 200},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := p.do(tt.r)
				want(t, r, tt.status)
				if string(r.Body) != string(withKeys.Body) {
					t.Errorf("body with token %s, with keys %s; want the same (the app's JPY balance)", r.Body, withKeys.Body)
				}
			})
		}

		refused := []struct {
			name string
			r    req
		}{
			{name: "token endpoint with a bearer token", r: req{method: "GET", path: "/v1/payment_gateways/access_token", as: &bearer}},
			{name: "token endpoint with the access-token header", r: req{method: "GET", path: "/v1/payment_gateways/access_token", header: map[string]string{"access-token": got.AccessToken}}},
			{name: "altered token", r: req{method: "GET", path: "/v2/balances", header: map[string]string{"Authorization": "Bearer " + got.AccessToken + "x"}}},
			{name: "Basic scheme", r: req{method: "GET", path: "/v2/balances", header: map[string]string{"Authorization": "Basic " + got.AccessToken}}},
		}
		for _, tt := range refused {
			t.Run(tt.name, func(t *testing.T) {
				r := p.do(tt.r)
				want(t, r, 401)
				if got := strings.TrimSpace(string(r.Body)); got != notAuthorised {
					t.Errorf("body %s, want %s", got, notAuthorised)
				}
			})
		}

		t.Run("revoking the app revokes its tokens", func(t *testing.T) {
			other := p.bearerFor(accounts["AUD"]) // another app of the same merchant keeps working
			if err := p.srv.Merchants.RevokeApp(context.Background(), m.MerchantID, m.AppID); err != nil {
				t.Fatal(err)
			}
			got := []int{p.get("/v2/balances", bearer).Status, p.get("/v2/balances", m).Status, p.get("/v2/balances", other).Status}
			if want := []int{401, 401, 200}; !slices.Equal(got, want) {
				t.Errorf("after revoking: token %d, keys %d, other app's token %d; want %v", got[0], got[1], got[2], want)
			}
		})
	})
}

// TestAccessTokenExpiresOnMerchantClock: a token lives 3600 s on its
// merchant's test clock: 3500 s on it still works, 3601 s does not, and
// another merchant's token, whose clock did not move, still works.
func TestAccessTokenExpiresOnMerchantClock(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		other := p.bearerFor(p.merchant("AUD")["AUD"])
		tok := p.bearerFor(m)
		p.advance(m, 3500)
		before := p.get("/v2/balances", tok)
		p.advance(m, 101)
		after := p.get("/v2/balances", tok)
		got := []int{before.Status, after.Status, p.get("/v2/balances", other).Status, p.get("/v2/balances", m).Status}
		if want := []int{200, 401, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("token at +3500 s %d, at +3601 s %d, other merchant's token %d, keys %d; want %v", got[0], got[1], got[2], got[3], want)
		}
		if body := strings.TrimSpace(string(after.Body)); body != notAuthorised {
			t.Errorf("expired token body %s, want %s", body, notAuthorised)
		}
		want(t, p.get("/v1/payment_gateways/access_token", m), 200) // a fresh one can be had
	})
}

// TestAuthRateLimit: failed authentications from one address are answered
// at once for the first 5, then each after a growing delay (100 ms more per
// failure, at most 2 s), and from the 20th failure within a minute the
// address is refused with 429 RATE_LIMITED and a Retry-After of at most a
// minute. Requests with valid keys, from that address too, are answered as
// ever, and endpoints without authentication still answer.
func TestAuthRateLimit(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		bad := m
		bad.SecretKey = "sk_wrong"

		began := time.Now()
		var first []int
		for range 5 {
			first = append(first, p.get("/v2/balances", bad).Status)
		}
		firstTook := time.Since(began)

		// Failures 6 to 20 at once: each is held back by (n-5)×100 ms, so the
		// k-th fastest answer cannot come before k×100 ms.
		var wg sync.WaitGroup
		var mu sync.Mutex
		var slowed []int
		var took []time.Duration
		for range 15 {
			wg.Go(func() {
				began := time.Now()
				r, err := p.send(req{method: "GET", path: "/v2/balances", as: &bad})
				mu.Lock()
				defer mu.Unlock()
				slowed, took = append(slowed, r.Status), append(took, time.Since(began))
				if err != nil {
					t.Errorf("failed request: %v", err)
				}
			})
		}
		wg.Wait()
		slices.Sort(took)

		// Not held back: each is answered 401 (how fast a busy machine answers
		// is the benchmark's business, not a test's).
		if want := []int{401, 401, 401, 401, 401}; !slices.Equal(first, want) {
			t.Errorf("first 5 failures: %v in %s, want %v", first, firstTook, want)
		}
		if want := slices.Repeat([]int{401}, 15); !slices.Equal(slowed, want) {
			t.Errorf("failures 6 to 20 = %v, want 401 each", slowed)
		}
		for i, d := range took {
			if least := time.Duration(i+1) * 100 * time.Millisecond; d < least {
				t.Errorf("the %d. fastest slowed failure took %s, want at least %s", i+1, d, least)
			}
		}

		refused := p.get("/v2/balances", bad)
		wantError(t, refused, 429, "RATE_LIMITED", "")
		retryAfter, err := strconv.Atoi(refused.Header.Get("Retry-After"))
		if err != nil || retryAfter < 1 || retryAfter > 60 {
			t.Errorf("Retry-After = %q, want 1 to 60 seconds", refused.Header.Get("Retry-After"))
		}
		// Valid credentials are never refused by the throttle, from the same
		// address as the failures too (CONTRACT §2).
		want(t, p.get("/v2/balances", m), 200)
		want(t, p.get("/v2/balances", p.merchant("JPY")["JPY"]), 200)
		want(t, p.do(req{method: "GET", path: "/healthz", root: true}), 200)
	})
}
