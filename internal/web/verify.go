package web

import (
	"embed"
	"html/template"
	"net/http"

	"payd/internal/fault"
)

//go:embed templates/verify*.html
var verifyFiles embed.FS

var verifyTemplates = template.Must(template.ParseFS(verifyFiles, "templates/verify*.html"))

// mountVerify mounts the identity verification page. GET /verify/{token}
// shows the page of a live link, naming the contact; POST /verify/{token}
// (the page's form) records the verification and uses the link up. The
// token in the path is the link's single-use secret, so a forged POST from
// another site would need the secret itself: no separate CSRF token is
// needed. Unknown, replaced, used and expired links get one 404 page.
func (p *Pages) mountVerify() {
	p.mux.HandleFunc("GET /verify/{token}", p.verifyPage)
	p.mux.HandleFunc("POST /verify/{token}", p.verifyConfirm)
	p.mux.HandleFunc("/verify/", func(w http.ResponseWriter, r *http.Request) {
		p.renderVerify(w, http.StatusNotFound, "verify_missing.html", nil)
	})
}

func (p *Pages) verifyPage(w http.ResponseWriter, r *http.Request) {
	v, err := p.Contacts.OpenVerification(r.Context(), r.PathValue("token"))
	if err != nil {
		p.verifyFailed(w, r, err)
		return
	}
	p.renderVerify(w, http.StatusOK, "verify.html", v)
}

func (p *Pages) verifyConfirm(w http.ResponseWriter, r *http.Request) {
	v, err := p.Contacts.ConfirmVerification(r.Context(), r.PathValue("token"))
	if err != nil {
		p.verifyFailed(w, r, err)
		return
	}
	p.renderVerify(w, http.StatusOK, "verify_done.html", v)
}

// verifyFailed answers a link that is not live with the 404 page, and
// anything else (an outage) with the error page and the request id.
func (p *Pages) verifyFailed(w http.ResponseWriter, r *http.Request, err error) {
	if e, ok := fault.As(err); ok && e.Kind == fault.NotFound {
		p.renderVerify(w, http.StatusNotFound, "verify_missing.html", nil)
		return
	}
	id := w.Header().Get("X-Request-Id")
	p.log.Error("verification page", "request_id", id, "method", r.Method, "err", err)
	p.renderVerify(w, http.StatusInternalServerError, "verify_error.html", id)
}

// renderVerify writes a page with the headers every verification page
// carries: no framing, no scripts or styles from elsewhere, no caching and no
// Referer (the URL holds the link's secret).
func (p *Pages) renderVerify(w http.ResponseWriter, status int, name string, data any) {
	writePage(w, p.log, verifyTemplates, name, status, data, setVerifyHeaders)
}

func setVerifyHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}
