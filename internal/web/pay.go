package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"payd/internal/fault"
	"payd/internal/money"
	"payd/internal/payin"
)

// The hosted payment page of a payin (CONTRACT §4). A redirect method's
// pay_code.pay_url is {public_url}/pay/{uuid}?t={token}: the token, an HMAC of
// the uuid, is the page's only credential, so a wrong token answers exactly as
// an unknown uuid does (404), and the page is never cached, framed or named in
// a Referer.

const (
	// maxPayFormBytes bounds the body of the Pay and Fail form (two short fields).
	maxPayFormBytes = 4 << 10
	// qrSizePixels is the most width and height of a QR image whose code
	// fits at one pixel a module or more (see writeQR).
	qrSizePixels = 320
)

// Outcomes of the sandbox buttons, as payin.Service.PayHosted takes them.
const (
	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
)

// outcomeStatus is the status each button moves a pending payin to.
var outcomeStatus = map[string]payin.Status{outcomeCompleted: payin.Received, outcomeFailed: payin.Failed}

// hostedPayins is what the payment page needs of payins.
type hostedPayins interface {
	Hosted(ctx context.Context, uuid, token string) (payin.Payin, error)
	HostedPayee(ctx context.Context, uuid, token string) (payin.Payee, error)
	PayHosted(ctx context.Context, uuid, token, outcome string) (payin.Payin, error)
}

// payPage serves /pay/{uuid} and its QR image.
type payPage struct {
	hosted
	payins hostedPayins
	// sandbox shows the Pay and Fail buttons and accepts their POST.
	// Production has no simulation rail: there the page only shows the payin.
	sandbox bool
}

func newPayPage(payins hostedPayins, log *slog.Logger, sandbox bool) *payPage {
	return &payPage{hosted: newHosted(log, "pay page", payErrorView{"Payment not found", "This payment link is not valid. Check the link the merchant gave you."}),
		payins: payins, sandbox: sandbox}
}

// mountPay mounts the hosted payment page of payins (/pay/{uuid}). Only
// the sandbox shows the Pay and Fail buttons and accepts their POST: in
// production the customer pays through the real rail.
func (p *Pages) mountPay() {
	newPayPage(p.Payins, p.Log, p.Sandbox).mount(p.mux)
}

func (h *payPage) mount(mux *http.ServeMux) {
	mux.HandleFunc("/pay/{uuid}", h.servePage)
	mux.HandleFunc("/pay/{uuid}/qr.png", h.serveQR)
	mux.HandleFunc("/pay/", func(w http.ResponseWriter, r *http.Request) {
		h.renderError(w, http.StatusNotFound)
	})
	mux.HandleFunc("GET /assets/pay.css", serveAsset("assets/pay.css"))
}

// allowed is the Allow header of the page: the buttons' POST only in the sandbox.
func (h *payPage) allowed() string {
	if h.sandbox {
		return "GET, HEAD, POST"
	}
	return "GET, HEAD"
}

func (h *payPage) servePage(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		h.show(w, r)
	case r.Method == http.MethodPost && h.sandbox:
		h.pay(w, r)
	default:
		w.Header().Set("Allow", h.allowed())
		h.renderError(w, http.StatusMethodNotAllowed)
	}
}

// show renders the payin behind the link.
func (h *payPage) show(w http.ResponseWriter, r *http.Request) {
	uuid, token := r.PathValue("uuid"), r.URL.Query().Get("t")
	pi, err := h.payins.Hosted(r.Context(), uuid, token)
	if err != nil {
		h.fail(w, err, "uuid", uuid)
		return
	}
	h.renderPage(w, http.StatusOK, h.view(r, pi, token))
}

// pay is a press of the sandbox Pay or Fail button. The link's token
// authorises it; the form must also carry the token it was rendered with, so
// a page on another site cannot post it without knowing the secret link.
func (h *payPage) pay(w http.ResponseWriter, r *http.Request) {
	uuid, token := r.PathValue("uuid"), r.URL.Query().Get("t")
	invalid, ok := h.readForm(w, r, hostedForm{maxBytes: maxPayFormBytes, field: "t", token: token, logArgs: []any{"uuid", uuid},
		live: func() error { _, err := h.payins.Hosted(r.Context(), uuid, token); return err }})
	if !ok {
		return
	}
	if invalid != nil {
		h.renderError(w, fault.Status(invalid.Kind))
		return
	}
	outcome := r.PostForm.Get("outcome")
	pi, err := h.payins.PayHosted(r.Context(), uuid, token, outcome)
	if fault.Is(err, fault.CodeInvalidState) {
		h.settled(w, r, uuid, token, outcome)
		return
	}
	if err != nil {
		h.fail(w, err, "uuid", uuid)
		return
	}
	h.finish(w, r, pi, token)
}

// settled answers a button pressed on a payin that is no longer pending. A
// second press of the button that settled it (a double click, a resubmitted
// form) ends as the first did; any other shows the final status.
func (h *payPage) settled(w http.ResponseWriter, r *http.Request, uuid, token, outcome string) {
	pi, err := h.payins.Hosted(r.Context(), uuid, token)
	if err != nil {
		h.fail(w, err, "uuid", uuid)
		return
	}
	if pi.Status == outcomeStatus[outcome] {
		h.finish(w, r, pi, token)
		return
	}
	h.renderPage(w, http.StatusConflict, h.view(r, pi, token))
}

// finish returns the customer to the merchant after a button settled the
// payin: to callback_url when it was received, to failure_callback_url when
// it failed (CONTRACT §4). Without that page the customer stays here and
// sees the outcome.
func (h *payPage) finish(w http.ResponseWriter, r *http.Request, pi payin.Payin, token string) {
	target, ok := returnURL(pi)
	if !ok {
		h.renderPage(w, http.StatusOK, h.view(r, pi, token))
		return
	}
	setPayHeaders(w.Header(), returnOrigins(pi))
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// returnURL is the merchant page a settled payin sends its customer to.
func returnURL(pi payin.Payin) (string, bool) {
	var param string
	switch pi.Status {
	case payin.Received:
		param = "callback_url"
	case payin.Failed:
		param = "failure_callback_url"
	default:
		return "", false
	}
	raw, _ := pi.PayinMethodParams[param].(string)
	if _, ok := returnOrigin(raw); !ok {
		return "", false
	}
	return raw, true
}

// serveQR serves a pending QR payin's pay_code.qr_string as a PNG, rendered
// here so the page needs no script and no third-party image service.
func (h *payPage) serveQR(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.renderError(w, http.StatusMethodNotAllowed)
		return
	}
	uuid, token := r.PathValue("uuid"), r.URL.Query().Get("t")
	pi, err := h.payins.Hosted(r.Context(), uuid, token)
	if err != nil {
		h.fail(w, err, "uuid", uuid)
		return
	}
	text := payQRString(pi)
	if text == "" || pi.Status != payin.Pending {
		h.renderError(w, http.StatusNotFound)
		return
	}
	if err := writeQR(w, text); err != nil {
		h.fail(w, fmt.Errorf("render QR of payin %s: %w", uuid, err), "uuid", uuid)
	}
}

// writeQR answers with text drawn as a QR code in a PNG (qrPNG).
func writeQR(w http.ResponseWriter, text string) error {
	png, err := qrPNG(text)
	if err != nil {
		return err
	}
	setPayHeaders(w.Header(), nil)
	w.Header().Set("Content-Type", "image/png")
	w.Write(png)
	return nil
}

// qrPNG draws text as a QR code in a PNG, with the standard's quiet zone
// of four modules around it and each module a whole number of pixels, as
// many as fit in qrSizePixels: every QR code payd shows (pay pages, PayID,
// Payment Gateway 3 links, the portal's second-factor enrolment). A module
// drawn over a fractional width (go-qrcode's fixed-size images) has uneven
// edges that some readers misjudge: gozxing failed on 160 of 10,000 sandbox
// KHQRs drawn at 320 px, which zbar read, and on none drawn this way.
func qrPNG(text string) ([]byte, error) {
	q, err := qrcode.New(text, qrcode.Medium)
	if err != nil {
		return nil, err
	}
	return q.PNG(-max(1, qrSizePixels/len(q.Bitmap())))
}

func payQRString(pi payin.Payin) string {
	s, _ := pi.PayCode["qr_string"].(string)
	return s
}

// payView is what templates/pay.html shows.
type payView struct {
	UUID, Token string
	Description string
	// Amount is the payin's total, the decimal string of the record.
	Amount, Currency string
	Method           string
	Status           payin.Status
	StatusText       string
	Pending          bool
	ExpiresAt        string
	QRString         string
	// Payee is the merchant's name; Instruction says what the customer
	// does, in words.
	Payee, Instruction string
	// Buttons shows the sandbox Pay and Fail form.
	Buttons bool
	// formTargets are the origins the form may end on (see setPayHeaders).
	formTargets []string
}

func (h *payPage) view(r *http.Request, pi payin.Payin, token string) payView {
	payee, err := h.payins.HostedPayee(r.Context(), pi.UUID, token)
	if err != nil {
		// The payin was just read by the same token: only the database can
		// fail here, and the page still shows the payment without its payee.
		h.log.Warn("pay page: payee", "uuid", pi.UUID, "err", err)
		payee = payin.Payee{Zone: time.UTC}
	}
	method := pi.PaymentMethod
	if m, err := payin.Lookup(pi.PaymentMethod); err == nil {
		method = m.Description
	}
	pending := pi.Status == payin.Pending
	v := payView{
		UUID: pi.UUID, Token: token, Description: pi.Description,
		Amount:   money.Format(pi.Total.Minor, money.Currency{Code: pi.Currency, Digits: pi.Total.Digits}),
		Currency: pi.Currency, Method: method, Status: pi.Status, StatusText: pi.StatusText,
		Pending: pending, Buttons: pending && h.sandbox, formTargets: returnOrigins(pi),
	}
	v.Payee = payee.Name
	if pending {
		v.QRString = payQRString(pi)
		v.ExpiresAt = pi.ExpiredAt.T.In(payee.Zone).Format("2 Jan 2006 15:04 MST")
		v.Instruction = payInstruction(v)
	}
	return v
}

// returnOrigins are the origins of the merchant pages the buttons may return
// the customer to.
func returnOrigins(pi payin.Payin) []string {
	var out []string
	for _, param := range []string{"callback_url", "failure_callback_url"} {
		raw, _ := pi.PayinMethodParams[param].(string)
		if o, ok := returnOrigin(raw); ok {
			out = append(out, o)
		}
	}
	return out
}

// cspHostChars are the characters of a host (and port) that may appear in a
// Content-Security-Policy source unquoted.
var cspHostChars = regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]+)?$`)

// returnOrigin returns the scheme://host[:port] of an absolute http(s) URL.
func returnOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !cspHostChars.MatchString(u.Host) {
		return "", false
	}
	return u.Scheme + "://" + u.Host, true
}

// setPayHeaders sets the headers every pay page answers with. The policy
// allows only this site's styles and images (the QR is /pay/{uuid}/qr.png)
// and no inline script or style. Chromium applies form-action to the
// redirects that follow a form submission as well, so the merchant's return
// pages are listed there.
func setPayHeaders(h http.Header, formTargets []string) {
	formAction := strings.Join(append([]string{"'self'"}, formTargets...), " ")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

func (h *payPage) renderPage(w http.ResponseWriter, status int, v payView) {
	h.render(w, status, "pay.html", v, func(hd http.Header) { setPayHeaders(hd, v.formTargets) })
}

// payInstruction says what a pending payin's customer does.
func payInstruction(v payView) string {
	to := "the merchant"
	if v.Payee != "" {
		to = v.Payee
	}
	if v.QRString != "" {
		return fmt.Sprintf("Scan the QR code below with your banking or e-wallet app and pay %s %s to %s before %s.", v.Amount, v.Currency, to, v.ExpiresAt)
	}
	return fmt.Sprintf("Pay %s %s to %s by %s before %s, following the steps your bank or wallet shows.", v.Amount, v.Currency, to, v.Method, v.ExpiresAt)
}
