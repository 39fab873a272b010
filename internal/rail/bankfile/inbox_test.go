package bankfile

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payd/internal/rail"
	"payd/internal/rail/bankfile/banktest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// inboxFixture is a fixture with an aba rail whose inbox is a directory,
// and a file of four transfers of two merchants cut on it.
type inboxFixture struct {
	*fixture
	rail, inbox, file, reference string
	refs, keys                   []string
}

func newInboxFixture(t *testing.T, db *store.DB) *inboxFixture {
	t.Helper()
	fx := &inboxFixture{fixture: newFixture(t, db, time.Date(2026, 5, 4, 10, 0, 0, 0, sydney))}
	fx.rail, fx.inbox = uniqueName("au"), t.TempDir()
	s := abaSettings(fx.rail)
	s.Inbox = "dir:" + fx.inbox
	fx.set(s)
	m, other := fx.newMerchant("Shop"), fx.newMerchant("Other shop")
	fx.keys = []string{"PAYTX001", "PAYTX002", "stl_SETTLE01", "trf_TRANSF01"}
	for i, key := range fx.keys {
		owner := m
		if i == 1 {
			owner = other
		}
		method := map[string]string{"stl_": rail.SettlementMethod, "trf_": rail.TransferMethod}[key[:4]]
		if method == "" {
			method = "au_bank_aud"
		}
		fx.refs = append(fx.refs, fx.hand(owner, key, method, int64(1000*(i+1)), bsbAccount("12345678", "Jane Doe")))
	}
	fx.file = fx.cut(fx.rail)
	fx.reference = FileReference(strings.TrimSuffix(fx.file, ".aba"))
	return fx
}

// report is a status report on the fixture's file stating its count and
// sum (100.00 AUD: 10 + 20 + 30 + 40).
func (fx *inboxFixture) report(id string, txs ...banktest.Transaction) banktest.Report {
	return banktest.Report{MsgID: id, File: fx.file, FileReference: fx.reference, Count: 4, CtrlSum: "100.00", GroupStatus: "PART", Transactions: txs}
}

// drop writes a file into the inbox, as the bank does.
func (fx *inboxFixture) drop(name string, content []byte) {
	fx.t.Helper()
	if err := os.WriteFile(filepath.Join(fx.inbox, name), content, 0o644); err != nil {
		fx.t.Fatal(err)
	}
}

// poll reads the inboxes once.
func (fx *inboxFixture) poll() error { return fx.files.PollInboxes(context.Background()) }

// where lists the inbox's files and folders: "name", "processed/name",
// "rejected/name".
func (fx *inboxFixture) where() []string {
	fx.t.Helper()
	var out []string
	for _, dir := range []string{"", "processed", "rejected"} {
		entries, _ := os.ReadDir(filepath.Join(fx.inbox, dir))
		for _, e := range entries {
			if !e.IsDir() {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	slices.Sort(out)
	return out
}

// outcomes are the outcomes heard, as "key verdict reason", sorted.
func (fx *inboxFixture) outcomes() []string {
	var out []string
	for _, o := range fx.heard.all() {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%s %s %s", o.Key, o.Verdict, o.Reason)))
	}
	slices.Sort(out)
	return out
}

// inboxRow is an inbox_files row's status and counts.
func inboxRow(t *testing.T, db *store.DB, name string) string {
	t.Helper()
	var status, reason string
	var entries, applied, exceptions, unknown int
	err := db.Read().QueryRow(`SELECT status, entries, applied, exceptions, unknown, reason FROM inbox_files WHERE name = $1`, name).
		Scan(&status, &entries, &applied, &exceptions, &unknown, &reason)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s %d/%d/%d/%d %s", status, entries, applied, exceptions, unknown, reason)
}

// TestInboxApplies: a status report in a rail's inbox settles its file's
// transfers (ACSC done; RJCT failed with "<Rsn/Cd> <AddtlInf>"; PDNG and
// unlisted nothing), once: the file is moved to processed/ and recorded
// applied with its counts; the same bytes again, under another name, are
// filed away without a second outcome; another report with the same word
// changes nothing.
func TestInboxApplies(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		r := fx.report("STS-0001",
			banktest.Transaction{Reference: fx.refs[0], Status: "ACSC"},
			banktest.Transaction{Reference: fx.refs[1], Status: "RJCT", Reason: banktest.Reason{Code: "AC04", Text: "Account closed"}},
			banktest.Transaction{Reference: fx.refs[2], Status: "PDNG"})
		fx.drop("sts-0001.xml", r.XML())
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		want := []string{"PAYTX001 done", "PAYTX002 failed AC04 Account closed"}
		if got := fx.outcomes(); !slices.Equal(got, want) {
			t.Errorf("outcomes %q, want %q", got, want)
		}
		if got := inboxRow(t, db, "sts-0001.xml"); got != "applied 2/2/0/0 " {
			t.Errorf("inbox file %s, want applied 2/2/0/0", got)
		}
		fx.drop("copy-of-sts-0001.xml", r.XML())
		r.MsgID = "STS-0002"
		fx.drop("sts-0002.xml", r.XML())
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		if got, want := fx.outcomes(), slices.Sorted(slices.Values(append(want, want...))); !slices.Equal(got, want) {
			t.Errorf("after the copy and a second report: outcomes %q, want the first two once more (the second report's, which change nothing)", got)
		}
		if got := inboxRow(t, db, "sts-0002.xml"); got != "applied 2/0/0/0 " {
			t.Errorf("the second report: %s, want applied 2/0/0/0 (nothing changed)", got)
		}
		if got, want := fx.where(), []string{"processed/copy-of-sts-0001.xml", "processed/sts-0001.xml", "processed/sts-0002.xml"}; !slices.Equal(got, want) {
			t.Errorf("inbox holds %v, want %v", got, want)
		}
	})
}

// TestInboxGroupRejection: a group RJCT fails every transfer of the file
// with the group's reason.
func TestInboxGroupRejection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		r := fx.report("STS-GROUP")
		r.GroupStatus, r.GroupReason = "RJCT", banktest.Reason{Code: "FF01", Text: "Invalid file format"}
		fx.drop("group.xml", r.XML())
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, key := range fx.keys {
			want = append(want, key+" failed FF01 Invalid file format")
		}
		slices.Sort(want)
		if got := fx.outcomes(); !slices.Equal(got, want) {
			t.Errorf("a group rejection: outcomes %q, want %q", got, want)
		}
	})
}

// TestInboxPaymentRejection: a payment-information RJCT fails every
// transfer of the payment with its reason, a transaction's own status
// deciding first.
func TestInboxPaymentRejection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		p := fx.report("STS-PAYMENT", banktest.Transaction{Reference: fx.refs[0], Status: "ACCC"})
		p.GroupStatus, p.PaymentStatus, p.PaymentReason = "", "RJCT", banktest.Reason{Code: "AM04"}
		fx.drop("payment.xml", p.XML())
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		if got, want := fx.outcomes(), []string{"PAYTX001 done", "PAYTX002 failed AM04", "stl_SETTLE01 failed AM04", "trf_TRANSF01 failed AM04"}; !slices.Equal(got, want) {
			t.Errorf("a payment rejection: outcomes %q, want %q", got, want)
		}
	})
}

// TestInboxRejectsWhole: a file that is no valid status report, fails its
// own counts, or is not about a file of the rail (another file, another
// count or sum than the file's, another payment information) is moved to
// rejected/ with its reason, counted, and nothing of it applied.
func TestInboxRejectsWhole(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		ok := []banktest.Transaction{{Reference: fx.refs[0], Status: "ACSC"}}
		edit := func(f func(*banktest.Report)) []byte {
			r := fx.report("STS-BAD", ok...)
			f(&r)
			return r.XML()
		}
		bad := map[string]struct {
			content []byte
			reason  string
		}{
			"not-xml.xml": {[]byte("hello bank"), "not a valid pain.002.001.11 status report"},
			"v03.xml":     {[]byte(strings.Replace(string(edit(func(*banktest.Report) {})), "pain.002.001.11", "pain.002.001.03", 1)), "not a valid pain.002.001.11 status report"},
			"own-counts.xml": {edit(func(r *banktest.Report) {
				r.Count, r.CtrlSum = 1, ""
				r.Transactions = append(r.Transactions, banktest.Transaction{Reference: fx.refs[1], Status: "ACSC"})
			}), "status report counts disagree"},
			"other-file.xml":   {edit(func(r *banktest.Report) { r.File = "payd-" + fx.rail + "-20260504-009.aba" }), "which is no bank file of rail " + fx.rail},
			"file-count.xml":   {edit(func(r *banktest.Report) { r.Count = 5 }), "its group counts 5 transactions; " + fx.file + " holds 4"},
			"file-sum.xml":     {edit(func(r *banktest.Report) { r.CtrlSum = "99.99" }), "its group sums to 99.99; " + fx.file + " to 100.00 AUD"},
			"other-pmtinf.xml": {edit(func(r *banktest.Report) { r.FileReference = "F0000000000000ZZ" }), "it names payment information F0000000000000ZZ"},
		}
		for name, b := range bad {
			fx.drop(name, b.content)
		}
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		if got := fx.outcomes(); len(got) != 0 {
			t.Errorf("outcomes %q, want none", got)
		}
		var want []string
		for name, b := range bad {
			want = append(want, "rejected/"+name)
			if got := inboxRow(t, db, name); !strings.HasPrefix(got, "rejected 0/0/0/0 ") || !strings.Contains(got, b.reason) {
				t.Errorf("%s: %s, want rejected with %q", name, got, b.reason)
			}
		}
		slices.Sort(want)
		if got := fx.where(); !slices.Equal(got, want) {
			t.Errorf("inbox holds %v, want %v", got, want)
		}
		if n, err := fx.files.InboxRejected(context.Background()); err != nil || n != int64(len(bad)) {
			t.Errorf("InboxRejected = %d, %v; want %d", n, err, len(bad))
		}
	})
}

// TestInboxUnknownReference: a report naming a reference of no transfer
// of its file changes nothing for it, is counted, and applies the rest.
func TestInboxUnknownReference(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		r := fx.report("STS-UNKNOWN", banktest.Transaction{Reference: fx.refs[0], Status: "ACSC"}, banktest.Transaction{Reference: "NOSUCHREFERENCE1", Status: "RJCT"})
		fx.drop("unknown.xml", r.XML())
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		if got := fx.outcomes(); !slices.Equal(got, []string{"PAYTX001 done"}) {
			t.Errorf("outcomes %q", got)
		}
		if got := inboxRow(t, db, "unknown.xml"); got != "applied 1/1/0/1 " {
			t.Errorf("inbox file %s, want applied 1/1/0/1", got)
		}
		if n, err := fx.files.InboxUnknownReferences(context.Background()); err != nil || n != 1 {
			t.Errorf("InboxUnknownReferences = %d, %v; want 1", n, err)
		}
	})
}

// TestInboxResumes: a file whose application stopped in the middle stays
// in the inbox, applying, with the entries applied so far marked; the next
// poll applies the rest and nothing twice. A contrary status opens its
// exception once.
func TestInboxResumes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		fx.heard.states = map[string]rail.State{"PAYTX001": rail.StateFailed}
		r := fx.report("STS-RESUME", banktest.Transaction{Reference: fx.refs[0], Status: "ACSC"},
			banktest.Transaction{Reference: fx.refs[1], Status: "ACSC"}, banktest.Transaction{Reference: fx.refs[2], Status: "ACSC"})
		fx.drop("resume.xml", r.XML())
		fx.heard.fail("PAYTX002")
		if err := fx.poll(); err == nil || !strings.Contains(err.Error(), "the listener of PAYTX002 fails") {
			t.Fatalf("the poll that stops: %v", err)
		}
		if got := inboxRow(t, db, "resume.xml"); got != "applying 3/0/0/0 " || !slices.Equal(fx.where(), []string{"resume.xml"}) {
			t.Errorf("after the stop: %s, inbox %v; want applying, still in the inbox", got, fx.where())
		}
		fx.heard.fail("")
		if err := fx.poll(); err != nil {
			t.Fatal(err)
		}
		if got, want := fx.outcomes(), []string{"PAYTX001 done", "PAYTX002 done", "stl_SETTLE01 done"}; !slices.Equal(got, want) {
			t.Errorf("outcomes %q, want each once: %q", got, want)
		}
		if got := inboxRow(t, db, "resume.xml"); got != "applied 3/2/1/0 " {
			t.Errorf("inbox file %s, want applied 3/2/1/0", got)
		}
		if n := countRows(t, db, `SELECT count(*) FROM bank_exceptions WHERE entry_key = $1 AND kind = 'state_mismatch'`, fx.refs[0]); n != 1 {
			t.Errorf("%d exceptions of the contrary status, want 1", n)
		}
	})
}

// TestInboxPolledOnce: two processes polling one inbox at once apply each
// transfer's status once and file the report away once.
func TestInboxPolledOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		fx := newInboxFixture(t, db)
		other := New(Deps{DB: db, Clock: fx.clock, Banks: fx.files.Banks, Writers: FormatWriters()})
		other.Listen("", fx.heard.hear)
		var txs []banktest.Transaction
		for _, ref := range fx.refs {
			txs = append(txs, banktest.Transaction{Reference: ref, Status: "ACSC"})
		}
		fx.drop("all.xml", fx.report("STS-ALL", txs...).XML())
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			files := fx.files
			if i%2 == 1 {
				files = other
			}
			wg.Go(func() { errs[i] = files.PollInboxes(context.Background()) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Errorf("poll: %v", err)
			}
		}
		if got, want := fx.outcomes(), []string{"PAYTX001 done", "PAYTX002 done", "stl_SETTLE01 done", "trf_TRANSF01 done"}; !slices.Equal(got, want) {
			t.Errorf("outcomes %q, want each once", got)
		}
		if got := fx.where(); !slices.Equal(got, []string{"processed/all.xml"}) {
			t.Errorf("inbox holds %v", got)
		}
	})
}
