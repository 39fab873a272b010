// Package oidctest is an OpenID Connect identity provider for tests, on a
// loopback httptest server: discovery, a JWKS of an RSA key made for the
// test, an authorization endpoint that sends the browser straight back with
// a code (nobody types a password), and a token endpoint that checks the
// client, the code (good once), the redirect URI and PKCE (S256) before it
// answers with an ID token signed by that key. What the next ID token says
// is set per case (Next): a wrong audience, an expired token, a wrong
// nonce, an unverified or another email.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"payd/internal/clock"
)

// Token is what the next sign-in's ID token says. Its zero fields take the
// good values: the client as audience, five minutes' life, the nonce the
// sign-in asked for.
type Token struct {
	Email         string
	EmailVerified bool
	// Groups is the "groups" claim (none when nil).
	Groups []string
	// Audience replaces the client id.
	Audience string
	// ExpiresIn is the token's life from now; negative: expired already.
	ExpiresIn time.Duration
	// Nonce replaces the nonce of the sign-in.
	Nonce string
}

// Provider is the identity provider.
type Provider struct {
	*httptest.Server
	ClientID, ClientSecret string
	// Clock dates the ID tokens (the real one unless set): the relying
	// party checks their expiry against its own.
	Clock clock.Clock
	key   *rsa.PrivateKey

	mu        sync.Mutex
	next      Token
	down      bool
	grants    map[string]grant
	callbacks []string
}

// grant is an authorization code's request.
type grant struct {
	token                         Token
	nonce, challenge, redirectURI string
}

// New starts a provider for one client until the test ends.
func New(t testing.TB, clientID, clientSecret string) *Provider {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{ClientID: clientID, ClientSecret: clientSecret, key: key, grants: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.Server = httptest.NewServer(mux) // on 127.0.0.1
	t.Cleanup(p.Close)
	return p
}

// Next sets what the ID tokens of the sign-ins started from now say.
func (p *Provider) Next(tok Token) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next = tok
}

// SetDown makes discovery answer 503 (down) or work again.
func (p *Provider) SetDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

// LastCallback is the redirect URI with code and state it sent a browser to last.
func (p *Provider) LastCallback() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.callbacks) == 0 {
		return ""
	}
	return p.callbacks[len(p.callbacks)-1]
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	writeJSON(w, map[string]any{
		"issuer": p.URL, "authorization_endpoint": p.URL + "/authorize", "token_endpoint": p.URL + "/token", "jwks_uri": p.URL + "/jwks",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"}, "code_challenge_methods_supported": []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

func (p *Provider) jwks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "test", Algorithm: string(jose.RS256), Use: "sig"}}})
}

// authorize sends the browser back to the client with a code at once.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	back, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("client_id") != p.ClientID || q.Get("response_type") != "code" || err != nil || back.Host == "":
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "":
		http.Error(w, "PKCE (S256), state and nonce are required", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.grants[code] = grant{token: p.next, nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirectURI: q.Get("redirect_uri")}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	p.callbacks = append(p.callbacks, back.String())
	p.mu.Unlock()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code, once, for its ID token.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	code := r.PostFormValue("code")
	p.mu.Lock()
	g, found := p.grants[code]
	delete(p.grants, code)
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostFormValue("code_verifier")))
	switch {
	case id != p.ClientID || secret != p.ClientSecret:
		tokenError(w, http.StatusUnauthorized, "invalid_client")
	case r.PostFormValue("grant_type") != "authorization_code" || !found || r.PostFormValue("redirect_uri") != g.redirectURI:
		tokenError(w, http.StatusBadRequest, "invalid_grant")
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		tokenError(w, http.StatusBadRequest, "invalid_grant")
	default:
		raw, err := p.sign(g)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 300, "id_token": raw})
	}
}

// sign makes the grant's ID token.
func (p *Provider) sign(g grant) (string, error) {
	c := p.Clock
	if c == nil {
		c = clock.Real{}
	}
	t, now := g.token, c.Now()
	aud, life, nonce := p.ClientID, 5*time.Minute, g.nonce
	if t.Audience != "" {
		aud = t.Audience
	}
	if t.ExpiresIn != 0 {
		life = t.ExpiresIn
	}
	if t.Nonce != "" {
		nonce = t.Nonce
	}
	claims := map[string]any{"iss": p.URL, "sub": "user-" + t.Email, "aud": aud, "iat": now.Add(-time.Minute).Unix(), "exp": now.Add(life).Unix(),
		"nonce": nonce, "email": t.Email, "email_verified": t.EmailVerified}
	if t.Groups != nil {
		claims["groups"] = t.Groups
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.key, KeyID: "test"}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	obj, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return obj.CompactSerialize()
}

func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
