package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/merchant"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

var (
	merchantIDPattern    = regexp.MustCompile(`^[0-9A-Z]{8}$`)
	accountNumberPattern = regexp.MustCompile(`^[0-9]{12}$`)
)

func TestMerchantCreateJSON(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD,USD,JPY")
		if !merchantIDPattern.MatchString(m.MerchantID) {
			t.Errorf("merchant_id = %q, want 8 upper-case base-36 characters", m.MerchantID)
		}
		var gotCurrencies []string
		numbers := map[string]bool{}
		for _, a := range m.Accounts {
			gotCurrencies = append(gotCurrencies, a.Currency)
			numbers[a.AccountNumber] = true
		}
		if want := []string{"AUD", "USD", "JPY"}; !slices.Equal(gotCurrencies, want) {
			t.Fatalf("account currencies = %v, want %v in the order given", gotCurrencies, want)
		}
		if len(numbers) != 3 {
			t.Errorf("account numbers %v are not distinct", numbers)
		}
		svc, db := services(t, dsn)
		for _, a := range m.Accounts {
			t.Run(a.Currency, func(t *testing.T) {
				if !accountNumberPattern.MatchString(a.AccountNumber) {
					t.Errorf("account_number = %q, want 12 digits", a.AccountNumber)
				}
				p, ok := authenticate(t, svc, a.AppID, a.SecretKey)
				if !ok {
					t.Fatalf("printed app %s does not authenticate", a.AppID)
				}
				got := [3]string{p.MerchantID, p.Currency, p.AccountNumber}
				if want := [3]string{m.MerchantID, a.Currency, a.AccountNumber}; got != want {
					t.Errorf("app authenticates as (merchant, currency, account) %v, want %v", got, want)
				}
				acc, err := merchant.AccountByCurrency(t.Context(), db.Read(), m.MerchantID, merchant.Payments, a.Currency)
				if err != nil {
					t.Fatal(err)
				}
				gotAcc := [3]any{acc.AccountNumber, acc.Approvals, acc.AccountType}
				if wantAcc := [3]any{a.AccountNumber, false, merchant.Aggregated}; gotAcc != wantAcc {
					t.Errorf("stored account (number, approvals, type) = %v, want %v", gotAcc, wantAcc)
				}
				if _, ok := authenticate(t, svc, a.AppID, a.SecretKey+"x"); ok {
					t.Errorf("app %s authenticates with a wrong secret", a.AppID)
				}
			})
		}
	})
}

func TestMerchantCreateApprovals(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD,USD", "--approvals")
		_, db := services(t, dsn)
		for _, currency := range []string{"AUD", "USD"} {
			t.Run(currency, func(t *testing.T) {
				if got := storedSettings(t, db, m.MerchantID, currency); !got.Approvals {
					t.Errorf("%s account approvals = false, want true", currency)
				}
			})
		}
	})
}

// TestMerchantCreateText checks the human-readable output: one line for the
// merchant and one per account, carrying credentials that work.
func TestMerchantCreateText(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		out := mustPayd(t, "merchant", "create", "--db", dsn, "--name", "Acme", "--country", "AU",
			"--timezone", "Australia/Sydney", "--currencies", "AUD,USD")
		if json.Valid([]byte(out)) {
			t.Fatalf("output without --json is JSON: %s", out)
		}
		head := regexp.MustCompile(`(?m)^merchant ([0-9A-Z]{8})$`).FindStringSubmatch(out)
		if head == nil {
			t.Fatalf("no merchant line in %q", out)
		}
		lines := regexp.MustCompile(`(?m)^\s+([A-Z]{3}) account ([0-9]{12}) app-id (\S+) secret-key (\S+)$`).FindAllStringSubmatch(out, -1)
		var currencies []string
		for _, l := range lines {
			currencies = append(currencies, l[1])
		}
		if want := []string{"AUD", "USD"}; !slices.Equal(currencies, want) {
			t.Fatalf("account lines for %v, want %v:\n%s", currencies, want, out)
		}
		svc, _ := services(t, dsn)
		for _, l := range lines {
			p, ok := authenticate(t, svc, l[3], l[4])
			got := [4]any{ok, p.MerchantID, p.Currency, p.AccountNumber}
			if want := [4]any{true, head[1], l[1], l[2]}; got != want {
				t.Errorf("printed %s app authenticates (ok, merchant, currency, account) = %v, want %v", l[1], got, want)
			}
		}
	})
}

func TestMerchantCreateRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                                  string
		merchantName, country, tz, currencies string
		wantCode                              int
		wantStderr                            string
	}{
		{"unknown currency", "Acme", "AU", "Australia/Sydney", "AUD,XYZ", 1, `payd: currencies "XYZ" is not a supported currency`},
		{"lower-case currency", "Acme", "AU", "Australia/Sydney", "aud", 1, `payd: currencies "aud" is not a supported currency`},
		{"duplicate currency", "Acme", "AU", "Australia/Sydney", "AUD,USD,AUD", 1, "payd: currencies AUD is listed twice"},
		{"no currency in the list", "Acme", "AU", "Australia/Sydney", ",", 1, "payd: currencies must name at least one currency"},
		{"three-letter country", "Acme", "aus", "Australia/Sydney", "AUD", 1, "payd: country must be an ISO 3166-1 alpha-2 code"},
		{"lower-case country", "Acme", "au", "Australia/Sydney", "AUD", 1, "payd: country must be an ISO 3166-1 alpha-2 code"},
		{"unknown timezone", "Acme", "AU", "Mars/Base", "AUD", 1, "payd: timezone must be an IANA time zone"},
		{"missing --name", "", "AU", "Australia/Sydney", "AUD", 2, "payd: missing --name"},
		{"blank --name", "   ", "AU", "Australia/Sydney", "AUD", 2, "payd: missing --name"},
		{"missing --currencies", "Acme", "AU", "Australia/Sydney", "", 2, "payd: missing --currencies"},
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := []string{"merchant", "create", "--db", dsn, "--json"}
				args = appendFlag(args, "name", tt.merchantName)
				args = appendFlag(args, "country", tt.country)
				args = appendFlag(args, "timezone", tt.tz)
				args = appendFlag(args, "currencies", tt.currencies)
				got := payd(t, args...)
				wantRefused(t, got, tt.wantCode, tt.wantStderr)
			})
		}
		_, db := services(t, dsn)
		if n := count(t, db.Read(), `SELECT count(*) FROM merchants`); n != 0 {
			t.Errorf("%d merchants were written by rejected commands", n)
		}
	})
}

// wantRefused checks a refused command: its exit code, a message on
// standard error that holds wantStderr, and nothing on standard output.
func wantRefused(t *testing.T, got result, wantCode int, wantStderr string) {
	t.Helper()
	if got.code != wantCode {
		t.Errorf("exit = %d, want %d", got.code, wantCode)
	}
	if !strings.Contains(got.stderr, wantStderr) {
		t.Errorf("stderr = %q, want it to contain %q", got.stderr, wantStderr)
	}
	if got.stdout != "" {
		t.Errorf("stdout = %q, want nothing", got.stdout)
	}
}

// appendFlag adds --name value unless value is empty (the flag is left out).
func appendFlag(args []string, name, value string) []string {
	if value == "" {
		return args
	}
	return append(args, "--"+name, value)
}

func TestAppCreate(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD,USD")
		var app struct {
			AppID      string   `json:"app_id"`
			SecretKey  string   `json:"secret_key"`
			Currency   string   `json:"currency"`
			Scopes     []string `json:"scopes"`
			ExpiresAt  *string  `json:"expires_at"`
			AllowedIPs []string `json:"allowed_ips"`
		}
		out := mustPayd(t, "app", "create", "--db", dsn, "--merchant", m.MerchantID, "--currency", "USD", "--json")
		// CONTRACT §23: --json adds scopes, expires_at and allowed_ips.
		decodeExact(t, out, &app, "app_id", "secret_key", "currency", "scopes", "expires_at", "allowed_ips")
		if app.Currency != "USD" {
			t.Errorf("currency = %q, want USD", app.Currency)
		}
		if app.AppID == m.Accounts[1].AppID || app.SecretKey == m.Accounts[1].SecretKey {
			t.Errorf("app create reissued the first key pair %+v", app)
		}
		svc, _ := services(t, dsn)
		p, ok := authenticate(t, svc, app.AppID, app.SecretKey)
		got := [4]any{ok, p.MerchantID, p.Currency, p.AccountNumber}
		if want := [4]any{true, m.MerchantID, "USD", m.Accounts[1].AccountNumber}; got != want {
			t.Errorf("new app authenticates (ok, merchant, currency, account) = %v, want %v", got, want)
		}
		if _, ok := authenticate(t, svc, m.Accounts[1].AppID, m.Accounts[1].SecretKey); !ok {
			t.Errorf("the merchant's first USD app stopped working")
		}
	})
}

func TestAppCreateRejects(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD")
		tests := []struct {
			name       string
			merchantID string
			currency   string
			wantCode   int
			wantStderr string
		}{
			{"unknown merchant", "NOSUCHID", "AUD", 1, "payd: merchant NOSUCHID has no AUD payments account"},
			{"currency the merchant lacks", m.MerchantID, "JPY", 1, "payd: merchant " + m.MerchantID + " has no JPY payments account"},
			{"unsupported currency", m.MerchantID, "XYZ", 1, "has no XYZ payments account"},
			{"missing --currency", m.MerchantID, "", 2, "payd: missing --currency"},
			{"missing --merchant", "", "AUD", 2, "payd: missing --merchant"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := []string{"app", "create", "--db", dsn, "--json"}
				args = appendFlag(args, "merchant", tt.merchantID)
				args = appendFlag(args, "currency", tt.currency)
				got := payd(t, args...)
				wantRefused(t, got, tt.wantCode, tt.wantStderr)
			})
		}
		_, db := services(t, dsn)
		if n := count(t, db.Read(), `SELECT count(*) FROM apps`); n != 1 {
			t.Errorf("%d apps after rejected commands, want the merchant's first one only", n)
		}
	})
}

// TestAppRevoke runs its steps in order against one database: each step's
// wantWorks says whether the first merchant's app still authenticates after it.
func TestAppRevoke(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		owner := createMerchant(t, dsn, "AUD")
		other := createMerchant(t, dsn, "AUD")
		app := owner.Accounts[0]
		svc, _ := services(t, dsn)
		p, _ := authenticate(t, svc, app.AppID, app.SecretKey)
		token, err := svc.IssueToken(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			name       string
			merchantID string
			appID      string
			wantCode   int
			wantStdout string
			wantStderr string
			wantWorks  bool
		}{
			{"another merchant's app", other.MerchantID, app.AppID, 1, "", "payd: merchant " + other.MerchantID + " has no active app " + app.AppID, true},
			{"unknown app", owner.MerchantID, "nosuchapp", 1, "", "has no active app nosuchapp", true},
			{"own app", owner.MerchantID, app.AppID, 0, "revoked " + app.AppID + "\n", "", false},
			{"revoked twice", owner.MerchantID, app.AppID, 1, "", "payd: merchant " + owner.MerchantID + " has no active app " + app.AppID, false},
			{"missing --app-id", owner.MerchantID, "", 2, "", "payd: missing --app-id", false},
		}
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				args := []string{"app", "revoke", "--db", dsn}
				args = appendFlag(args, "merchant", st.merchantID)
				args = appendFlag(args, "app-id", st.appID)
				got := payd(t, args...)
				if got.code != st.wantCode {
					t.Errorf("exit = %d, want %d", got.code, st.wantCode)
				}
				if got.stdout != st.wantStdout {
					t.Errorf("stdout = %q, want %q", got.stdout, st.wantStdout)
				}
				if !strings.Contains(got.stderr, st.wantStderr) {
					t.Errorf("stderr = %q, want it to contain %q", got.stderr, st.wantStderr)
				}
				if _, works := authenticate(t, svc, app.AppID, app.SecretKey); works != st.wantWorks {
					t.Errorf("app authenticates = %v, want %v", works, st.wantWorks)
				}
				_, err := svc.AuthenticateToken(t.Context(), token)
				if tokenWorks := err == nil; tokenWorks != st.wantWorks {
					t.Errorf("its access token authenticates = %v (%v), want %v", tokenWorks, err, st.wantWorks)
				}
			})
		}
		if _, ok := authenticate(t, svc, other.Accounts[0].AppID, other.Accounts[0].SecretKey); !ok {
			t.Errorf("the other merchant's app stopped working")
		}
	})
}

// userOutput is the --json output of `user create`.
type userOutput struct {
	UserID string `json:"user_id"`
	Email  string `json:"email"`
	Role   string `json:"role"`
}

func TestUserCreate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		email, role  string
		stdin        string
		wantEmail    string
		wantPassword string
	}{
		{"finance, password with newline", "ops@example.com", "finance", "correct horse battery staple\n", "ops@example.com", "correct horse battery staple"},
		{"admin, CRLF", "boss@example.com", "admin", "s3cret pass-phrase\r\n", "boss@example.com", "s3cret pass-phrase"},
		{"viewer, shortest password", "view@example.com", "viewer", "0123456789ab", "view@example.com", "0123456789ab"},
		{"developer, email in mixed case", "Dev@Example.COM", "developer", "0123456789abcdef\n", "dev@example.com", "0123456789abcdef"},
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD")
		_, db := services(t, dsn)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := runPayd(t, invocation{stdin: tt.stdin, args: []string{"user", "create", "--db", dsn, "--merchant", m.MerchantID,
					"--email", tt.email, "--role", tt.role, "--password-stdin", "--json"}})
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				var got userOutput
				decodeExact(t, r.stdout, &got, "user_id", "email", "role")
				if got.UserID == "" || got.Email != tt.wantEmail || got.Role != tt.role {
					t.Errorf("output = %+v, want a user id, email %q, role %q", got, tt.wantEmail, tt.role)
				}
				var merchantID, email, role, hash string
				err := db.Read().QueryRowContext(t.Context(), `SELECT merchant_id, email, role, password_hash FROM users WHERE id = $1`, got.UserID).
					Scan(&merchantID, &email, &role, &hash)
				if err != nil {
					t.Fatalf("user %s: %v", got.UserID, err)
				}
				if row := [3]string{merchantID, email, role}; row != [3]string{m.MerchantID, tt.wantEmail, tt.role} {
					t.Errorf("stored (merchant, email, role) = %v", row)
				}
				if !strings.HasPrefix(hash, "$argon2id$") {
					t.Errorf("password_hash = %q, want an argon2id PHC string", hash)
				}
				if !merchant.CheckPassword(hash, tt.wantPassword) {
					t.Errorf("CheckPassword(hash, %q) = false", tt.wantPassword)
				}
				if merchant.CheckPassword(hash, tt.wantPassword+"!") {
					t.Errorf("CheckPassword accepts a wrong password")
				}
			})
		}
	})
}

func TestUserCreateRejects(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD")
		first := runPayd(t, invocation{stdin: "a long enough password\n", args: []string{"user", "create", "--db", dsn,
			"--merchant", m.MerchantID, "--email", "taken@example.com", "--role", "admin", "--password-stdin"}})
		if first.code != 0 {
			t.Fatalf("first user: exit %d: %s", first.code, first.stderr)
		}
		tests := []struct {
			name       string
			merchantID string
			email      string
			role       string
			flag       string // --password-stdin, or another flag in its place
			stdin      string
			wantCode   int
			wantStderr string
		}{
			{"without --password-stdin", m.MerchantID, "a@example.com", "finance", "--json", "a long enough password", 2, "payd: --password-stdin is required"},
			{"bad role", m.MerchantID, "a@example.com", "owner", "--password-stdin", "a long enough password", 1, "payd: role must be admin, finance, developer or viewer"},
			{"bad email", m.MerchantID, "not-an-email", "finance", "--password-stdin", "a long enough password", 1, "payd: email must be an email address"},
			{"email with a display name", m.MerchantID, "Ann <a@example.com>", "finance", "--password-stdin", "a long enough password", 1, "payd: email must be an email address"},
			{"eleven-character password", m.MerchantID, "a@example.com", "finance", "--password-stdin", "12345678901\n", 1, "payd: password must be 12 to 256 characters"},
			{"empty password", m.MerchantID, "a@example.com", "finance", "--password-stdin", "", 1, "payd: password must be 12 to 256 characters"},
			{"duplicate email", m.MerchantID, "taken@example.com", "finance", "--password-stdin", "a long enough password", 1, "payd: a user with email taken@example.com already exists"},
			{"duplicate email in another case", m.MerchantID, "Taken@Example.com", "finance", "--password-stdin", "a long enough password", 1, "already exists"},
			{"unknown merchant", "NOSUCHID", "a@example.com", "finance", "--password-stdin", "a long enough password", 1, "payd: no merchant NOSUCHID"},
			{"missing --role", m.MerchantID, "a@example.com", "", "--password-stdin", "a long enough password", 2, "payd: missing --role"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				args := []string{"user", "create", "--db", dsn, tt.flag}
				args = appendFlag(args, "merchant", tt.merchantID)
				args = appendFlag(args, "email", tt.email)
				args = appendFlag(args, "role", tt.role)
				got := runPayd(t, invocation{args: args, stdin: tt.stdin})
				wantRefused(t, got, tt.wantCode, tt.wantStderr)
			})
		}
		_, db := services(t, dsn)
		if n := count(t, db.Read(), `SELECT count(*) FROM users`); n != 1 {
			t.Errorf("%d users after rejected commands, want 1", n)
		}
	})
}

// accountSettings are the settings `account update` changes.
type accountSettings struct {
	Approvals   bool                 `json:"approvals"`
	Methods     []string             `json:"methods"`
	AccountType merchant.AccountType `json:"account_type"`
}

// storedSettings reads the merchant's payments account in currency back from the database.
func storedSettings(t *testing.T, db *store.DB, merchantID, currency string) accountSettings {
	t.Helper()
	acc, err := merchant.AccountByCurrency(t.Context(), db.Read(), merchantID, merchant.Payments, currency)
	if err != nil {
		t.Fatalf("%s account: %v", currency, err)
	}
	return accountSettings{Approvals: acc.Approvals, Methods: acc.Methods, AccountType: acc.AccountType}
}

// count runs a SELECT count(*) query.
func count(t *testing.T, q store.Querier, query string, args ...any) int {
	t.Helper()
	var n int
	if err := q.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestAccountUpdate runs its steps in order on one merchant; after each, the
// AUD account holds want and the USD account is untouched.
func TestAccountUpdate(t *testing.T) {
	t.Parallel()
	steps := []struct {
		name string
		args []string
		want accountSettings
	}{
		{"approvals, methods and type", []string{"--approvals", "on", "--methods", "a_b_c,d_e_f", "--account-type", "dedicated"},
			accountSettings{true, []string{"a_b_c", "d_e_f"}, merchant.Dedicated}},
		{"nothing to change", nil, accountSettings{true, []string{"a_b_c", "d_e_f"}, merchant.Dedicated}},
		{"methods back to the defaults", []string{"--methods", "default"}, accountSettings{true, nil, merchant.Dedicated}},
		{"approvals off", []string{"--approvals", "off"}, accountSettings{false, nil, merchant.Dedicated}},
		{"one method, spaces trimmed", []string{"--methods", " payid_transfer , "}, accountSettings{false, []string{"payid_transfer"}, merchant.Dedicated}},
		{"aggregated again", []string{"--account-type", "aggregated"}, accountSettings{false, []string{"payid_transfer"}, merchant.Aggregated}},
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD,USD")
		_, db := services(t, dsn)
		for _, st := range steps {
			t.Run(st.name, func(t *testing.T) {
				args := slices.Concat([]string{"account", "update", "--db", dsn, "--merchant", m.MerchantID, "--currency", "AUD", "--json"}, st.args)
				var printed accountSettings
				if err := json.Unmarshal([]byte(mustPayd(t, args...)), &printed); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(printed, st.want) {
					t.Errorf("printed settings = %+v, want %+v", printed, st.want)
				}
				if got := storedSettings(t, db, m.MerchantID, "AUD"); !reflect.DeepEqual(got, st.want) {
					t.Errorf("stored AUD settings = %+v, want %+v", got, st.want)
				}
				if got, want := storedSettings(t, db, m.MerchantID, "USD"), (accountSettings{false, nil, merchant.Aggregated}); !reflect.DeepEqual(got, want) {
					t.Errorf("stored USD settings = %+v, want %+v (untouched)", got, want)
				}
			})
		}
	})
}

func TestAccountUpdateRejects(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD")
		tests := []struct {
			name       string
			args       []string
			wantCode   int
			wantStderr string
		}{
			{"approvals neither on nor off", []string{"--merchant", m.MerchantID, "--currency", "AUD", "--approvals", "yes"}, 2, "payd: --approvals must be on or off"},
			{"unknown account type", []string{"--merchant", m.MerchantID, "--currency", "AUD", "--account-type", "shared"}, 1, "payd: account_type must be aggregated or dedicated"},
			{"bad type with a good change", []string{"--merchant", m.MerchantID, "--currency", "AUD", "--approvals", "on", "--account-type", "Dedicated"}, 1, "payd: account_type must be aggregated or dedicated"},
			{"bad method code", []string{"--merchant", m.MerchantID, "--currency", "AUD", "--methods", "payid,Bad-Code"}, 1, `payd: methods "Bad-Code" is not a method code`},
			{"currency the merchant lacks", []string{"--merchant", m.MerchantID, "--currency", "JPY", "--approvals", "on"}, 1, "payd: no JPY payments account"},
			{"unknown merchant", []string{"--merchant", "NOSUCHID", "--currency", "AUD", "--approvals", "on"}, 1, "payd: no AUD payments account"},
			{"missing --currency", []string{"--merchant", m.MerchantID, "--approvals", "on"}, 2, "payd: missing --currency"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := payd(t, slices.Concat([]string{"account", "update", "--db", dsn, "--json"}, tt.args)...)
				wantRefused(t, got, tt.wantCode, tt.wantStderr)
			})
		}
		_, db := services(t, dsn)
		if got, want := storedSettings(t, db, m.MerchantID, "AUD"), (accountSettings{false, nil, merchant.Aggregated}); !reflect.DeepEqual(got, want) {
			t.Errorf("AUD settings after rejected updates = %+v, want %+v (unchanged)", got, want)
		}
	})
}

// webhookSecret runs `merchant webhook-secret --json` and returns the secret.
func webhookSecret(t *testing.T, dsn, merchantID string, extra ...string) string {
	t.Helper()
	var out struct {
		SigningSecret string `json:"signing_secret"`
	}
	args := slices.Concat([]string{"merchant", "webhook-secret", "--db", dsn, "--merchant", merchantID, "--json"}, extra)
	decodeExact(t, mustPayd(t, args...), &out, "signing_secret")
	return out.SigningSecret
}

// checkSigningSecret checks the Standard Webhooks form: "whsec_" and the
// base64 of 32 bytes.
func checkSigningSecret(t *testing.T, secret string) {
	t.Helper()
	raw, ok := strings.CutPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.DecodeString(raw)
	if !ok || err != nil || len(key) != 32 {
		t.Errorf("signing secret %q is not whsec_ and the base64 of 32 bytes (prefix %v, %d bytes, %v)", secret, ok, len(key), err)
	}
}

func TestWebhookSecret(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "AUD")
		other := createMerchant(t, dsn, "AUD")

		first := webhookSecret(t, dsn, m.MerchantID)
		checkSigningSecret(t, first)
		if again := webhookSecret(t, dsn, m.MerchantID); again != first {
			t.Errorf("second call = %q, want the same secret %q", again, first)
		}
		if theirs := webhookSecret(t, dsn, other.MerchantID); theirs == first {
			t.Errorf("two merchants share the signing secret %q", first)
		}

		rotated := webhookSecret(t, dsn, m.MerchantID, "--rotate")
		checkSigningSecret(t, rotated)
		if rotated == first {
			t.Errorf("--rotate returned the old secret %q", first)
		}
		if after := webhookSecret(t, dsn, m.MerchantID); after != rotated {
			t.Errorf("after rotation = %q, want the rotated secret %q", after, rotated)
		}
		if text := mustPayd(t, "merchant", "webhook-secret", "--db", dsn, "--merchant", m.MerchantID); text != rotated+"\n" {
			t.Errorf("text output = %q, want %q", text, rotated+"\n")
		}
	})
}

func TestWebhookSecretRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"unknown merchant", []string{"--merchant", "NOSUCHID"}, 1, "payd: no merchant NOSUCHID"},
		{"unknown merchant, --rotate", []string{"--merchant", "NOSUCHID", "--rotate"}, 1, "payd: no merchant NOSUCHID"},
		{"missing --merchant", nil, 2, "payd: missing --merchant"},
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		createMerchant(t, dsn, "AUD")
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got := payd(t, slices.Concat([]string{"merchant", "webhook-secret", "--db", dsn, "--json"}, tt.args)...)
				wantRefused(t, got, tt.wantCode, tt.wantStderr)
			})
		}
	})
}

// verifyOutput is the --json output of `ledger verify`.
type verifyOutput struct {
	OK       bool `json:"ok"`
	Problems []struct {
		Check  string `json:"check"`
		Detail string `json:"detail"`
	} `json:"problems"`
}

// Ledger states to verify, each set up on a fresh database.
var (
	freshDatabase = func(t *testing.T, dsn string) {}
	withMerchant  = func(t *testing.T, dsn string) { createMerchant(t, dsn, "AUD,USD") }
	tampered      = func(t *testing.T, dsn string) {
		createMerchant(t, dsn, "AUD,USD")
		_, db := services(t, dsn)
		err := db.Exec(t.Context(), func(tx *store.Tx) error {
			_, err := tx.ExecContext(t.Context(), `UPDATE ledger_buckets SET balance = balance + 1 WHERE id = (SELECT min(id) FROM ledger_buckets)`)
			return err
		})
		if err != nil {
			t.Fatalf("tamper: %v", err)
		}
	}
)

func TestLedgerVerifyJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		setup      func(t *testing.T, dsn string)
		wantCode   int
		wantOK     bool
		wantChecks []string
	}{
		{"fresh database", freshDatabase, 0, true, []string{}},
		{"merchant with accounts", withMerchant, 0, true, []string{}},
		{"bucket balance tampered with", tampered, 1, false, []string{"bucket_sum"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storetest.EachDSN(t, func(t *testing.T, dsn string) {
				tt.setup(t, dsn)
				r := payd(t, "ledger", "verify", "--db", dsn, "--json")
				if r.code != tt.wantCode {
					t.Errorf("exit = %d, want %d (stderr %q)", r.code, tt.wantCode, r.stderr)
				}
				var got verifyOutput
				decodeExact(t, r.stdout, &got, "ok", "problems")
				checks := []string{}
				for _, p := range got.Problems {
					checks = append(checks, p.Check)
				}
				if got.OK != tt.wantOK || !slices.Equal(checks, tt.wantChecks) {
					t.Errorf("ok = %v with problems %+v, want ok = %v with checks %v", got.OK, got.Problems, tt.wantOK, tt.wantChecks)
				}
				if got.Problems == nil {
					t.Errorf("problems is null, want a list:\n%s", r.stdout)
				}
			})
		})
	}
}

func TestLedgerVerifyText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		setup      func(t *testing.T, dsn string)
		wantCode   int
		wantStdout *regexp.Regexp
	}{
		// A ledger with nothing in it says so, rather than that it holds.
		{"fresh database", freshDatabase, 0, regexp.MustCompile(`^ledger verified: nothing to check, no journal entries yet\n$`)},
		{"merchant with accounts", withMerchant, 0, regexp.MustCompile(`^ledger verified: nothing to check, no journal entries yet\n$`)},
		{"bucket balance tampered with", tampered, 1, regexp.MustCompile(`^bucket_sum: bucket \d+ \(\w+\) holds 1 but its postings sum to 0\n$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			storetest.EachDSN(t, func(t *testing.T, dsn string) {
				tt.setup(t, dsn)
				r := payd(t, "ledger", "verify", "--db", dsn)
				if r.code != tt.wantCode {
					t.Errorf("exit = %d, want %d (stderr %q)", r.code, tt.wantCode, r.stderr)
				}
				if !tt.wantStdout.MatchString(r.stdout) {
					t.Errorf("stdout = %q, want it to match %s", r.stdout, tt.wantStdout)
				}
			})
		})
	}
}

// TestTreasuryReview: the operator approves a USD treasury account in
// review; a second decision is refused.
func TestTreasuryReview(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "USD")
		_, db := services(t, dsn)
		var id string
		_, err := store.Do(t.Context(), db, func(tx *store.Tx) (bool, error) {
			acc, err := merchant.OpenTreasury(t.Context(), tx, m.MerchantID, "USD", merchant.TreasuryInReview, time.Now())
			id = acc.PublicID
			return true, err
		})
		if err != nil {
			t.Fatal(err)
		}
		var printed struct{ ID, Status string }
		out := mustPayd(t, "treasury", "review", "--db", dsn, "--merchant", m.MerchantID, "--account", id, "--approve", "--json")
		if err := json.Unmarshal([]byte(out), &printed); err != nil {
			t.Fatal(err)
		}
		if printed.ID != id || printed.Status != "active" {
			t.Errorf("printed %+v, want %s active", printed, id)
		}
		r := payd(t, "treasury", "review", "--db", dsn, "--merchant", m.MerchantID, "--account", id, "--reject")
		if r.code != 1 || !strings.Contains(r.stderr, "not in review") {
			t.Errorf("second review: exit %d, %q", r.code, r.stderr)
		}
		if r := payd(t, "treasury", "review", "--db", dsn, "--merchant", m.MerchantID, "--account", id); r.code != 2 {
			t.Errorf("neither --approve nor --reject: exit %d, want 2", r.code)
		}
	})
}

// TestMerchantUpdateEmbedOrigins: --embed-origins stores the origins that
// may frame the merchant's Payment Gateway 3 pages, normalised and without
// repeats, and an empty value clears them; bad origins change nothing.
func TestMerchantUpdateEmbedOrigins(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		m := createMerchant(t, dsn, "NZD")
		_, db := services(t, dsn)
		stored := func() []string {
			t.Helper()
			got, err := merchant.EmbedOrigins(context.Background(), db.Read(), m.MerchantID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		var out struct {
			MerchantID   string   `json:"merchant_id"`
			EmbedOrigins []string `json:"embed_origins"`
		}
		decodeExact(t, mustPayd(t, "merchant", "update", "--db", dsn, "--merchant", m.MerchantID, "--json",
			"--embed-origins", "https://A.example, https://b.example:8443/,https://a.example"), &out, "embed_origins", "merchant_id")
		want := []string{"https://a.example", "https://b.example:8443"}
		if out.MerchantID != m.MerchantID || !slices.Equal(out.EmbedOrigins, want) || !slices.Equal(stored(), want) {
			t.Errorf("printed %+v, stored %v; want %v", out, stored(), want)
		}
		for _, tt := range []struct {
			name       string
			args       []string
			wantCode   int
			wantStderr string
		}{
			{"a path", []string{"--merchant", m.MerchantID, "--embed-origins", "https://shop.example/checkout"}, 1, `"https://shop.example/checkout" is not an origin`},
			{"not http", []string{"--merchant", m.MerchantID, "--embed-origins", "javascript:alert(1)"}, 1, "is not an origin"},
			{"unknown merchant", []string{"--merchant", "NOSUCHID", "--embed-origins", "https://a.example"}, 1, "no merchant NOSUCHID"},
			{"nothing to change", []string{"--merchant", m.MerchantID}, 2, "nothing to change"},
			{"missing --merchant", []string{"--embed-origins", "https://a.example"}, 2, "missing --merchant"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				got := payd(t, slices.Concat([]string{"merchant", "update", "--db", dsn, "--json"}, tt.args)...)
				if got.code != tt.wantCode || !strings.Contains(got.stderr, tt.wantStderr) || got.stdout != "" {
					t.Errorf("exit %d, stderr %q, stdout %q; want %d and %q", got.code, got.stderr, got.stdout, tt.wantCode, tt.wantStderr)
				}
			})
		}
		if !slices.Equal(stored(), want) {
			t.Errorf("after refused updates: %v", stored())
		}
		mustPayd(t, "merchant", "update", "--db", dsn, "--merchant", m.MerchantID, "--embed-origins", "")
		if got := stored(); len(got) != 0 {
			t.Errorf("after clearing: %v", got)
		}
	})
}

// TestReportRotateKey: each rotation adds a signing key and retires the
// ones before it (which keep verifying the links they signed until those
// expire); the database remembers them across processes.
func TestReportRotateKey(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		type rotation struct {
			KeyID     string   `json:"key_id"`
			CreatedAt string   `json:"created_at"`
			Retired   []string `json:"retired"`
		}
		var first, second rotation
		decodeExact(t, mustPayd(t, "report", "rotate-key", "--db", dsn, "--json"), &first, "key_id", "created_at", "retired")
		decodeExact(t, mustPayd(t, "report", "rotate-key", "--db", dsn, "--json"), &second, "key_id", "created_at", "retired")
		if !merchantIDPattern.MatchString(first.KeyID) || second.KeyID == first.KeyID || !slices.Equal(second.Retired, []string{first.KeyID}) {
			t.Errorf("rotations %+v then %+v: want a new key each time, the second retiring the first", first, second)
		}
		_, db := services(t, dsn)
		var signing []string
		rows, err := db.Read().Query(`SELECT id FROM report_signing_keys WHERE retired_at IS NULL`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			rows.Scan(&id)
			signing = append(signing, id)
		}
		if !slices.Equal(signing, []string{second.KeyID}) {
			t.Errorf("signing keys %v, want only %s", signing, second.KeyID)
		}
		if out := mustPayd(t, "report", "rotate-key", "--db", dsn); !strings.Contains(out, "links signed by "+second.KeyID+" stay valid") {
			t.Errorf("text output %q", out)
		}
	})
}

// TestCopy: payd copy moves a database into an empty one of every test
// dialect (the merchant's app authenticates there), says what it copied,
// and refuses a missing --to, the source as its own target, and a target
// that holds rows, with a usage error or a message and nothing changed.
func TestCopy(t *testing.T) {
	t.Parallel()
	src := storetest.SQLiteDSN(t)
	m := createMerchant(t, src, "AUD")
	storetest.EachDSN(t, func(t *testing.T, dst string) {
		out := mustPayd(t, "copy", "--db", src, "--to", dst)
		if !regexp.MustCompile(`(?m)^merchants +1 rows$`).MatchString(out) || !regexp.MustCompile(`(?m)^copied [1-9][0-9]* rows$`).MatchString(out) {
			t.Errorf("payd copy printed %q, want each table's rows and the total", out)
		}
		svc, _ := services(t, dst)
		if p, ok := authenticate(t, svc, m.Accounts[0].AppID, m.Accounts[0].SecretKey); !ok || p.MerchantID != m.MerchantID {
			t.Errorf("the copied app authenticates as %+v (%v), want merchant %s", p, ok, m.MerchantID)
		}
		if r := payd(t, "copy", "--db", src, "--to", dst); r.code != 1 || !strings.Contains(r.stderr, "holds rows") {
			t.Errorf("a second copy into the same database: exit %d, stderr %q; want 1 and a refusal", r.code, r.stderr)
		}
	})
	for _, args := range [][]string{{"copy", "--db", src}, {"copy", "--db", src, "--to", src}} {
		if r := payd(t, args...); r.code != 2 {
			t.Errorf("payd %s: exit %d, stderr %q; want 2", strings.Join(args, " "), r.code, r.stderr)
		}
	}
}
