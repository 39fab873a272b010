package web

import (
	"net/http"

	"payd/internal/portal"
)

// Post/redirect/get (issue 54 item 5): a form that creates something
// answers 303 to the page that shows it, never that page itself, so a
// reload neither sends the form again nor shows its secret again. What the
// page shows once is the session's flash (portal.Flash).

// redirectFlash keeps f for the page f.Page and answers 303 to it. When the
// flash cannot be kept, show answers with the page itself: the secret is
// shown once either way, never lost.
func (h *portalPages) redirectFlash(w http.ResponseWriter, r *http.Request, s portal.Session, f portal.Flash, show func()) {
	if err := h.Portal.SetFlash(r.Context(), s, f); err != nil {
		h.log.Warn("portal flash", "path", r.URL.Path, "err", err)
		show()
		return
	}
	h.redirect(w, r, f.Page)
}

// takeFlash is the session's flash for this page, taken from the session
// (the zero Flash when there is none).
func (h *portalPages) takeFlash(r *http.Request, s portal.Session) portal.Flash {
	f, _, err := h.Portal.TakeFlash(r.Context(), s, r.URL.Path)
	if err != nil {
		h.log.Warn("portal flash", "path", r.URL.Path, "err", err)
	}
	return f
}
