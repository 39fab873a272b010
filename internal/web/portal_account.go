package web

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"payd/internal/portal"
)

// The user's own account: the TOTP second factor, turned on by a code of
// the key the page shows (as a QR code too) and off by a current code.

func (h *portalPages) accountRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/account/totp", handle: h.totpPage},
		{method: "POST", path: "/portal/account/totp", audit: portal.AuditTOTPEnabled, handle: h.confirmTOTP},
		{method: "POST", path: "/portal/account/totp/disable", audit: portal.AuditTOTPDisabled, handle: h.disableTOTP},
	}
}

func (h *portalPages) totpPage(w http.ResponseWriter, r *http.Request, s portal.Session) {
	if s.HasTOTP {
		h.render(w, r, http.StatusOK, "totp", h.page(s, "Second factor", map[string]any{"Enabled": true}))
		return
	}
	uri, secret, err := h.Portal.BeginTOTP(r.Context(), s)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	png, err := qrPNG(uri)
	if err != nil {
		h.fail(w, r, s, fmt.Errorf("draw the TOTP key's QR code: %w", err))
		return
	}
	h.render(w, r, http.StatusOK, "totp", h.page(s, "Second factor", map[string]any{"Enabled": false,
		"QR": base64.StdEncoding.EncodeToString(png), "Secret": secret}))
}

func (h *portalPages) confirmTOTP(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.Portal.ConfirmTOTP(r.Context(), s, strings.TrimSpace(r.PostFormValue("code")), h.client(r)), "/portal/account/totp")
}

func (h *portalPages) disableTOTP(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.Portal.DisableTOTP(r.Context(), s, strings.TrimSpace(r.PostFormValue("code")), h.client(r)), "/portal/account/totp")
}
