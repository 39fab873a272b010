package web

import (
	"net/http"
	"strconv"
	"strings"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/webhook"
)

// The developers page (CONTRACT §13): apps and their keys, the webhook
// signing secret, the delivery log with resend, and the origins that may
// frame the Payment Gateway 3 pages. Admins and developers use it, the
// signing secret included (CONTRACT §25).

func (h *portalPages) developerRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/developers", may: portal.SeeDevelopers, handle: h.developers},
		{method: "POST", path: "/portal/developers/apps", may: portal.CreateApps, audit: portal.AuditAppCreated, handle: h.createApp},
		{method: "POST", path: "/portal/developers/apps/{app_id}/revoke", may: portal.RevokeApps, audit: portal.AuditAppRevoked, handle: h.revokeApp},
		{method: "POST", path: "/portal/developers/webhook-secret/rotate", may: portal.RotateSigningSecret, audit: portal.AuditSecretRotated, handle: h.rotateSecret},
		{method: "POST", path: "/portal/developers/deliveries/{id}/resend", may: portal.ResendWebhooks, audit: portal.AuditWebhookResent, handle: h.resend},
		{method: "POST", path: "/portal/developers/embed-origins", may: portal.SetEmbedOrigins, audit: portal.AuditEmbedOriginsUpdated, handle: h.setEmbedOrigins},
	}
}

// developersPath is the developers page's path, where a new app's secret
// key is shown once.
const developersPath = "/portal/developers"

func (h *portalPages) developers(w http.ResponseWriter, r *http.Request, s portal.Session) {
	f := h.takeFlash(r, s)
	h.developersPage(w, r, s, merchant.NewApp{AppID: f.Subject, SecretKey: f.Secret})
}

// developersPage is the page; newApp, just created, shows its secret key
// this once (it is stored only as a hash).
func (h *portalPages) developersPage(w http.ResponseWriter, r *http.Request, s portal.Session, newApp merchant.NewApp) {
	apps, err := h.Merchants.Apps(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	currencies, err := h.Merchants.Currencies(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	canRotate := s.May(portal.RotateSigningSecret) == nil
	secret := ""
	if s.May(portal.SeeSigningSecret) == nil {
		if secret, err = h.actions.SigningSecret(r.Context(), s); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	status := webhook.Status(r.URL.Query().Get("status"))
	if status != "" && status != webhook.Pending && status != webhook.Delivered && status != webhook.Failed {
		h.fail(w, r, s, fault.Field("status", "there is no delivery status "+strconv.Quote(clipText(string(status)))+": choose pending, delivered or failed"))
		return
	}
	deliveries, err := h.Webhooks.Recent(r.Context(), s.MerchantID, status, 50)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	origins, err := merchant.EmbedOrigins(r.Context(), h.DB.Read(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "developers", h.page(s, "Developers", map[string]any{"Apps": apps, "Currencies": currencies,
		"Secret": secret, "CanRotate": canRotate, "NewApp": newApp.AppID, "NewSecret": newApp.SecretKey,
		"Deliveries": deliveries, "Status": string(status), "EmbedOrigins": strings.Join(origins, "\n")}))
}

// resend queues a webhook event for another attempt now.
func (h *portalPages) resend(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.actions.ResendWebhook(r.Context(), s, r.PathValue("id"), h.client(r)), "/portal/developers")
}

// setEmbedOrigins replaces the origins that may frame the merchant's
// Payment Gateway 3 pages (CONTRACT §11): one per line or comma-separated.
func (h *portalPages) setEmbedOrigins(w http.ResponseWriter, r *http.Request, s portal.Session) {
	raw := strings.NewReplacer("\r\n", ",", "\n", ",").Replace(r.PostFormValue("embed_origins"))
	var list []string
	for _, o := range strings.Split(raw, ",") {
		list = append(list, strings.TrimSpace(o))
	}
	h.done(w, r, s, h.actions.SetEmbedOrigins(r.Context(), s, list, h.client(r)), "/portal/developers")
}

// createApp answers 303 to the developers page, which shows the new secret
// key on its first view only (post/redirect/get). The form's scopes, expires_at and allowed_ips
// are read as payd app create reads its flags (CONTRACT §23); left empty
// the app has every scope, no expiry and any address.
func (h *portalPages) createApp(w http.ResponseWriter, r *http.Request, s portal.Session) {
	access, err := formAccess(r)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	app, err := h.actions.CreateApp(r.Context(), s, r.PostFormValue("currency"), access, h.client(r))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.redirectFlash(w, r, s, portal.Flash{Page: developersPath, Subject: app.AppID, Secret: app.SecretKey}, func() { h.developersPage(w, r, s, app) })
}

func (h *portalPages) revokeApp(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.actions.RevokeApp(r.Context(), s, r.PathValue("app_id"), h.client(r)), "/portal/developers")
}

func (h *portalPages) rotateSecret(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.actions.RotateSigningSecret(r.Context(), s, h.client(r)), "/portal/developers")
}

// formAccess reads the key form's access settings, each refusal naming its
// field.
func formAccess(r *http.Request) (merchant.Access, error) {
	return merchant.ParseAccess(r.PostFormValue("scopes"), r.PostFormValue("expires_at"), r.PostFormValue("allowed_ips"),
		merchant.AccessFields{Scopes: "scopes", ExpiresAt: "expires_at", AllowedIPs: "allowed_ips"})
}
