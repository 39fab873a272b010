package portal_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/server/servertest"
)

// TestParseRoleMap: --oidc-role-map is ROLE=GROUP pairs; a pair that is
// not one, an unknown role or a group given twice is refused naming it.
func TestParseRoleMap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     portal.RoleMap
		wantErr  string
	}{
		{"empty", "", portal.RoleMap{}, ""},
		{"every role", "admin=ops, finance=accounts,developer=eng,viewer=staff",
			portal.RoleMap{"ops": merchant.Admin, "accounts": merchant.Finance, "eng": merchant.Developer, "staff": merchant.Viewer}, ""},
		{"a role twice", "admin=ops,admin=founders", portal.RoleMap{"ops": merchant.Admin, "founders": merchant.Admin}, ""},
		{"no group", "admin=", nil, `"admin=" is not ROLE=GROUP`},
		{"no equals sign", "admin", nil, `"admin" is not ROLE=GROUP`},
		{"an unknown role", "owner=ops", nil, `"owner=ops": the role must be admin, finance, developer or viewer`},
		{"a group twice", "admin=ops,viewer=ops", nil, `the group "ops" is mapped twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := portal.ParseRoleMap(tt.in)
			if gotErr := errText(err); gotErr != tt.wantErr {
				t.Fatalf("ParseRoleMap(%q) error = %q, want %q", tt.in, gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseRoleMap(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRoleFor: the highest role of the mapped groups wins (CONTRACT §25);
// with no mapped group there is none, and the user keeps the invited role.
func TestRoleFor(t *testing.T) {
	t.Parallel()
	roles := portal.RoleMap{"ops": merchant.Admin, "accounts": merchant.Finance, "eng": merchant.Developer, "staff": merchant.Viewer}
	tests := []struct {
		name       string
		groups     []string
		want       merchant.Role
		wantMapped bool
	}{
		{"one group", []string{"eng"}, merchant.Developer, true},
		{"viewer and finance", []string{"staff", "accounts"}, merchant.Finance, true},
		{"developer and finance", []string{"eng", "accounts"}, merchant.Finance, true},
		{"admin among others", []string{"staff", "ops", "eng", "accounts"}, merchant.Admin, true},
		{"unmapped groups beside a mapped one", []string{"everyone", "staff"}, merchant.Viewer, true},
		{"only unmapped groups", []string{"everyone"}, "", false},
		{"no groups", nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, mapped := roles.RoleFor(tt.groups)
			if got != tt.want || mapped != tt.wantMapped {
				t.Errorf("RoleFor(%v) = %q, %v; want %q, %v", tt.groups, got, mapped, tt.want, tt.wantMapped)
			}
		})
	}
}

// TestLoginOIDC: an invited user whose email the identity provider
// verified signs in with the role of the mapped groups, for that session
// only (the invited role stays theirs); without a mapped group with the
// invited role; an unverified email, an uninvited or disabled user is
// refused. Every sign-in is audited with its method.
func TestLoginOIDC(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		m := e.Merchant(t, "AUD")["AUD"]
		user(t, e, m.MerchantID, "dev@shop.example", merchant.Developer)
		roles := portal.RoleMap{"accounts": merchant.Finance}

		s, err := e.Portal.LoginOIDC(ctx, portal.Identity{Email: "Dev@Shop.example", EmailVerified: true, Groups: []string{"accounts"}, Client: "192.0.2.1"}, roles)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Portal.Authenticate(ctx, s.Token)
		if err != nil || got.Role != merchant.Finance || got.Email != "dev@shop.example" {
			t.Errorf("the mapped session: %+v, %v; want dev@shop.example as finance", got.User, err)
		}
		plain, err := e.Portal.LoginOIDC(ctx, portal.Identity{Email: "dev@shop.example", EmailVerified: true, Groups: []string{"everyone"}}, roles)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := e.Portal.Authenticate(ctx, plain.Token); err != nil || got.Role != merchant.Developer {
			t.Errorf("without a mapped group: %q, %v; want the invited role developer", got.Role, err)
		}
		if pw, err := login(e, "dev@shop.example", password, ""); err != nil || pw.Role != merchant.Developer {
			t.Errorf("password sign-in after single sign-on: %q, %v; want developer", pw.Role, err)
		}
		entries, _, err := e.Portal.AuditPage(ctx, m.MerchantID, 1, 10)
		if err != nil {
			t.Fatal(err)
		}
		var details []string
		for _, en := range entries {
			details = append(details, string(en.Action)+": "+en.Detail)
		}
		want := []string{"login: method password", "login: method oidc", "login: method oidc, role finance from the identity provider's groups"}
		if diff := cmp.Diff(want, details[:3]); diff != "" {
			t.Errorf("audit log (-want +got):\n%s", diff)
		}

		user(t, e, m.MerchantID, "gone@shop.example", merchant.Admin)
		admin := user(t, e, m.MerchantID, "admin@shop.example", merchant.Admin)
		adminSession, err := login(e, admin.Email, password, "")
		if err != nil {
			t.Fatal(err)
		}
		members, _ := e.Portal.Members(ctx, m.MerchantID)
		for _, mv := range members {
			if mv.Email == "gone@shop.example" {
				if err := e.Portal.Disable(ctx, adminSession, mv.ID, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		refusals := []struct {
			name string
			id   portal.Identity
			want error
		}{
			{"an unverified email", portal.Identity{Email: "dev@shop.example", Groups: []string{"accounts"}}, portal.ErrSSOUnverified},
			{"an uninvited email", portal.Identity{Email: "stranger@shop.example", EmailVerified: true}, portal.ErrSSONotInvited},
			{"a disabled user", portal.Identity{Email: "gone@shop.example", EmailVerified: true}, portal.ErrSSONotInvited},
			{"no email", portal.Identity{EmailVerified: true}, portal.ErrSSONoEmail},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := e.Portal.LoginOIDC(ctx, tt.id, roles); !errors.Is(err, tt.want) {
					t.Errorf("LoginOIDC = %v, want %v", err, tt.want)
				}
			})
		}
		entries, _, _ = e.Portal.AuditPage(ctx, m.MerchantID, 1, 10)
		if !slicesHas(entries, func(en portal.Entry) bool {
			return en.Action == portal.AuditLoginFailed && en.Subject == "dev@shop.example" && strings.HasPrefix(en.Detail, "method oidc: ")
		}) {
			t.Errorf("the unverified sign-in is not audited: %+v", entries)
		}
	})
}

func slicesHas(entries []portal.Entry, f func(portal.Entry) bool) bool {
	for _, en := range entries {
		if f(en) {
			return true
		}
	}
	return false
}

// TestTakeOIDC: a sign-in's state gives back its nonce and verifier once;
// a replayed or unknown state is refused.
func TestTakeOIDC(t *testing.T) {
	t.Parallel()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		ctx := context.Background()
		if err := e.Portal.BeginOIDC(ctx, "state-1", "nonce-1", "verifier-1"); err != nil {
			t.Fatal(err)
		}
		nonce, verifier, err := e.Portal.TakeOIDC(ctx, "state-1")
		if err != nil || nonce != "nonce-1" || verifier != "verifier-1" {
			t.Errorf("TakeOIDC = %q, %q, %v; want nonce-1, verifier-1", nonce, verifier, err)
		}
		for _, state := range []string{"state-1", "unknown", ""} {
			if _, _, err := e.Portal.TakeOIDC(ctx, state); !errors.Is(err, portal.ErrSSOState) {
				t.Errorf("TakeOIDC(%q) = %v, want ErrSSOState", state, err)
			}
		}
	})
}
