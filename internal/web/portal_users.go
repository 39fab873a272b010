package web

import (
	"net/http"

	"payd/internal/merchant"
	"payd/internal/portal"
)

// The merchant's users (CONTRACT §13): every signed-in user sees the list;
// admins add users (by a one-time link), change roles and disable users,
// and the merchant always keeps one enabled admin (portal.Service).

func (h *portalPages) userRoutes() []portalRoute {
	return []portalRoute{
		{method: "GET", path: "/portal/users", handle: h.users},
		{method: "POST", path: "/portal/users", may: portal.AddUsers, audit: portal.AuditUserAdded, handle: h.addUser},
		{method: "POST", path: "/portal/users/{id}/role", may: portal.ChangeUsers, audit: portal.AuditRoleChanged, handle: h.setRole},
		{method: "POST", path: "/portal/users/{id}/disable", may: portal.ChangeUsers, audit: portal.AuditUserDisabled, handle: h.disableUser},
	}
}

// usersPath is the users page's path, where a new user's link is shown once.
const usersPath = "/portal/users"

func (h *portalPages) users(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.usersPage(w, r, s, h.takeFlash(r, s).Secret)
}

// usersPage is the list; invite, when set, is the link just made for a new
// user, shown this once.
func (h *portalPages) usersPage(w http.ResponseWriter, r *http.Request, s portal.Session, invite string) {
	members, err := h.Portal.Members(r.Context(), s.MerchantID)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, http.StatusOK, "users", h.page(s, "Users", map[string]any{"Members": members,
		"CanAdd": s.May(portal.AddUsers) == nil, "CanChange": s.May(portal.ChangeUsers) == nil, "InviteLink": invite}))
}

func (h *portalPages) addUser(w http.ResponseWriter, r *http.Request, s portal.Session) {
	token, err := h.Portal.Invite(r.Context(), s, r.PostFormValue("email"), merchant.Role(r.PostFormValue("role")), h.client(r))
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	link := h.base + "/portal/invite/" + token
	h.redirectFlash(w, r, s, portal.Flash{Page: usersPath, Secret: link}, func() { h.usersPage(w, r, s, link) })
}

func (h *portalPages) setRole(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.Portal.SetRole(r.Context(), s, r.PathValue("id"), merchant.Role(r.PostFormValue("role")), h.client(r)), "/portal/users")
}

func (h *portalPages) disableUser(w http.ResponseWriter, r *http.Request, s portal.Session) {
	h.done(w, r, s, h.Portal.Disable(r.Context(), s, r.PathValue("id"), h.client(r)), "/portal/users")
}
