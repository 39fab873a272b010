package portal_test

import (
	"slices"
	"testing"

	"payd/internal/fault"
	"payd/internal/merchant"
	"payd/internal/payout"
	"payd/internal/portal"
)

// TestPermissions: who may do what in the portal (CONTRACT §13): admin
// everything; finance payouts, created and decided; developer the
// developers page; viewer reading only; and deciding is the payout
// service's rule, not a second one.
func TestPermissions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		permission portal.Permission
		want       []merchant.Role
	}{
		{portal.CreatePayouts, []merchant.Role{merchant.Admin, merchant.Finance}},
		{portal.DecidePayouts, []merchant.Role{merchant.Admin, merchant.Finance}},
		{portal.SeeDevelopers, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.CreateApps, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.RevokeApps, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.ResendWebhooks, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.SetEmbedOrigins, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.SeeSigningSecret, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.RotateSigningSecret, []merchant.Role{merchant.Admin, merchant.Developer}},
		{portal.AddUsers, []merchant.Role{merchant.Admin}},
		{portal.ChangeUsers, []merchant.Role{merchant.Admin}},
		{portal.Permission("anything else"), nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.permission), func(t *testing.T) {
			for _, role := range []merchant.Role{merchant.Admin, merchant.Finance, merchant.Developer, merchant.Viewer} {
				err := portal.User{Role: role}.May(tt.permission)
				if got, want := err == nil, slices.Contains(tt.want, role); got != want || (err != nil && !fault.Is(err, fault.CodeForbidden)) {
					t.Errorf("%s may %q: %v, want allowed = %v", role, tt.permission, err, want)
				}
			}
		})
	}
	if got := portal.Roles(portal.DecidePayouts); !slices.Equal(got, payout.DeciderRoles) {
		t.Errorf("Roles(DecidePayouts) = %v, want payout.DeciderRoles %v", got, payout.DeciderRoles)
	}
}
