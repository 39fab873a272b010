package web

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"sort"
	"strings"

	"payd/internal/fault"
	"payd/internal/gateway"
)

// The hosted page of a Payment Gateway 3 payin link (CONTRACT §11):
// {public_url}/links/{uuid}?t={token}. The token, an HMAC of the uuid, is the
// page's credential (a wrong one answers as an unknown uuid); its forms carry
// a csrf_token of their own. Unlike every other page of payd it may be
// framed: by the origin of the link's redirect_url.success and the origins
// the merchant lists, and by no one else (frame-ancestors). Framed, its
// script (assets/link.js) posts svc_payment_event messages to the parent
// with that origin as targetOrigin. Without script the forms still work: a
// card form is checked by the browser (required, pattern) and always again
// on the server.

// maxLinkFormBytes bounds the card or sandbox form.
const maxLinkFormBytes = 8 << 10

// linkService is what the page needs of payin links.
type linkService interface {
	LinkPage(ctx context.Context, uuid, token string) (gateway.LinkPage, error)
	PayLink(ctx context.Context, uuid, token string, a gateway.Attempt) (gateway.Link, error)
	LinkFormToken(uuid string) string
}

type linkPage struct {
	hosted
	svc     linkService
	sandbox bool
}

func (p *Pages) mountLinks() {
	if p.Gateway == nil {
		return
	}
	h := &linkPage{hosted: newHosted(p.Log, "payin link page", payErrorView{"Payment link not found", "This payment link is not valid. Check the link the merchant gave you."}),
		svc: p.Gateway, sandbox: p.Sandbox}
	p.mux.HandleFunc("/links/{uuid}", h.serve)
	p.mux.HandleFunc("GET /links/{uuid}/qr.png", h.serveQR)
	p.mux.HandleFunc("/links/", func(w http.ResponseWriter, r *http.Request) { h.renderError(w, http.StatusNotFound) })
	p.mux.HandleFunc("GET /assets/link.js", serveAsset("assets/link.js"))
}

var linkStatusText = map[gateway.PageState]string{
	gateway.PagePending:    "Waiting for your payment",
	gateway.PageProcessing: "Processing your payment",
	gateway.PagePaid:       "Paid. Thank you.",
	gateway.PageFailed:     "Payment declined",
	gateway.PageExpired:    "This payment link has expired",
}

// linkView is what templates/link.html shows.
type linkView struct {
	gateway.LinkPage
	State                     gateway.PageState
	StatusText                string
	PageURL, QRURL, FormToken string
	// Origins are the frame ancestors, space-separated, for the script.
	Origins                   string
	Card, Bank, KHQR, Sandbox bool
	Paid                      bool
	ExpiresText               string
	Errors                    []string
	formTargets               []string
}

func (h *linkPage) serve(w http.ResponseWriter, r *http.Request) {
	uuid, token := r.PathValue("uuid"), r.URL.Query().Get("t")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.show(w, r, uuid, token, http.StatusOK, nil)
	case http.MethodPost:
		h.pay(w, r, uuid, token)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		h.renderError(w, http.StatusMethodNotAllowed)
	}
}

func (h *linkPage) show(w http.ResponseWriter, r *http.Request, uuid, token string, status int, errs []string) {
	pg, err := h.svc.LinkPage(r.Context(), uuid, token)
	if err != nil {
		h.fail(w, err, "uuid", uuid)
		return
	}
	v := h.view(pg, token)
	v.Errors = errs
	h.render(w, status, "link.html", v, func(hd http.Header) { setLinkHeaders(hd, v.FrameAncestors, v.formTargets) })
}

func (h *linkPage) view(pg gateway.LinkPage, token string) linkView {
	state := pg.State()
	v := linkView{LinkPage: pg, State: state, StatusText: linkStatusText[state],
		PageURL: "/links/" + pg.UUID + "?t=" + token, QRURL: "/links/" + pg.UUID + "/qr.png?t=" + token,
		FormToken: h.svc.LinkFormToken(pg.UUID), Origins: strings.Join(pg.FrameAncestors, " "), Paid: state == gateway.PagePaid}
	if pg.Payable {
		v.Card, v.Bank = pg.Method.Kind == gateway.KindCard, pg.Method.Kind == gateway.KindBank
		v.KHQR = pg.Method.Kind == gateway.KindKHQR && pg.QRString != ""
		v.Sandbox = h.sandbox
		v.ExpiresText = when(pg.Zone, pg.ExpiresAt)
	}
	v.formTargets = returnOriginsOf(pg.Link)
	return v
}

// returnOriginsOf are the origins of the merchant pages a link returns its
// customer to: its forms may end there.
func returnOriginsOf(l gateway.Link) []string {
	var out []string
	for _, raw := range []string{l.RedirectURL.Success, l.RedirectURL.Failure} {
		if o, ok := returnOrigin(raw); ok {
			out = append(out, o)
		}
	}
	return out
}

// linkAnswer is the page's answer to its own script's form posts (Accept:
// application/json): the state to show and post to the embedding page.
type linkAnswer struct {
	PageState     gateway.PageState `json:"page_state"`
	UUID          string            `json:"uuid"`
	RedirectURL   *string           `json:"redirect_url"`
	StatusText    string            `json:"status_text"`
	FailureReason string            `json:"failure_reason"`
	Errors        []string          `json:"errors"`
}

// redirectOf is where the customer goes in a state: redirect_url.success
// when paid; redirect_url.failure, when given, when failed or expired.
func redirectOf(l gateway.Link) *string {
	switch l.State() {
	case gateway.PagePaid:
		return &l.RedirectURL.Success
	case gateway.PageFailed, gateway.PageExpired:
		if l.RedirectURL.Failure != "" {
			return &l.RedirectURL.Failure
		}
	}
	return nil
}

// pay is a submitted card form or a sandbox button. The form must carry
// the link's csrf_token.
func (h *linkPage) pay(w http.ResponseWriter, r *http.Request, uuid, token string) {
	form := hostedForm{maxBytes: maxLinkFormBytes, field: "csrf_token", token: h.svc.LinkFormToken(uuid), logArgs: []any{"uuid", uuid},
		live: func() error { _, err := h.svc.LinkPage(r.Context(), uuid, token); return err }}
	a, ok := h.readAttempt(w, r, form, h.sandbox, func(status int, errs []string) { h.show(w, r, uuid, token, status, errs) })
	if !ok {
		return
	}
	l, err := h.svc.PayLink(r.Context(), uuid, token, a)
	status := http.StatusOK
	var errs []string
	if err != nil {
		e, ok := fault.As(err)
		switch {
		case ok && e.Code == fault.CodeInvalidState:
			// A second submit of a paid link (double click, another tab)
			// ends as the first did; otherwise the page shows the outcome.
			status = fault.Status(e.Kind)
		case ok && len(e.Fields) > 0:
			status, errs = fault.Status(e.Kind), fieldMessages(e.Fields)
		default:
			h.fail(w, err, "uuid", uuid)
			return
		}
		pg, err := h.svc.LinkPage(r.Context(), uuid, token)
		if err != nil {
			h.fail(w, err, "uuid", uuid)
			return
		}
		l = pg.Link
		if l.Status == gateway.LinkPaid {
			status = http.StatusOK
		}
	}
	if wantsJSON(r) {
		h.answer(w, status, l, errs)
		return
	}
	// Without script: paid goes to redirect_url.success, a decline to
	// redirect_url.failure when given; otherwise the page shows the outcome.
	if to := redirectOf(l); to != nil && (l.Status == gateway.LinkPaid || (l.Status == gateway.LinkFailed && status == http.StatusOK)) {
		setLinkHeaders(w.Header(), nil, returnOriginsOf(l))
		http.Redirect(w, r, *to, http.StatusSeeOther)
		return
	}
	h.show(w, r, uuid, token, status, errs)
}

// wantsJSON: the page's script asks for the outcome as JSON.
func wantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && t == "application/json" {
			return true
		}
	}
	return false
}

func (h *linkPage) answer(w http.ResponseWriter, status int, l gateway.Link, errs []string) {
	if errs == nil {
		errs = []string{}
	}
	body, err := json.Marshal(linkAnswer{PageState: l.State(), UUID: l.UUID, RedirectURL: redirectOf(l),
		StatusText: linkStatusText[l.State()], FailureReason: l.FailureReason, Errors: errs})
	if err != nil {
		h.fail(w, err, "uuid", l.UUID)
		return
	}
	setLinkHeaders(w.Header(), nil, nil)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// serveQR serves a payable KHQR link's code as a PNG, rendered here so the
// page needs no third-party image service.
func (h *linkPage) serveQR(w http.ResponseWriter, r *http.Request) {
	uuid := r.PathValue("uuid")
	pg, err := h.svc.LinkPage(r.Context(), uuid, r.URL.Query().Get("t"))
	if err != nil {
		h.fail(w, err, "uuid", uuid)
		return
	}
	if pg.QRString == "" {
		h.renderError(w, http.StatusNotFound)
		return
	}
	if err := writeQR(w, pg.QRString); err != nil {
		h.fail(w, fmt.Errorf("render KHQR of payin link %s: %w", uuid, err), "uuid", uuid)
	}
}

// setLinkHeaders: the pay pages' strict policy, with the page's own script,
// the merchant's return pages as form targets, and frame-ancestors listing
// exactly the origins that may frame it ('none' when there are none).
func setLinkHeaders(h http.Header, frameAncestors, formTargets []string) {
	ancestors := "'none'"
	if len(frameAncestors) > 0 {
		ancestors = strings.Join(frameAncestors, " ")
	}
	targets := append([]string{"'self'"}, formTargets...)
	sort.Strings(targets[1:])
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; form-action "+
		strings.Join(targets, " ")+"; frame-ancestors "+ancestors+"; base-uri 'none'; object-src 'none'")
	h.Del("X-Frame-Options")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}
