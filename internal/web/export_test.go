package web

import "payd/internal/portal"

// PortalRoute is a route of the portal's table as the tests beside each
// page group read it.
type PortalRoute struct {
	Method, Path string
	Public       bool
	May          portal.Permission
	Audit        portal.AuditAction
}

// PortalRoutes is the portal's route table.
func PortalRoutes() []PortalRoute {
	var out []PortalRoute
	for _, rt := range (&portalPages{}).routes() {
		out = append(out, PortalRoute{Method: rt.method, Path: rt.path, Public: rt.public, May: rt.may, Audit: rt.audit})
	}
	return out
}

// LineTotal is the checkout's quantity × price.
var LineTotal = lineTotal
