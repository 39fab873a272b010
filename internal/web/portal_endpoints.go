package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"payd/internal/clock"
	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/webhook"
)

// The developers page's webhook endpoints (CONTRACT §21, §25): create one
// (its secret shown on that answer only), rotate its secret (the new one
// shown once), disable or enable it, its delivery log, and a replay of a
// range of events to it. Plain forms, each with the session's CSRF token,
// that work without JavaScript.

func (h *portalPages) endpointRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/developers/endpoints", may: portal.SeeDevelopers, handle: h.endpoints},
		{method: "POST", path: "/portal/developers/endpoints", may: portal.CreateApps, audit: portal.AuditEndpointCreated, handle: h.createEndpoint},
		{method: "GET", path: "/portal/developers/endpoints/{id}", may: portal.SeeDevelopers, handle: h.endpoint},
		{method: "POST", path: "/portal/developers/endpoints/{id}/rotate", may: portal.CreateApps, audit: portal.AuditEndpointSecretRotated, handle: h.rotateEndpoint},
		{method: "POST", path: "/portal/developers/endpoints/{id}/disable", may: portal.CreateApps, audit: portal.AuditEndpointDisabled, handle: h.endpointStatus(webhook.EndpointDisabled)},
		{method: "POST", path: "/portal/developers/endpoints/{id}/enable", may: portal.CreateApps, audit: portal.AuditEndpointEnabled, handle: h.endpointStatus(webhook.EndpointEnabled)},
		{method: "POST", path: "/portal/developers/endpoints/{id}/replay", may: portal.ResendWebhooks, audit: portal.AuditEventsReplayed, handle: h.replayEvents},
	}
}

// endpointsData is the endpoints page: the list, and what an action just
// made that is shown this once.
type endpointsData struct {
	Endpoints []webhook.Endpoint
	// Secret is a new endpoint's, or a rotation's, secret; SecretOf its endpoint.
	Secret, SecretOf string
}

// endpointsPath is the endpoints page's path, where a new or rotated
// secret is shown once.
const endpointsPath = "/portal/developers/endpoints"

func (h *portalPages) endpoints(w http.ResponseWriter, r *http.Request, s portal.Session) {
	f := h.takeFlash(r, s)
	h.endpointsPage(w, r, s, http.StatusOK, endpointsData{Secret: f.Secret, SecretOf: f.Subject})
}

func (h *portalPages) endpointsPage(w http.ResponseWriter, r *http.Request, s portal.Session, status int, d endpointsData) {
	list, err := h.Webhooks.Endpoints(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	d.Endpoints = list
	h.render(w, r, status, "endpoints", h.page(s, "Webhook endpoints", d))
}

// maxEndpointForm bounds the enabled_events text of the create form.
const maxEndpointForm = 4000

func (h *portalPages) createEndpoint(w http.ResponseWriter, r *http.Request, s portal.Session) {
	events := r.PostFormValue("enabled_events")
	if len(events) > maxEndpointForm {
		h.fail(w, r, s, fault.Field("enabled_events", "is too long"))
		return
	}
	var list []string
	for _, e := range strings.FieldsFunc(events, func(c rune) bool { return c == ',' || c == '\n' || c == '\r' || c == ' ' }) {
		list = append(list, e)
	}
	ep, err := h.actions.CreateEndpoint(r.Context(), s, webhook.EndpointRequest{URL: strings.TrimSpace(r.PostFormValue("url")), EnabledEvents: list,
		Description: r.PostFormValue("description")}, h.client(r))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.showSecret(w, r, s, endpointsData{Secret: ep.Secret, SecretOf: ep.ID})
}

// showSecret answers 303 to the endpoints page, which shows d's secret on
// its first view only (post/redirect/get).
func (h *portalPages) showSecret(w http.ResponseWriter, r *http.Request, s portal.Session, d endpointsData) {
	h.redirectFlash(w, r, s, portal.Flash{Page: endpointsPath, Subject: d.SecretOf, Secret: d.Secret},
		func() { h.endpointsPage(w, r, s, http.StatusOK, d) })
}

func (h *portalPages) rotateEndpoint(w http.ResponseWriter, r *http.Request, s portal.Session) {
	rs, err := h.actions.RotateEndpointSecret(r.Context(), s, r.PathValue("id"), h.client(r))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.showSecret(w, r, s, endpointsData{Secret: rs.Secret, SecretOf: rs.ID})
}

func (h *portalPages) endpointStatus(status webhook.EndpointStatus) sessionHandler {
	return func(w http.ResponseWriter, r *http.Request, s portal.Session) {
		h.done(w, r, s, h.actions.SetEndpointStatus(r.Context(), s, r.PathValue("id"), status, h.client(r)), "/portal/developers/endpoints")
	}
}

// endpoint is one endpoint's page: its delivery log and the replay form.
func (h *portalPages) endpoint(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.endpointPage(w, r, s, http.StatusOK, h.takeFlash(r, s).Notice)
}

func (h *portalPages) endpointPage(w http.ResponseWriter, r *http.Request, s portal.Session, status int, notice string) {
	ep, err := h.Webhooks.Endpoint(r.Context(), h.DB.Read(), s.MerchantID, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	deliveries, err := h.Webhooks.EndpointDeliveries(r.Context(), s.MerchantID, ep.ID, 50)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, status, "endpoint", h.page(s, "Webhook endpoint", map[string]any{"Endpoint": ep, "Deliveries": deliveries, "Notice": notice,
		"CanReplay": s.May(portal.ResendWebhooks) == nil}))
}

// replayEvents sends a range of events again to the endpoint; dates are
// in the merchant's zone, to_date's whole day included.
func (h *portalPages) replayEvents(w http.ResponseWriter, r *http.Request, s portal.Session) {
	p, _, err := h.principal(r.Context(), s, "")
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	rp, err := replayForm(r, merchant.Location(p.Timezone))
	if err == nil {
		var res webhook.Replayed
		res, err = h.actions.ReplayEvents(r.Context(), s, rp, h.client(r))
		if err == nil {
			notice := plural(res.Queued, "event") + " queued again for this endpoint."
			h.redirectFlash(w, r, s, portal.Flash{Page: endpointsPath + "/" + url.PathEscape(rp.EndpointID), Notice: notice},
				func() { h.endpointPage(w, r, s, http.StatusOK, notice) })
			return
		}
	}
	h.fail(w, r, s, err)
}

// replayForm reads the replay form of the endpoint the path names.
func replayForm(r *http.Request, loc *time.Location) (webhook.Replay, error) {
	f := fault.Fields{}
	rp := webhook.Replay{EndpointID: r.PathValue("id")}
	var err error
	if rp.From, err = clock.ParseDate(r.PostFormValue("from_date"), loc); err != nil {
		f.Add("from_date", "must be a date (YYYY-MM-DD)")
	}
	if rp.To, err = clock.ParseDateEnd(r.PostFormValue("to_date"), loc); err != nil {
		f.Add("to_date", "must be a date (YYYY-MM-DD)")
	}
	if f.Err() == nil && !rp.To.After(rp.From) {
		f.Add("to_date", "is not after from_date")
	}
	if types := strings.TrimSpace(r.PostFormValue("types")); types != "" {
		rp.Types = strings.FieldsFunc(types, func(c rune) bool { return c == ',' || c == ' ' })
	}
	return rp, f.Err()
}

// plural is n and noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
