package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"payd/internal/merchant"
	"payd/internal/portal"
	"payd/internal/store/storetest"
	"payd/internal/web"
)

// TestOIDCFlags: serve's --oidc-* flags and their PAYD_OIDC_* twins make the
// portal's single sign-on setting; none set is off; a wrong one is refused
// naming the flag.
func TestOIDCFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	issuer := []string{"--oidc-issuer", "https://id.example.com", "--oidc-client-id", "payd"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    *web.OIDC
		wantErr string
	}{
		{"off", nil, nil, nil, ""},
		{"flags", slices.Concat(issuer, []string{"--oidc-client-secret-file", secret, "--oidc-role-map", "admin=ops,finance=accounts", "--oidc-roles-claim", "roles"}), nil,
			&web.OIDC{Issuer: "https://id.example.com", ClientID: "payd", ClientSecret: "s3cret", RolesClaim: "roles",
				Roles: portal.RoleMap{"ops": merchant.Admin, "accounts": merchant.Finance}}, ""},
		{"environment twins", nil, map[string]string{"PAYD_OIDC_ISSUER": "http://127.0.0.1:5556", "PAYD_OIDC_CLIENT_ID": "payd",
			"PAYD_OIDC_CLIENT_SECRET_FILE": secret, "PAYD_OIDC_ROLES_CLAIM": "teams", "PAYD_OIDC_ROLE_MAP": "viewer=staff"},
			&web.OIDC{Issuer: "http://127.0.0.1:5556", ClientID: "payd", ClientSecret: "s3cret", RolesClaim: "teams", Roles: portal.RoleMap{"staff": merchant.Viewer}}, ""},
		{"a public client", issuer, nil, &web.OIDC{Issuer: "https://id.example.com", ClientID: "payd", RolesClaim: "groups", Roles: portal.RoleMap{}}, ""},
		{"a bad role map", slices.Concat(issuer, []string{"--oidc-role-map", "owner=ops"}), nil, nil,
			`--oidc-role-map: "owner=ops": the role must be admin, finance, developer or viewer`},
		{"a role map without pairs", slices.Concat(issuer, []string{"--oidc-role-map", "admin"}), nil, nil, `--oidc-role-map: "admin" is not ROLE=GROUP`},
		{"a group mapped twice", slices.Concat(issuer, []string{"--oidc-role-map", "admin=ops,viewer=ops"}), nil, nil, `--oidc-role-map: the group "ops" is mapped twice`},
		{"no client id", []string{"--oidc-issuer", "https://id.example.com"}, nil, nil, "--oidc-client-id: required with --oidc-issuer"},
		{"plain http elsewhere", []string{"--oidc-issuer", "http://id.example.com", "--oidc-client-id", "payd"}, nil, nil,
			`--oidc-issuer: "http://id.example.com" must be https (http only on a loopback address)`},
		{"not a URL", []string{"--oidc-issuer", "id.example.com", "--oidc-client-id", "payd"}, nil, nil,
			`--oidc-issuer: "id.example.com" is not an issuer URL, such as https://id.example.com`},
		{"a client id without an issuer", []string{"--oidc-client-id", "payd"}, nil, nil, "--oidc-client-id needs --oidc-issuer"},
		{"a missing secret file", slices.Concat(issuer, []string{"--oidc-client-secret-file", filepath.Join(dir, "none")}), nil, nil, "--oidc-client-secret-file: open "},
		{"an empty secret file", slices.Concat(issuer, []string{"--oidc-client-secret-file", empty}), nil, nil, "--oidc-client-secret-file: " + empty + " is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &syncBuffer{}, stderr: &syncBuffer{}, getenv: func(k string) string { return tt.env[k] }}
			f := newFlags(env, "serve")
			o := f.oidc()
			if err := f.parse(tt.args); err != nil {
				t.Fatal(err)
			}
			got, err := o.config()
			if gotErr := errorText(err); tt.wantErr == "" && gotErr != "" || !strings.HasPrefix(gotErr, tt.wantErr) || tt.wantErr != "" && gotErr == "" {
				t.Fatalf("config() error = %q, want %q", gotErr, tt.wantErr)
			}
			if err != nil && !isUsage(err) {
				t.Errorf("config() error %v is not a usage error", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("config() (-want +got):\n%s", diff)
			}
		})
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestServeRefusesBadRoleMap: a bad --oidc-role-map stops serve before it
// starts, exit 2 with the reason.
func TestServeRefusesBadRoleMap(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a server that starts anyway returns 0 here
	defer cancel()
	var stdout, stderr syncBuffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	code := run(ctx, env, []string{"serve", "--db", storetest.SQLiteDSN(t), "--addr", "127.0.0.1:0",
		"--oidc-issuer", "http://127.0.0.1:1", "--oidc-client-id", "payd", "--oidc-role-map", "admin=ops,boss=ops"})
	if want := `--oidc-role-map: "boss=ops": the role must be admin, finance, developer or viewer`; code != 2 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, stderr %q; want 2 with %q", code, stderr.String(), want)
	}
}
