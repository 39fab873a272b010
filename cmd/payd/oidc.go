package main

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"payd/internal/portal"
	"payd/internal/web"
)

// oidcFlags are serve's settings of the portal's sign-in by OpenID Connect
// (CONTRACT §23), each with its PAYD_OIDC_* twin.
type oidcFlags struct {
	issuer, clientID, secretFile, rolesClaim, roleMap *string
}

func (f *flagSet) oidc() oidcFlags {
	return oidcFlags{
		issuer:     f.setting("oidc-issuer", "PAYD_OIDC_ISSUER", "", "portal sign-in by OpenID Connect: the identity provider's issuer URL (default off)"),
		clientID:   f.setting("oidc-client-id", "PAYD_OIDC_CLIENT_ID", "", "payd's client id at the identity provider (required with --oidc-issuer)"),
		secretFile: f.setting("oidc-client-secret-file", "PAYD_OIDC_CLIENT_SECRET_FILE", "", "file holding payd's client secret at the identity provider (default none: a public client)"),
		rolesClaim: f.setting("oidc-roles-claim", "PAYD_OIDC_ROLES_CLAIM", "groups", "the ID token's claim of the user's groups"),
		roleMap: f.setting("oidc-role-map", "PAYD_OIDC_ROLE_MAP", "",
			"portal roles of the identity provider's groups: admin=GROUP,finance=GROUP,developer=GROUP,viewer=GROUP (a user in none keeps the invited role)"),
	}
}

// config is the setting the flags make: nil when --oidc-issuer is not set,
// a usageError naming the flag when one is wrong.
func (o oidcFlags) config() (*web.OIDC, error) {
	if *o.issuer == "" {
		for name, v := range map[string]string{"--oidc-client-id": *o.clientID, "--oidc-client-secret-file": *o.secretFile, "--oidc-role-map": *o.roleMap} {
			if v != "" {
				return nil, usageError{name + " needs --oidc-issuer"}
			}
		}
		return nil, nil
	}
	if err := checkIssuer(*o.issuer); err != nil {
		return nil, usageError{"--oidc-issuer: " + err.Error()}
	}
	if strings.TrimSpace(*o.clientID) == "" {
		return nil, usageError{"--oidc-client-id: required with --oidc-issuer"}
	}
	if strings.TrimSpace(*o.rolesClaim) == "" {
		return nil, usageError{"--oidc-roles-claim: must name a claim, such as groups"}
	}
	roles, err := portal.ParseRoleMap(*o.roleMap)
	if err != nil {
		return nil, usageError{"--oidc-role-map: " + err.Error()}
	}
	c := &web.OIDC{Issuer: *o.issuer, ClientID: *o.clientID, RolesClaim: *o.rolesClaim, Roles: roles}
	if *o.secretFile != "" {
		secret, err := os.ReadFile(*o.secretFile)
		if err != nil {
			return nil, usageError{"--oidc-client-secret-file: " + err.Error()}
		}
		if c.ClientSecret = strings.TrimSpace(string(secret)); c.ClientSecret == "" {
			return nil, usageError{"--oidc-client-secret-file: " + *o.secretFile + " is empty"}
		}
	}
	return c, nil
}

// checkIssuer accepts an https URL, or http on a loopback address (an
// identity provider on the same machine): ID tokens and the client secret
// never cross a network in the clear.
func checkIssuer(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an issuer URL, such as https://id.example.com", s)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	loopback := host == "localhost" || ip != nil && ip.IsLoopback()
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return fmt.Errorf("%q must be https (http only on a loopback address)", s)
	}
	return nil
}
