package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strconv"
	"time"

	"payd/internal/fault"
	"payd/internal/idempotency"
	"payd/internal/merchant"
	"payd/internal/ratelimit"
	"payd/internal/store"
)

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keyPrincipal
	keyClaim
	keyClient
	keyNote
)

// requestNote is what the handlers tell outer about a request.
type requestNote struct {
	// refusedEarly is the merchant whose request Early refused: such
	// requests are summarised by the refusal log, not logged one by one.
	refusedEarly string
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

// principal is the authenticated caller; routes that require one never run without it.
func principal(r *http.Request) merchant.Principal {
	p, _ := r.Context().Value(keyPrincipal).(merchant.Principal)
	return p
}

// clientOf is the request's client address: the connection's peer, or the
// client a trusted proxy names.
func clientOf(r *http.Request) netip.Addr {
	a, _ := r.Context().Value(keyClient).(netip.Addr)
	return a
}

func claimOf(r *http.Request) *idempotency.Claim {
	c, _ := r.Context().Value(keyClaim).(*idempotency.Claim)
	return c
}

var safeRequestID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// recorder remembers the status and, when asked, the body of a response.
type recorder struct {
	http.ResponseWriter
	status int
	keep   bool
	body   bytes.Buffer
	// before, if set, runs once before the handler's answer starts; when it
	// answers itself (true), the handler's answer is dropped.
	before   func() bool
	replaced bool
}

// start runs before once, when the handler's answer starts.
func (rec *recorder) start() {
	if rec.before != nil {
		before := rec.before
		rec.before = nil
		rec.replaced = before()
	}
}

func (rec *recorder) WriteHeader(status int) {
	rec.start()
	if rec.replaced {
		return
	}
	if rec.status == 0 {
		rec.status = status
	}
	rec.ResponseWriter.WriteHeader(status)
}

func (rec *recorder) Write(b []byte) (int, error) {
	rec.start()
	if rec.replaced {
		return len(b), nil
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if rec.keep {
		rec.body.Write(b)
	}
	return rec.ResponseWriter.Write(b)
}

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// outer wraps every request: a request id (the caller's, when it is sane),
// panic recovery (a 500, never a dropped connection), one JSON log line, and
// the request metrics.
func (a *API) outer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !safeRequestID.MatchString(id) {
			id = "req_" + store.RandomID(16)
		}
		w.Header().Set("X-Request-Id", id)
		client := a.TrustedProxies.Client(r)
		note := &requestNote{}
		ctx := context.WithValue(r.Context(), keyRequestID, id)
		ctx = context.WithValue(ctx, keyNote, note)
		r = r.WithContext(context.WithValue(ctx, keyClient, client))
		rec := &recorder{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				a.log.Error("panic", "request_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					a.fail(rec, r, fmt.Errorf("panic: %v", p))
				}
			}
			route := r.Pattern
			if route == "" {
				route = "unmatched"
			}
			took := time.Since(started)
			a.metrics.observeRequest(route, rec.status, took)
			if note.refusedEarly != "" {
				a.refusals.note(note.refusedEarly)
				return
			}
			a.log.Info("request", "request_id", id, "method", r.Method, "path", r.URL.Path, "route", route,
				"status", rec.status, "duration_ms", float64(took.Microseconds())/1000, "client", client.String(), "remote", r.RemoteAddr)
		}()
		next.ServeHTTP(rec, r)
	})
}

// authMode says how a route authenticates its caller.
type authMode int

const (
	authNone authMode = iota
	// authKeys: app-id + secret-key headers, or an access token (Authorization: Bearer, or access-token).
	authKeys
	// authKeysOnly: app-id + secret-key only (the token endpoint itself).
	authKeysOnly
	// authTokenHeader: an access token in the access-token header (payment gateway link creation).
	authTokenHeader
)

// authenticate runs the route's authentication, refuses an app its access
// settings keep from the route (checkAccess, with the route's scope), and
// puts the principal in the context. A failure is counted by the throttle, which slows and then
// refuses a client that keeps failing; valid credentials are never refused
// by it. An authenticated request then takes one request from its
// merchant's bucket (writes and reads apart), and is refused with 429 when
// that is empty.
func (a *API) authenticate(mode authMode, scope string, next http.HandlerFunc) http.HandlerFunc {
	if mode == authNone {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		appID := r.Header.Get("app-id")
		if mode == authTokenHeader {
			appID = ""
		}
		if d, refused := a.limiter.Early(appID, kindOf(r.Method)); refused {
			if note, ok := r.Context().Value(keyNote).(*requestNote); ok {
				note.refusedEarly = d.MerchantID
			}
			a.rateLimited(w, r, d)
			return
		}
		p, err := a.credentials(r, mode)
		if err != nil {
			if fault.Is(err, fault.CodeRequireLogin) {
				err = a.authFailed(w, r, err)
			}
			a.fail(w, r, err)
			return
		}
		if err := a.checkAccess(r, p, scope); err != nil {
			a.fail(w, r, err)
			return
		}
		d, err := a.limiter.Take(r.Context(), p.MerchantID, kindOf(r.Method))
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if !d.Allowed {
			if appID != "" && appID == p.AppID {
				a.limiter.Remember(appID, p.MerchantID) // its next requests are refused early
			}
			a.rateLimited(w, r, d)
			return
		}
		setRateLimitHeaders(w.Header(), d)
		next(w, r.WithContext(context.WithValue(r.Context(), keyPrincipal, p)))
	}
}

// rateLimited answers a request its merchant's bucket refused: 429 with
// Retry-After and the RateLimit headers.
func (a *API) rateLimited(w http.ResponseWriter, r *http.Request, d ratelimit.Decision) {
	setRateLimitHeaders(w.Header(), d)
	w.Header().Set("Retry-After", strconv.Itoa(seconds(d.RetryAfter)))
	a.fail(w, r, fault.New(fault.RateLimited, fault.CodeRateLimited,
		"this merchant's request rate limit is reached; retry after the Retry-After seconds"))
}

func setRateLimitHeaders(h http.Header, d ratelimit.Decision) {
	h.Set("RateLimit-Limit", strconv.FormatInt(d.Limit, 10))
	h.Set("RateLimit-Remaining", strconv.FormatInt(d.Remaining, 10))
	h.Set("RateLimit-Reset", strconv.Itoa(seconds(d.Reset)))
}

// authFailed counts a failed authentication and returns the error to
// answer: the 401, held back while the client keeps failing, or a 429 once
// it has failed too often.
func (a *API) authFailed(w http.ResponseWriter, r *http.Request, unauthenticated error) error {
	v, err := a.throttle.Failed(r.Context(), clientOf(r).String(), r.Header.Get("app-id"))
	if err != nil {
		return err
	}
	if v.Refused {
		w.Header().Set("Retry-After", strconv.Itoa(seconds(v.RetryAfter)))
		return fault.New(fault.RateLimited, fault.CodeRateLimited, "too many failed authentication attempts; retry later")
	}
	if v.Delay > 0 {
		select {
		case <-time.After(v.Delay):
		case <-r.Context().Done():
		}
	}
	return unauthenticated
}

// kindOf says which of a merchant's buckets a request draws on.
func kindOf(method string) ratelimit.Kind {
	if method == http.MethodGet || method == http.MethodHead {
		return ratelimit.Read
	}
	return ratelimit.Write
}

// seconds rounds d up to whole seconds, at least one, for Retry-After.
func seconds(d time.Duration) int {
	return max(int((d+time.Second-1)/time.Second), 1)
}

func (a *API) credentials(r *http.Request, mode authMode) (merchant.Principal, error) {
	ctx := r.Context()
	appID, secret := r.Header.Get("app-id"), r.Header.Get("secret-key")
	token := r.Header.Get("access-token")
	if token == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && (auth[:7] == "Bearer " || auth[:7] == "bearer ") {
			token = auth[7:]
		}
	}
	switch mode {
	case authKeysOnly:
		return a.Merchants.Authenticate(ctx, appID, secret)
	case authTokenHeader:
		if t := r.Header.Get("access-token"); t != "" {
			return a.Merchants.AuthenticateToken(ctx, t)
		}
		return merchant.Principal{}, merchant.ErrUnauthenticated
	}
	if appID != "" || secret != "" {
		return a.Merchants.Authenticate(ctx, appID, secret)
	}
	return a.Merchants.AuthenticateToken(ctx, token)
}

// idempotent honours the Idempotency-Key header of a POST or PUT
// (CONTRACT §3). It runs after authentication: keys are scoped to the
// merchant. The body, read once within maxBody, is what the handler reads
// too; a multipart body is compared on its parts (CONTRACT §24).
func (a *API) idempotent(maxBody int64, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		if key == "" || (r.Method != http.MethodPost && r.Method != http.MethodPut) {
			next(w, r)
			return
		}
		if err := idempotency.CheckKey(key); err != nil {
			a.fail(w, r, err)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			a.fail(w, r, bodyReadError(err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req := idempotency.Request{MerchantID: principal(r).MerchantID, Key: key,
			Hash: idempotency.Fingerprint(r.Method, r.URL.Path, r.Header.Get("Content-Type"), body)}
		claim, err := a.keeper.Begin(req)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		rec := &recorder{ResponseWriter: w, keep: true}
		// An answer that no transaction under the claim made (a refusal
		// before the effect, say) gives way to the one stored for the key.
		// Its status is recorded as the answer's, so that Finish never
		// stores the handler's in the key (a lookup that failed is a 5xx,
		// which is not stored).
		rec.before = func() bool {
			stored, err := claim.Stored(r.Context())
			if err == nil && stored == nil {
				return false
			}
			written := &recorder{ResponseWriter: w}
			if err != nil {
				a.fail(written, r, err)
			} else {
				w.Header().Set("Idempotent-Replayed", "true")
				writeBody(written, stored.Status, stored.Body)
			}
			rec.status = written.status
			return true
		}
		ctx := context.WithValue(r.Context(), keyClaim, claim)
		defer func() {
			status := rec.status
			if status == 0 {
				status = http.StatusOK
			}
			if err := claim.Finish(context.WithoutCancel(r.Context()), status, rec.body.Bytes()); err != nil {
				a.log.Error("store idempotent response", "request_id", requestID(r.Context()), "err", err)
			}
		}()
		next(rec, r.WithContext(ctx))
	}
}

// expect tells a keyed request's claim which status the handler answers with
// on success, and how the response body is made from the service's result
// (the result itself when view is nil), so the transaction that carries the
// effect can store the response with it.
func expect(r *http.Request, status int, view func(any) any) {
	c := claimOf(r)
	if c == nil {
		return
	}
	c.Status = status
	c.Render = func(result any) ([]byte, error) {
		if view != nil {
			result = view(result)
		}
		return encodeJSON(result)
	}
}
