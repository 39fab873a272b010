package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"payd/internal/feed/feedtest"
	"payd/internal/store/storetest"
)

// feedSet is payd feed set of an AUD feed named name whose inbox is under
// dir, with extra flags after.
func feedSet(dsn, dir, name string, extra ...string) []string {
	return slices.Concat([]string{"feed", "set", "--db", dsn, "--name", name, "--currency", "AUD", "--account", "1234-5678",
		"--bsb", "062-000", "--inbox", "dir:" + filepath.Join(dir, name, "in")}, extra)
}

var (
	listedFeedMembers    = []string{"name", "currency", "account", "bsb", "bic", "inbox", "created_at", "updated_at"}
	importedMembers      = []string{"sha256", "status", "entries", "applied", "exceptions", "reason"}
	feedExceptionMembers = []string{"id", "feed", "currency", "direction", "amount", "booking_date", "value_date", "entry_key", "remittance",
		"counterparty_name", "counterparty_account", "kind", "status", "resolved_by", "resolved_at", "reason"}
)

// TestFeedCommands: payd feed set prints the feed as feed list shows it;
// feed import prints §25's answer (applied, then a duplicate; rejected
// exits 1); feed exceptions prints §25's members exactly; a match that
// cannot apply changes nothing and exits 1; ignore closes the exception
// once (again: exit 1); unset, the feed is no longer listed; every change
// and refusal is in the audit log with its actor.
func TestFeedCommands(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		dir := t.TempDir()
		var f map[string]any
		decodeExact(t, mustPayd(t, feedSet(dsn, dir, "au-collect", "--json", "--actor", "alice")...), &f, listedFeedMembers...)
		if f["name"] != "au-collect" || f["account"] != "1234-5678" || f["bsb"] != "062-000" || f["currency"] != "AUD" {
			t.Errorf("feed set printed %v", f)
		}
		var list struct {
			Records []map[string]any `json:"records"`
		}
		decodeExact(t, mustPayd(t, "feed", "list", "--db", dsn, "--json"), &list, "records")
		if len(list.Records) != 1 || !slices.Equal(sortedKeys(list.Records[0]), sorted(listedFeedMembers)) {
			t.Errorf("feed list = %v", list.Records)
		}
		wantRefused(t, payd(t, feedSet(dsn, dir, "au-other", "--inbox", "dir:"+filepath.Join(dir, "au-collect", "in"))...), 1,
			"payd: feed au-collect reads the inbox dir:"+filepath.Join(dir, "au-collect", "in")+" already: no two feeds share an inbox\n")
		wantRefused(t, payd(t, abaRail(dsn, dir, "au", "--inbox", "dir:"+filepath.Join(dir, "au-collect", "in"))...), 1,
			"payd: feed au-collect reads the inbox dir:"+filepath.Join(dir, "au-collect", "in")+" already: no rail shares an inbox with a feed\n")

		file := filepath.Join(dir, "ntf.xml")
		day := feedtest.File{MsgID: "NTF-1", Account: "12345678", Currency: "AUD", Date: "2026-03-02", Entries: []feedtest.Entry{
			{Key: "NPP1", AmountMinor: 1234, Remittance: "NOTHING KNOWN", Payer: "SOMEONE"}}}
		if err := os.WriteFile(file, feedtest.Camt054(day), 0o644); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		decodeExact(t, mustPayd(t, "feed", "import", "--db", dsn, "--name", "au-collect", "--json", "--actor", "alice", file), &got, importedMembers...)
		if got["status"] != "applied" || got["entries"] != 1.0 || got["applied"] != 0.0 || got["exceptions"] != 1.0 || got["reason"] != "" {
			t.Errorf("feed import printed %v", got)
		}
		decodeExact(t, mustPayd(t, "feed", "import", "--db", dsn, "--name", "au-collect", "--json", file), &got, importedMembers...)
		if got["status"] != "duplicate" {
			t.Errorf("feed import again printed %v", got)
		}
		day.Currency = "USD"
		if err := os.WriteFile(file, feedtest.Camt054(day), 0o644); err != nil {
			t.Fatal(err)
		}
		r := payd(t, "feed", "import", "--db", dsn, "--name", "au-collect", "--json", file)
		decodeExact(t, r.stdout, &got, importedMembers...)
		if r.code != 1 || got["status"] != "rejected" || got["reason"] != "it is in USD; feed au-collect is in AUD" {
			t.Errorf("a USD file: exit %d %v", r.code, got)
		}
		big := filepath.Join(t.TempDir(), "big.xml")
		if err := os.WriteFile(big, bytes.Repeat([]byte("<x/>"), 300_000), 0o644); err != nil {
			t.Fatal(err)
		}
		r = payd(t, "feed", "import", "--db", dsn, "--name", "au-collect", "--json", "--max-file-mib", "1", big)
		decodeExact(t, r.stdout, &got, importedMembers...)
		if r.code != 1 || got["status"] != "rejected" || got["reason"] != "the file has 1048577 bytes, more than the 1048576 a feed file may have" {
			t.Errorf("a 1.2 MB file with --max-file-mib 1: exit %d %v", r.code, got)
		}

		var exc struct {
			Records []map[string]any `json:"records"`
		}
		decodeExact(t, mustPayd(t, "feed", "exceptions", "--db", dsn, "--json"), &exc, "records")
		if len(exc.Records) != 1 || !slices.Equal(sortedKeys(exc.Records[0]), sorted(feedExceptionMembers)) {
			t.Fatalf("feed exceptions = %v", exc.Records)
		}
		e := exc.Records[0]
		if e["feed"] != "au-collect" || e["kind"] != "unmatched" || e["status"] != "open" || e["amount"] != "12.34" || e["direction"] != "credit" ||
			e["entry_key"] != "NPP1" || e["counterparty_name"] != "SOMEONE" || e["booking_date"] != "2026-03-02" || e["resolved_by"] != nil {
			t.Errorf("the exception = %v", e)
		}
		id := strconv.FormatFloat(e["id"].(float64), 'f', -1, 64)
		wantRefused(t, payd(t, "feed", "match", "--db", dsn, "--entry", id, "--reference", "NOSUCHREF1234567", "--actor", "bob"), 1,
			"payd: reference NOSUCHREF1234567 does not take the entry")
		wantRefused(t, payd(t, "feed", "match", "--db", dsn, "--entry", id, "--payin", "NOSUCH00", "--actor", "bob"), 1, "payd: no payin NOSUCH00\n")
		mustPayd(t, "feed", "ignore", "--db", dsn, "--entry", id, "--reason", "a test credit", "--actor", "bob")
		wantRefused(t, payd(t, "feed", "ignore", "--db", dsn, "--entry", id, "--reason", "again", "--actor", "bob"), 1,
			"payd: exception "+id+" is ignored already: it is resolved once\n")
		decodeExact(t, mustPayd(t, "feed", "exceptions", "--db", dsn, "--json"), &exc, "records")
		if len(exc.Records) != 0 {
			t.Errorf("open exceptions after the ignore: %v", exc.Records)
		}
		decodeExact(t, mustPayd(t, "feed", "exceptions", "--db", dsn, "--json", "--all"), &exc, "records")
		if len(exc.Records) != 1 || exc.Records[0]["status"] != "ignored" || exc.Records[0]["resolved_by"] != "bob" || exc.Records[0]["resolved_at"] == nil {
			t.Errorf("all exceptions after the ignore: %v", exc.Records)
		}

		mustPayd(t, "feed", "unset", "--db", dsn, "--name", "au-collect", "--actor", "alice")
		decodeExact(t, mustPayd(t, "feed", "list", "--db", dsn, "--json"), &list, "records")
		if len(list.Records) != 0 {
			t.Errorf("feed list after unset = %v", list.Records)
		}
		wantRefused(t, payd(t, "feed", "unset", "--db", dsn, "--name", "au-collect"), 1, "payd: no feed au-collect\n")
		audit := mustPayd(t, "audit", "list", "--db", dsn)
		for _, want := range []string{"alice: payd feed set", "alice: payd feed import", "bob: payd feed match", "refused: reference NOSUCHREF1234567",
			"bob: payd feed ignore", "alice: payd feed unset"} {
			if !strings.Contains(audit, want) {
				t.Errorf("the audit log does not show %q:\n%s", want, audit)
			}
		}
	})
}

// TestFeedUsageTouchesNoDatabase: a feed command refused for its flags
// opens no database.
func TestFeedUsageTouchesNoDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"feed set without its flags", []string{"feed", "set"}, "payd: missing --account, --currency, --inbox, --name\n"},
		{"feed import without a file", []string{"feed", "import", "--name", "au"}, "payd: give the file's name: payd feed import --name FEED NAME\n"},
		{"feed import of a file that is not there", []string{"feed", "import", "--name", "au", "/nonexistent/statement.xml"}, "payd: read /nonexistent/statement.xml"},
		{"feed import with no bound", []string{"feed", "import", "--name", "au", "--max-file-mib", "0", "/nonexistent/statement.xml"}, "payd: --max-file-mib: must be a whole number of MiB from 1 to 256, such as 128\n"},
		{"feed match without a record", []string{"feed", "match", "--entry", "1"}, "payd: give one of --payin UUID, --payment-request ID, --static-payid ID, --treasury ID and --reference REF\n"},
		{"feed match with two records", []string{"feed", "match", "--entry", "1", "--payin", "A", "--treasury", "B"}, "payd: give one of --payin UUID"},
		{"feed match of no entry", []string{"feed", "match", "--entry", "x", "--payin", "A"}, "payd: --entry: give the exception's id, a positive number (payd feed exceptions)\n"},
		{"feed ignore without a reason", []string{"feed", "ignore", "--entry", "1"}, "payd: missing --reason\n"},
		{"feed unset without --name", []string{"feed", "unset"}, "payd: missing --name\n"},
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
