package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"payd/internal/fault"
	"payd/internal/gateway"
	"payd/internal/money"
)

// The hosted checkout page of the payment gateway (CONTRACT §11):
// {public_url}/checkout/{payment_id}?t={token}. The token, an HMAC of the id,
// is the page's only credential (a wrong one answers as an unknown id) and
// the CSRF token of its forms. The page works without script: the card form
// is validated by the browser (pattern, required) and again on the server.
// It is never framed (v1 checkout pages are never framed).

// maxCheckoutFormBytes bounds the card or sandbox form.
const maxCheckoutFormBytes = 8 << 10

// CheckoutPayID is the PayID way to pay (issue 14 item 2): gateway.Service
// implements it with a one-time PayID of package payid, and server.go sets
// Deps.CheckoutPayID; the page then shows the PayID and its QR code beside
// the card form. Nil offers cards only.
type CheckoutPayID interface {
	// OfferPayID returns the one-time PayID the customer pays checkout's
	// payment to, issuing it on first call, or nil when PayID is not
	// offered for it; paying it marks the gateway payment paid.
	OfferPayID(ctx context.Context, c gateway.Checkout) (*gateway.PayIDOffer, error)
}

type checkoutService interface {
	Checkout(ctx context.Context, id int64, token string) (gateway.Checkout, error)
	Pay(ctx context.Context, id int64, token string, a gateway.Attempt) (gateway.Payment, error)
}

type checkoutPage struct {
	hosted
	svc     checkoutService
	payid   CheckoutPayID
	sandbox bool
}

func (p *Pages) mountCheckout() {
	if p.Gateway == nil {
		return
	}
	h := &checkoutPage{hosted: newHosted(p.Log, "checkout page", payErrorView{"Checkout not found", "This checkout link is not valid. Go back to the shop and try again."}),
		svc: p.Gateway, payid: p.CheckoutPayID, sandbox: p.Sandbox}
	p.mux.HandleFunc("/checkout/{id}", h.serve)
	p.mux.HandleFunc("GET /checkout/{id}/payid.png", h.servePayIDQR)
	p.mux.HandleFunc("/checkout/", func(w http.ResponseWriter, r *http.Request) { h.renderError(w, http.StatusNotFound) })
	p.mux.HandleFunc("GET /assets/checkout.css", serveAsset("assets/checkout.css"))
}

var checkoutStatusText = map[gateway.Status]string{
	gateway.Pending: "Waiting for your payment",
	gateway.Paid:    "Paid. Thank you.",
	gateway.Failed:  "Payment declined",
	gateway.Expired: "This checkout link has expired",
}

type checkoutView struct {
	gateway.Checkout
	Token, PageURL     string
	StatusText         string
	Items              []checkoutItem
	Billing, Shipping  []string
	Sandbox, Retry     bool
	ExpiresAt          string
	Errors             []string
	PayID              *gateway.PayIDOffer
	PayIDQRURL         string
	imgOrigins, formTo []string
}

func (h *checkoutPage) serve(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		h.renderError(w, http.StatusNotFound)
		return
	}
	token := r.URL.Query().Get("t")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.show(w, r, id, token, http.StatusOK, nil)
	case http.MethodPost:
		h.pay(w, r, id, token)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		h.renderError(w, http.StatusMethodNotAllowed)
	}
}

func (h *checkoutPage) show(w http.ResponseWriter, r *http.Request, id int64, token string, status int, errs []string) {
	c, err := h.svc.Checkout(r.Context(), id, token)
	if err != nil {
		h.fail(w, err, "payment_id", id)
		return
	}
	v := h.view(r.Context(), c, token)
	v.Errors = errs
	h.render(w, status, "checkout.html", v, func(hd http.Header) { setCheckoutHeaders(hd, v.imgOrigins, v.formTo) })
}

func (h *checkoutPage) view(ctx context.Context, c gateway.Checkout, token string) checkoutView {
	v := checkoutView{Checkout: c, Token: token, StatusText: checkoutStatusText[c.Status],
		PageURL: "/checkout/" + strconv.FormatInt(c.PaymentID, 10) + "?t=" + token,
		Items:   checkoutItems(c.OrderDetails.Items), Billing: addressLines(c.OrderDetails.BillingDetails),
		Shipping: addressLines(c.OrderDetails.ShippingDetails), Sandbox: c.Payable && h.sandbox,
		Retry: c.Payable && c.Status == gateway.Failed}
	if c.Payable {
		v.ExpiresAt = when(c.Zone, c.ExpiredAt)
		if h.payid != nil {
			offer, err := h.payid.OfferPayID(ctx, c)
			if err != nil {
				h.log.Error("checkout payid", "payment_id", c.PaymentID, "err", err)
			}
			if offer != nil {
				v.PayID = offer
				v.PayIDQRURL = "/checkout/" + strconv.FormatInt(c.PaymentID, 10) + "/payid.png?t=" + token
			}
		}
	}
	seen := map[string]bool{}
	for _, it := range c.OrderDetails.Items {
		if o, ok := returnOrigin(it.ImageURL); ok && !seen[o] {
			seen[o] = true
			v.imgOrigins = append(v.imgOrigins, o)
		}
	}
	sort.Strings(v.imgOrigins)
	if o, ok := returnOrigin(c.OrderSuccessURL); ok {
		v.formTo = []string{o}
	}
	return v
}

func addressLines(a gateway.Address) []string {
	var out []string
	add := func(parts ...string) {
		var keep []string
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				keep = append(keep, p)
			}
		}
		if len(keep) > 0 {
			out = append(out, strings.Join(keep, " "))
		}
	}
	add(a.FirstName, a.LastName)
	add(a.Company)
	add(a.Address)
	add(a.City, a.State, a.PostalCode)
	add(a.CountryCode)
	add(a.Email)
	add(a.Phone)
	return out
}

// pay is a submitted card form or a sandbox button. The form must carry the
// token of the page it was rendered on (its CSRF token).
func (h *checkoutPage) pay(w http.ResponseWriter, r *http.Request, id int64, token string) {
	form := hostedForm{maxBytes: maxCheckoutFormBytes, field: "t", token: token, logArgs: []any{"payment_id", id},
		live: func() error { _, err := h.svc.Checkout(r.Context(), id, token); return err }}
	a, ok := h.readAttempt(w, r, form, h.sandbox, func(status int, errs []string) { h.show(w, r, id, token, status, errs) })
	if !ok {
		return
	}
	p, err := h.svc.Pay(r.Context(), id, token, a)
	if err != nil {
		e, ok := fault.As(err)
		switch {
		case ok && e.Code == fault.CodeInvalidState:
			// A second submit of a paid order (double click, another tab)
			// ends as the first did; otherwise the page shows the outcome.
			if c, err := h.svc.Checkout(r.Context(), id, token); err == nil && c.Status == gateway.Paid {
				h.toShop(w, r, c.Payment)
				return
			}
			h.show(w, r, id, token, fault.Status(e.Kind), nil)
		case ok && len(e.Fields) > 0:
			h.show(w, r, id, token, fault.Status(e.Kind), fieldMessages(e.Fields))
		default:
			h.fail(w, err, "payment_id", id)
		}
		return
	}
	if p.Status == gateway.Paid {
		h.toShop(w, r, p)
		return
	}
	h.show(w, r, id, token, http.StatusOK, nil)
}

// readAttempt reads the form of a gateway page (the checkout, a payin
// link; readForm) and the payment it asks for: its card, or the outcome of
// a sandbox button, which only the sandbox takes (400 elsewhere). A form
// whose values the input rule refuses is shown again by show, with 422 and
// what is wrong. It returns false when it has answered.
func (h hosted) readAttempt(w http.ResponseWriter, r *http.Request, f hostedForm, sandbox bool, show func(status int, errs []string)) (gateway.Attempt, bool) {
	invalid, ok := h.readForm(w, r, f)
	if !ok {
		return gateway.Attempt{}, false
	}
	if invalid != nil {
		show(fault.Status(invalid.Kind), fieldMessages(invalid.Fields))
		return gateway.Attempt{}, false
	}
	outcome := r.PostForm.Get("outcome")
	if outcome == "" {
		return gateway.Attempt{Card: &gateway.Card{Name: r.PostForm.Get("cc-name"), Number: r.PostForm.Get("cc-number"),
			Expiry: r.PostForm.Get("cc-exp"), CVC: r.PostForm.Get("cc-csc")}}, true
	}
	if !sandbox {
		h.renderError(w, http.StatusBadRequest)
		return gateway.Attempt{}, false
	}
	return gateway.Attempt{Sandbox: outcome}, true
}

var cardFieldLabels = map[string]string{"cc-name": "Name on card", "cc-number": "Card number", "cc-exp": "Expiry", "cc-csc": "CVC", "outcome": "Outcome"}

func fieldMessages(f map[string]string) []string {
	var out []string
	for k, v := range f {
		label := cardFieldLabels[k]
		if label == "" {
			label = k
		}
		out = append(out, label+" "+v)
	}
	sort.Strings(out)
	return out
}

// toShop returns the customer to the order_success_url.
func (h *checkoutPage) toShop(w http.ResponseWriter, r *http.Request, p gateway.Payment) {
	var to []string
	if o, ok := returnOrigin(p.OrderSuccessURL); ok {
		to = []string{o}
	}
	setCheckoutHeaders(w.Header(), nil, to)
	http.Redirect(w, r, p.OrderSuccessURL, http.StatusSeeOther)
}

// setCheckoutHeaders: the pay page's strict policy, with the item images'
// origins allowed as images and the shop's return page as a form target.
func setCheckoutHeaders(h http.Header, imgOrigins, formTargets []string) {
	setPayHeaders(h, formTargets)
	img := strings.Join(append([]string{"'self'", "data:"}, imgOrigins...), " ")
	formAction := strings.Join(append([]string{"'self'"}, formTargets...), " ")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src "+img+"; style-src 'self'; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
}

// servePayIDQR serves the QR code of the checkout's one-time PayID: the
// PayID itself, which a banking app reads into its PayID field.
func (h *checkoutPage) servePayIDQR(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 || h.payid == nil {
		h.renderError(w, http.StatusNotFound)
		return
	}
	c, err := h.svc.Checkout(r.Context(), id, r.URL.Query().Get("t"))
	if err != nil {
		h.fail(w, err, "payment_id", id)
		return
	}
	offer, err := h.payid.OfferPayID(r.Context(), c)
	if err != nil {
		h.fail(w, err, "payment_id", id)
		return
	}
	if offer == nil {
		h.renderError(w, http.StatusNotFound)
		return
	}
	if err := writeQR(w, offer.PayID); err != nil {
		h.fail(w, fmt.Errorf("render PayID QR of gateway payment %d: %w", id, err), "payment_id", id)
	}
}

// checkoutItem is an order line as the page shows it: the item and its
// line total (quantity times price), empty when either does not read as a
// number.
type checkoutItem struct {
	gateway.Item
	LineTotal string
}

func checkoutItems(items []gateway.Item) []checkoutItem {
	out := make([]checkoutItem, len(items))
	c := money.MustLookup(gateway.Currency)
	for i, it := range items {
		out[i] = checkoutItem{Item: it}
		if total, ok := lineTotal(it.Quantity, it.Price, c); ok {
			out[i].LineTotal = money.Format(total, c)
		}
	}
	return out
}

// lineTotal is quantity (a decimal of at most 4 places, as create_payment
// takes it) times price (an amount of c) in c's minor units, rounded half
// away from zero, in integers throughout.
func lineTotal(quantity, price string, c money.Currency) (int64, bool) {
	const qScale = 10_000
	q, _, err := money.Parse(quantity, money.Currency{Code: "QTY", Digits: 4})
	if err != nil || q <= 0 {
		return 0, false
	}
	p, _, err := money.Parse(price, c)
	if err != nil || p < 0 || (p > 0 && q > math.MaxInt64/p) {
		return 0, false
	}
	product := q * p
	total := product / qScale
	if product%qScale*2 >= qScale {
		total++
	}
	return total, true
}
