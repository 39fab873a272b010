package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"payd/internal/store/storetest"
)

// abaRail is payd rail set of an aba rail named name whose outbox and inbox
// are under dir, with extra flags after.
func abaRail(dsn, dir, name string, extra ...string) []string {
	return slices.Concat([]string{"rail", "set", "--db", dsn, "--name", name, "--format", "aba", "--currency", "AUD",
		"--methods", "au_bank_aud,settlements", "--debtor-name", "PAYD OPERATIONS", "--debtor-account", "123456789", "--debtor-bsb", "062-000",
		"--originator-id", "301500", "--bank-abbrev", "CBA", "--cutoffs", "09:30,15:00", "--timezone", "Australia/Sydney",
		"--outbox", "dir:" + filepath.Join(dir, name, "out"), "--inbox", "dir:" + filepath.Join(dir, name, "in")}, extra)
}

// withFlag is args with flag's value replaced (or added).
func withFlag(args []string, flag, value string) []string {
	out := slices.Clone(args)
	if i := slices.Index(out, flag); i >= 0 {
		out[i+1] = value
		return out
	}
	return append(out, flag, value)
}

var listedRailMembers = []string{"name", "format", "currency", "methods", "debtor_name", "debtor_account", "originator_id", "cutoffs",
	"timezone", "outbox", "inbox", "waiting", "next_cutoff_at"}

// TestRailCommands: payd rail set prints the rail as rail list shows it
// (CONTRACT §25's members, exactly); set again it changes; refusals change
// nothing; unset, it is no longer listed; bankfile cut with nothing waiting
// makes no file; and the audit log holds every command that changed or was
// refused a change, with its actor and arguments but never the database.
func TestRailCommands(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		dir := t.TempDir()
		var rail map[string]any
		decodeExact(t, mustPayd(t, abaRail(dsn, dir, "au", "--json", "--actor", "alice")...), &rail, listedRailMembers...)
		if rail["name"] != "au" || rail["format"] != "aba" || rail["waiting"] != 0.0 || !slices.Equal(toStrings(rail["methods"]), []string{"au_bank_aud", "settlements"}) ||
			!slices.Equal(toStrings(rail["cutoffs"]), []string{"09:30", "15:00"}) {
			t.Errorf("rail set printed %v", rail)
		}
		mustPayd(t, withFlag(abaRail(dsn, dir, "au", "--actor", "alice"), "--cutoffs", "16:00")...)
		var list struct {
			Records []map[string]any `json:"records"`
		}
		decodeExact(t, mustPayd(t, "rail", "list", "--db", dsn, "--json"), &list, "records")
		if len(list.Records) != 1 || !slices.Equal(toStrings(list.Records[0]["cutoffs"]), []string{"16:00"}) || !slices.Equal(sortedKeys(list.Records[0]), sorted(listedRailMembers)) {
			t.Errorf("rail list = %v", list.Records)
		}
		pain := slices.Concat(withFlag(withFlag(withFlag(abaRail(dsn, dir, "npp"), "--format", "pain001"), "--methods", "au_payid_npp_aud,settlements"), "--actor", "bob"))
		wantRefused(t, payd(t, pain...), 1, "payd: rail au serves AUD settlements already")
		wantRefused(t, payd(t, withFlag(abaRail(dsn, dir, "au"), "--methods", "au_bank_aud,au_payid_npp_aud")...), 1, "payd: --methods au_payid_npp_aud cannot be served by an aba rail")
		wantRefused(t, payd(t, withFlag(withFlag(pain, "--methods", "au_payid_npp_aud"), "--inbox", "dir:"+filepath.Join(dir, "au", "in"))...), 1,
			"payd: rail au reads the inbox dir:"+filepath.Join(dir, "au", "in")+" already")
		wantRefused(t, payd(t, "rail", "unset", "--db", dsn, "--name", "nosuch"), 1, "payd: no rail nosuch")
		decodeExact(t, mustPayd(t, "rail", "list", "--db", dsn, "--json"), &list, "records")
		if len(list.Records) != 1 {
			t.Errorf("refusals changed the rails: %v", list.Records)
		}

		var cut map[string]any
		decodeExact(t, mustPayd(t, "bankfile", "cut", "--db", dsn, "--rail", "au", "--json"), &cut, "file")
		if cut["file"] != nil {
			t.Errorf("a cut-off with nothing waiting made %v", cut["file"])
		}
		wantRefused(t, payd(t, "bankfile", "cut", "--db", dsn, "--rail", "nosuch"), 1, "payd: no rail nosuch")
		wantRefused(t, payd(t, "bankfile", "show", "payd-au-20260101-001.aba", "--db", dsn), 1, "payd: no bank file payd-au-20260101-001.aba")
		wantRefused(t, payd(t, "bankfile", "get", "--db", dsn, "payd-au-20260101-001.aba"), 1, "payd: no bank file payd-au-20260101-001.aba")
		var files map[string]any
		decodeExact(t, mustPayd(t, "bankfile", "list", "--db", dsn, "--json"), &files, "records")
		if len(files["records"].([]any)) != 0 {
			t.Errorf("bank files %v, want none", files)
		}

		var unset map[string]any
		decodeExact(t, mustPayd(t, "rail", "unset", "--db", dsn, "--name", "au", "--actor", "alice", "--json"), &unset, "name", "unset", "waiting")
		decodeExact(t, mustPayd(t, "rail", "list", "--db", dsn, "--json"), &list, "records")
		if len(list.Records) != 0 {
			t.Errorf("rails listed after unset: %v", list.Records)
		}
		wantRefused(t, payd(t, "rail", "unset", "--db", dsn, "--name", "au"), 1, "payd: rail au is unset already")
		mustPayd(t, pain...) // settlements are free again

		var audit struct {
			Records []map[string]any `json:"records"`
		}
		decodeExact(t, mustPayd(t, "audit", "list", "--db", dsn, "--json"), &audit, "records")
		var got []string
		for _, e := range audit.Records {
			if want := []string{"actor", "args", "at", "command", "id", "outcome"}; !slices.Equal(sortedKeys(e), want) {
				t.Errorf("audit entry members %v, want %v", sortedKeys(e), want)
			}
			args := toStrings(e["args"])
			if slices.Contains(args, "--db") || slices.Contains(args, dsn) {
				t.Errorf("audit entry keeps the database: %v", args)
			}
			outcome, _ := e["outcome"].(string)
			if i := strings.Index(outcome, ":"); i > 0 && strings.HasPrefix(outcome, "refused") {
				outcome = outcome[:i]
			}
			got = append(got, e["actor"].(string)+" "+e["command"].(string)+": "+outcome)
		}
		user, _ := actorOf("")
		want := []string{
			"bob rail set: rail npp set",
			user + " rail unset: refused",
			"alice rail unset: rail au unset, 0 transfers waiting for its next cut-off",
			user + " bankfile cut: refused",
			user + " bankfile cut: no file: nothing was waiting",
			user + " rail unset: refused",
			"bob rail set: refused",
			user + " rail set: refused",
			"bob rail set: refused",
			"alice rail set: rail au set",
			"alice rail set: rail au set",
		}
		if !slices.Equal(got, want) {
			t.Errorf("audit log, newest first:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

// TestRailRefusalsAreStable: each refusal of payd rail set and payd
// bankfile is the same exit code and message on every run.
func TestRailRefusalsAreStable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "payd.db")
	mustPayd(t, "migrate", "--db", dsn)
	mustPayd(t, abaRail(dsn, dir, "au")...)
	inbox := "dir:" + filepath.Join(dir, "au", "in")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"a clash of currency and method", withFlag(abaRail(dsn, dir, "au2"), "--methods", "settlements"), 1,
			"payd: rail au serves AUD settlements already: each currency and method has at most one rail (unset it, or leave settlements out)\n"},
		{"PayID on an aba rail", withFlag(abaRail(dsn, dir, "au"), "--methods", "au_payid_npp_aud"), 1,
			"payd: --methods au_payid_npp_aud cannot be served by an aba rail: an ABA file pays accounts, not PayIDs (use a pain001 rail)\n"},
		{"a shared inbox", withFlag(withFlag(abaRail(dsn, dir, "au2"), "--methods", "transfers"), "--inbox", inbox), 1,
			"payd: rail au reads the inbox " + inbox + " already: no two rails share an inbox\n"},
		{"cut-offs that are no times", withFlag(abaRail(dsn, dir, "au"), "--cutoffs", "9:30"), 1,
			"payd: --cutoffs \"9:30\" is not a time of day such as 09:30\n"},
		{"several settings wrong", withFlag(withFlag(abaRail(dsn, dir, "au"), "--timezone", "Mars/Base"), "--originator-id", "12"), 1,
			"payd: invalid input:\n  --originator-id: must be the APCA user id of 6 digits on an aba rail\n  --timezone: must be an IANA time zone such as Australia/Sydney\n"},
		{"an sftp outbox without keys", withFlag(abaRail(dsn, dir, "au"), "--outbox", "sftp://payd@bank.example:22/outbox"), 1,
			"payd: --sftp-key and --sftp-known-hosts are required for an sftp:// outbox or inbox: payd authenticates by key and pins the host's key, never a password or an unchecked host\n"},
		{"a file that is not there", []string{"bankfile", "show", "--db", dsn, "payd-au-20260101-009.aba"}, 1,
			"payd: no bank file payd-au-20260101-009.aba\n"},
		{"no file named", []string{"bankfile", "get", "--db", dsn}, 2,
			"payd: give the file's name: payd bankfile get NAME\n"},
		{"rail set without its flags", []string{"rail", "set", "--db", dsn, "--name", "x"}, 2,
			"payd: missing --currency, --cutoffs, --debtor-account, --debtor-name, --format, --inbox, --methods, --outbox, --timezone\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[result]bool{}
			for range 8 {
				seen[payd(t, tt.args...)] = true
			}
			want := map[result]bool{{code: tt.wantCode, stderr: tt.wantStderr}: true}
			if !maps.Equal(seen, want) {
				t.Errorf("results over 8 runs = %+v, want only exit %d with stderr %q", slices.Collect(maps.Keys(seen)), tt.wantCode, tt.wantStderr)
			}
		})
	}
}

// TestBankfileUsageTouchesNoDatabase: a bank-file command refused for its
// flags opens no database.
func TestBankfileUsageTouchesNoDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"rail set without its flags", []string{"rail", "set"}, "payd: missing --currency, --cutoffs"},
		{"rail unset without --name", []string{"rail", "unset"}, "payd: missing --name"},
		{"bankfile cut without --rail", []string{"bankfile", "cut"}, "payd: missing --rail"},
		{"bankfile show without a name", []string{"bankfile", "show"}, "payd: give the file's name"},
		{"audit list with an argument", []string{"audit", "list", "now"}, `payd: unexpected argument "now"`},
		{"an actor too long", []string{"rail", "unset", "--name", "au", "--actor", strings.Repeat("a", 101)}, "payd: --actor: must be at most 100 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "payd.db")
			got := payd(t, append(tt.args, "--db", "sqlite:"+file)...)
			if got.code != 2 || !strings.Contains(got.stderr, tt.wantStderr) || got.stdout != "" {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2, %q and nothing", got.code, got.stderr, got.stdout, tt.wantStderr)
			}
			if _, err := os.Stat(file); !os.IsNotExist(err) {
				t.Errorf("the database file was touched (%v)", err)
			}
		})
	}
}
