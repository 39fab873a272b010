package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"payd/internal/feed/feedtest"
	"payd/internal/ledger"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// feedFor sets a feed of account in currency through payd feed set, with a
// dir: inbox of its own, and returns its name and inbox directory.
func feedFor(t *testing.T, dsn, currency, account string) (name, inbox string) {
	t.Helper()
	name, inbox = "f-"+strings.ToLower(store.RandomID(6)), filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(inbox, 0o755); err != nil {
		t.Fatal(err)
	}
	operatorCmd(t, dsn, "feed", "set", "--name", name, "--currency", currency, "--account", account, "--inbox", "dir:"+inbox, "--actor", "ops@example.com")
	return name, inbox
}

// pollFeeds has the server read the feeds' inboxes now, as its loop does
// every --feed-poll.
func (p *payd) pollFeeds() {
	p.t.Helper()
	if err := p.srv.Feeds.Poll(context.Background()); err != nil {
		p.t.Fatalf("poll the feeds: %v", err)
	}
}

// feedException is an exception as payd feed exceptions --json shows it.
type feedException struct {
	ID         int64   `json:"id"`
	Feed       string  `json:"feed"`
	Kind       string  `json:"kind"`
	Status     string  `json:"status"`
	EntryKey   *string `json:"entry_key"`
	Amount     *string `json:"amount"`
	Direction  *string `json:"direction"`
	ResolvedBy *string `json:"resolved_by"`
	Reason     string  `json:"reason"`
}

func feedExceptions(t *testing.T, dsn string, all bool) map[string]feedException {
	t.Helper()
	args := []string{"feed", "exceptions", "--json"}
	if all {
		args = append(args, "--all")
	}
	var got struct {
		Records []feedException `json:"records"`
	}
	if err := json.Unmarshal([]byte(operatorCmd(t, dsn, args...)), &got); err != nil {
		t.Fatal(err)
	}
	out := map[string]feedException{}
	for _, e := range got.Records {
		if e.EntryKey != nil {
			out[*e.EntryKey] = e
		}
	}
	return out
}

// feedImport runs payd feed import --json on content and returns its
// answer and exit code.
func feedImport(t *testing.T, dsn, feedName string, content []byte) (map[string]any, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "statement")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	out, code, stderr := tryOperatorCmd(t, dsn, "feed", "import", "--name", feedName, "--json", "--actor", "ops@example.com", path)
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("payd feed import: exit %d, %q %s", code, out, stderr)
	}
	return got, code
}

// treasuryAvailable is a treasury account's available and incoming minor
// units, read from the ledger (no endpoint shows them).
func (p *payd) treasuryMinor(t *testing.T, merchantID, currency string) int64 {
	t.Helper()
	bs, err := ledger.Balances(context.Background(), p.srv.DB.Read(), merchantID, "treasury", currency)
	if err != nil || len(bs) != 1 {
		t.Fatalf("treasury balances %+v: %v", bs, err)
	}
	return bs[0].Available + bs[0].Incoming
}

// TestFeedDay: a day of an AUD collection account played by its bank
// (CONTRACT §18, §25). A camt.054 in the feed's inbox receives a payin
// named by its uuid in the remittance text and one by its PayID, pays a
// PayID request and a static PayID, credits a treasury account, and leaves
// a wrong amount (amount_mismatch, nothing received) and an unknown credit
// (unmatched) for the operator; each moved record shows bank_reference, the
// payins' webhooks come as simulate's do. The day's camt.053 holds the same
// entries again: they are applied once, its new one applied. A statement of
// another account goes to rejected/ whole. The operator matches the
// unknown credit to the treasury account and ignores the wrong amount,
// each once (a second match exits 1), audited; the metric follows. A BAI2
// file and an MT940 statement imported by hand receive a payin and pay the
// static PayID; the same file again is a duplicate. A KRW feed receives a
// virtual account's payin, a JPY feed a jp_bank_jpy payin by its account
// number. The ledger verifies.
func TestFeedDay(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		apps := p.merchant("AUD", "KRW", "JPY")
		aud, krw, jpy := apps["AUD"], apps["KRW"], apps["JPY"]
		pinContact(t, p, aud, "payer@example.com")
		hooks := newEventLog(t)
		payin := func(amount any) map[string]any {
			return pinCreate(t, p, aud, pinWith(pinBody("AUD", "au_payid_npp_aud", amount), map[string]any{"email": "payer@example.com",
				"webhook_notification": pinHookTo(hooks, "Bearer feed")}))
		}
		byText, byPayID, wrong, byBAI2 := payin(100), payin(40), payin(55), payin(30)
		zengin := pinCreate(t, p, jpy, pinBody("JPY", "jp_bank_jpy", 5000))
		p.advance(aud, 3) // the PayID and Zengin payins get their pay_code
		payID := str(pinMap(pinDetail(t, p, aud, str(byPayID, "uuid")), "pay_code"), "pay_id")
		if payID == "" {
			t.Fatal("the PayID payin has no pay_id")
		}
		request := p.payidRequest(aud, map[string]any{"amount": "25.00", "name": "Jane Payer", "description": "Order 8", "external_id": "order-8",
			"emails": []string{"jane@example.com"}})
		r := p.post("/v1/customers/create_static_open_payid", aud, map[string]any{"name": "Jane Payer", "email": "jane@example.com",
			"prefix_static_payid": "jane", "external_id": "cus-8", "phone": "+61412345678"})
		want(t, r, 201)
		static := str(r.JSON(t), "static_payid")
		treasury, err := p.srv.Merchants.OpenTreasury(context.Background(), aud.MerchantID, "AUD")
		if err != nil {
			t.Fatal(err)
		}

		feedName, inbox := feedFor(t, dsn, "AUD", "062000-12345678")
		day := feedtest.File{MsgID: "NTF-0302", Account: "06200012345678", Currency: "AUD", Date: "2026-03-02", OpeningMinor: 100000, Entries: []feedtest.Entry{
			{Key: "NPPA1", AmountMinor: 10000, Remittance: "ORDER " + strings.ToUpper(str(byText, "uuid")) + " THANKS", Payer: "JANE"},
			{Key: "NPPA2", AmountMinor: 4000, Proxy: payID, Payer: "JANE"},
			{Key: "NPPA3", AmountMinor: 5000, Remittance: "order/" + str(wrong, "uuid"), Payer: "JANE"},
			{Key: "NPPA4", AmountMinor: 2500, Proxy: str(request, "request_payid"), Payer: "JANE PAYER"},
			{Key: "NPPA5", AmountMinor: 1200, Proxy: static, Payer: "JANE PAYER"},
			{Key: "NPPA6", AmountMinor: 2000, CreditedAccount: treasury.AccountNumber, Payer: "ACME PTY LTD"},
			{Key: "NPPA7", AmountMinor: 1234, Remittance: "NOTHING OF PAYD'S", Payer: "SOMEONE"},
			{Key: "NPPA8", AmountMinor: 999, Pending: true, Remittance: "ORDER " + str(byBAI2, "uuid")},
		}}
		drop(t, inbox, "ntf-0302.xml", feedtest.Camt054(day))
		p.pollFeeds()
		p.runDue(aud)
		if filed(inbox, "ntf-0302.xml") != "processed" {
			t.Errorf("the notification is in %q, want processed/", filed(inbox, "ntf-0302.xml"))
		}
		wantPayin := func(uuid, status, ref string) {
			t.Helper()
			d := pinDetail(t, p, aud, uuid)
			if str(d, "status") != status || str(d, "bank_reference") != ref {
				t.Errorf("payin %s: %s with bank_reference %q, want %s %q", uuid, d["status"], d["bank_reference"], status, ref)
			}
		}
		wantPayin(str(byText, "uuid"), "received", "NPPA1")
		wantPayin(str(byPayID, "uuid"), "received", "NPPA2")
		wantPayin(str(wrong, "uuid"), "pending", "")
		wantPayin(str(byBAI2, "uuid"), "pending", "") // its entry was pending
		d := p.get("/v1/payment_requests/detail?id="+num(request, "id"), aud).JSON(t)
		if str(d, "status") != "received" || str(d, "bank_reference") != "NPPA4" {
			t.Errorf("the PayID request: %v %v, want received NPPA4", d["status"], d["bank_reference"])
		}
		pays := p.get("/v1/customers/static_payid_payments?customer_id=cus-8", aud).JSON(t)
		if list, _ := pays["records"].([]any); num(pays, "total") != "1" || len(list) != 1 || str(list[0].(map[string]any), "bank_reference") != "NPPA5" {
			t.Errorf("the static PayID's payments: %v", pays)
		}
		if got := p.treasuryMinor(t, aud.MerchantID, "AUD"); got != 2000 {
			t.Errorf("treasury = %d minor units, want 2000", got)
		}
		exc := feedExceptions(t, dsn, false)
		if len(exc) != 2 || exc["NPPA3"].Kind != "amount_mismatch" || exc["NPPA7"].Kind != "unmatched" || exc["NPPA7"].Feed != feedName {
			t.Fatalf("exceptions %+v, want NPPA3 amount_mismatch and NPPA7 unmatched", exc)
		}
		waitUntil(t, "the payins' webhooks", 10*time.Second, func() bool { return hooks.count("payin.pay_code") == 4 && hooks.count("payin.received") == 2 })
		for _, e := range hooks.all() {
			if e.Type == "payin.received" && str(e.Record, "bank_reference") == "" {
				t.Errorf("a payin.received webhook without bank_reference: %v", e.Record)
			}
		}

		// The day's statement: the same entries, once; one more.
		day.MsgID = "STMT-0302"
		day.Entries = append(day.Entries, feedtest.Entry{Key: "NPPA9", AmountMinor: 500, Remittance: "TOPUP " + treasury.AccountNumber})
		drop(t, inbox, "stmt-0302.xml", feedtest.Camt053(day))
		p.pollFeeds()
		p.runDue(aud)
		if hooks.count("payin.received") != 2 {
			t.Errorf("%d payin.received webhooks after the statement, want 2 (its entries were the notification's)", hooks.count("payin.received"))
		}
		if filed(inbox, "stmt-0302.xml") != "processed" || p.treasuryMinor(t, aud.MerchantID, "AUD") != 2500 || len(feedExceptions(t, dsn, false)) != 2 {
			t.Errorf("the statement: %q, treasury %d (want 2500), exceptions %v", filed(inbox, "stmt-0302.xml"), p.treasuryMinor(t, aud.MerchantID, "AUD"), feedExceptions(t, dsn, false))
		}
		again, code := feedImport(t, dsn, feedName, feedtest.Camt053(day))
		if code != 0 || again["status"] != "duplicate" || again["entries"] != float64(8) || again["applied"] != float64(1) {
			t.Errorf("the statement imported again: exit %d %v, want a duplicate of 8 booked entries, 1 applied (the rest were the notification's)", code, again)
		}

		// Another account's statement is refused whole.
		other := day
		other.Account, other.MsgID = "99999999", "STMT-OTHER"
		other.Entries = []feedtest.Entry{{Key: "X1", AmountMinor: 10000, Remittance: "ORDER " + str(wrong, "uuid")}}
		drop(t, inbox, "other.xml", feedtest.Camt053(other))
		p.pollFeeds()
		if filed(inbox, "other.xml") != "rejected" || len(feedExceptions(t, dsn, false)) != 2 {
			t.Errorf("another account's statement: %q, want rejected/ and nothing applied", filed(inbox, "other.xml"))
		}
		rejected, code := feedImport(t, dsn, feedName, feedtest.Camt053(other))
		if code != 1 || rejected["status"] != "rejected" || !strings.Contains(str(rejected, "reason"), "99999999") {
			t.Errorf("feed import of another account's statement: exit %d %v", code, rejected)
		}

		// The operator works through the exceptions.
		metric := func() string {
			for _, line := range strings.Split(string(p.do(req{method: "GET", path: "/metrics", root: true}).Body), "\n") {
				if strings.HasPrefix(line, "payd_feed_exceptions_open ") {
					return strings.TrimPrefix(line, "payd_feed_exceptions_open ")
				}
			}
			return "missing"
		}
		if metric() != "2" {
			t.Errorf("payd_feed_exceptions_open = %s, want 2", metric())
		}
		id := func(key string) string { return strings.TrimSpace(jsonNumber(exc[key].ID)) }
		operatorCmd(t, dsn, "feed", "match", "--entry", id("NPPA7"), "--treasury", treasury.PublicID, "--actor", "alice")
		if _, code, _ := tryOperatorCmd(t, dsn, "feed", "match", "--entry", id("NPPA7"), "--treasury", treasury.PublicID, "--actor", "alice"); code != 1 {
			t.Errorf("a second match exits %d, want 1", code)
		}
		if _, code, _ := tryOperatorCmd(t, dsn, "feed", "match", "--entry", id("NPPA3"), "--payin", str(wrong, "uuid"), "--actor", "alice"); code != 1 {
			t.Errorf("a match to a payin whose total the credit is not exits %d, want 1", code)
		}
		operatorCmd(t, dsn, "feed", "ignore", "--entry", id("NPPA3"), "--reason", "customer refunded by phone", "--actor", "bob")
		if got := p.treasuryMinor(t, aud.MerchantID, "AUD"); got != 2500+1234 {
			t.Errorf("treasury after the match = %d, want %d", got, 2500+1234)
		}
		all := feedExceptions(t, dsn, true)
		if len(feedExceptions(t, dsn, false)) != 0 || all["NPPA7"].Status != "matched" || all["NPPA3"].Status != "ignored" ||
			all["NPPA7"].ResolvedBy == nil || *all["NPPA7"].ResolvedBy != "alice" || *all["NPPA3"].ResolvedBy != "bob" {
			t.Errorf("exceptions after the operator: %+v", all)
		}
		wantPayin(str(wrong, "uuid"), "pending", "")
		if metric() != "0" {
			t.Errorf("payd_feed_exceptions_open = %s, want 0", metric())
		}
		audit := operatorCmd(t, dsn, "audit", "list")
		for _, want := range []string{"alice: payd feed match", "bob: payd feed ignore", "payd feed set", "payd feed import"} {
			if !strings.Contains(audit, want) {
				t.Errorf("the audit log does not show %q:\n%s", want, audit)
			}
		}

		// BAI2 and MT940 by hand.
		bai := feedtest.File{MsgID: "B1", Account: "06200012345678", Currency: "AUD", Date: "2026-03-03", OpeningMinor: 100000, Entries: []feedtest.Entry{
			{Key: "FED0303001", AmountMinor: 3000, Reference: "INV9", Remittance: "PAYMENT " + str(byBAI2, "uuid")},
		}}
		got, code := feedImport(t, dsn, feedName, feedtest.BAI2(bai))
		if code != 0 || got["status"] != "applied" || got["applied"] != float64(1) || got["exceptions"] != float64(0) {
			t.Errorf("the BAI2 file: exit %d %v", code, got)
		}
		wantPayin(str(byBAI2, "uuid"), "received", "FED0303001")
		mt := feedtest.File{MsgID: "MT0304", Account: "062000/06200012345678", Currency: "AUD", Date: "2026-03-04", OpeningMinor: 100000, Entries: []feedtest.Entry{
			{Key: "NPP0304001", AmountMinor: 800, Remittance: "TO " + static},
		}}
		got, code = feedImport(t, dsn, feedName, feedtest.MT940(mt))
		if code != 0 || got["status"] != "applied" || got["applied"] != float64(1) {
			t.Errorf("the MT940 statement: exit %d %v", code, got)
		}
		if pays := p.get("/v1/customers/static_payid_payments?customer_id=cus-8", aud).JSON(t); num(pays, "total") != "2" {
			t.Errorf("the static PayID's payments after the MT940: %v", pays)
		}

		// A KRW collection account: a virtual account's payin.
		va := pinCreate(t, p, krw, pinBody("KRW", "kr_bank_krw", 50000))
		krwFeed, krwInbox := feedFor(t, dsn, "KRW", "555000111")
		drop(t, krwInbox, "krw.xml", feedtest.Camt054(feedtest.File{MsgID: "KRW-1", Account: "555000111", Currency: "KRW", Date: "2026-03-02",
			Entries: []feedtest.Entry{{Key: "KB0001", AmountMinor: 50000, CreditedAccount: str(pinMap(va, "pay_code"), "virtual_account_number")}}}))
		p.pollFeeds()
		if d := pinDetail(t, p, krw, str(va, "uuid")); str(d, "status") != "received" || str(d, "bank_reference") != "KB0001" {
			t.Errorf("the virtual account's payin via feed %s: %v %v", krwFeed, d["status"], d["bank_reference"])
		}
		// A JPY collection account: a jp_bank_jpy payin's account number.
		account := str(pinMap(pinDetail(t, p, jpy, str(zengin, "uuid")), "pay_code"), "account_number")
		_, jpyInbox := feedFor(t, dsn, "JPY", "7654321")
		drop(t, jpyInbox, "jpy.xml", feedtest.Camt054(feedtest.File{MsgID: "JPY-1", Account: "7654321", Currency: "JPY", Date: "2026-03-02",
			Entries: []feedtest.Entry{{Key: "ZG0001", AmountMinor: 5000, CreditedAccount: account, Payer: "ﾔﾏﾀﾞ ﾀﾛｳ"}}}))
		p.pollFeeds()
		if d := pinDetail(t, p, jpy, str(zengin, "uuid")); account == "" || str(d, "status") != "received" || str(d, "bank_reference") != "ZG0001" {
			t.Errorf("the Zengin payin (account %q): %v %v", account, d["status"], d["bank_reference"])
		}
		p.drained(t, aud)
		ledgerVerifies(t, dsn)
	})
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestFeedImportCrash: payd serve killed with SIGKILL once it has applied
// the first entry of a feed's notification (PAYD_TEST_BANKFILE_KILL=
// applying) leaves the file in the inbox, applying; the restart applies
// the rest, each payin received once with one webhook, the file in
// processed/, the ledger sound.
func TestFeedImportCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		feedName, inbox := feedFor(t, dsn, "AUD", "12345678")
		proc := startProcess(t, dsn)
		m := demoApp(t, proc, "AUD")
		client := &payd{t: t, base: proc.base}
		pinContact(t, client, m, "payer@example.com")
		hooks := newEventLog(t)
		var entries []feedtest.Entry
		var uuids []string
		for i := range 10 {
			pi := pinCreate(t, client, m, pinWith(pinBody("AUD", "au_payid_npp_aud", 20+i), map[string]any{"email": "payer@example.com",
				"webhook_notification": pinHookTo(hooks, "Bearer crash")}))
			uuids = append(uuids, str(pi, "uuid"))
			entries = append(entries, feedtest.Entry{Key: "CRASH" + str(pi, "uuid"), AmountMinor: int64(20+i) * 100, Remittance: "ORDER " + str(pi, "uuid")})
		}
		proc.cmd.Process.Signal(syscall.SIGKILL)
		proc.cmd.Wait()
		drop(t, inbox, "crash.xml", feedtest.Camt054(feedtest.File{MsgID: "CRASH", Account: "12345678", Currency: "AUD", Date: "2026-03-02", Entries: entries}))

		killLog(t, killedAt(t, "applying", "serve", "--addr", "127.0.0.1:0", "--db", dsn))
		if where := filed(inbox, "crash.xml"); where != "" {
			t.Fatalf("after the crash the file is in %q, want still in the inbox", where)
		}
		proc = startProcess(t, dsn)
		client = &payd{t: t, base: proc.base}
		waitUntil(t, "the file applied after the restart", 60*time.Second, func() bool { return filed(inbox, "crash.xml") == "processed" })
		for _, uuid := range uuids {
			if d := pinDetail(t, client, m, uuid); str(d, "status") != "received" || str(d, "bank_reference") != "CRASH"+uuid {
				t.Errorf("payin %s after the restart: %v %v", uuid, d["status"], d["bank_reference"])
			}
		}
		// A delivery the killed process made but had not marked is made
		// again (at least once, the same webhook-id): count events.
		waitUntil(t, "one payin.received per payin", 30*time.Second, func() bool { return hooks.distinct("payin.received") >= 10 })
		if n, r := hooks.distinct("payin.received"), hooks.records("payin.received"); n != 10 || r != 10 {
			t.Errorf("%d payin.received events of %d payins, want 10 of 10", n, r)
		}
		got, _ := feedImport(t, dsn, feedName, feedtest.Camt054(feedtest.File{MsgID: "CRASH", Account: "12345678", Currency: "AUD", Date: "2026-03-02", Entries: entries}))
		if got["status"] != "duplicate" || got["applied"] != float64(10) {
			t.Errorf("the file again: %v, want a duplicate with its 10 entries applied once", got)
		}
		ledgerVerifies(t, dsn)
	})
}

// TestFeedDebitsAndReturns: a statement's booked debit of a bank file's
// reference (the bank booked the ABA file as one debit) confirms its
// transfers done, and a later return naming one of them makes it returned
// with the return's reason and its funds back, each through the bank-file
// rail's outcome function with its webhooks (CONTRACT §17, §25); a debit of
// an unknown reference is unmatched; the same statement again changes
// nothing; the ledger verifies.
func TestFeedDebitsAndReturns(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		railName, _ := inboxRail(t, dsn)
		p.srv.Files.Forget()
		feedName, inbox := feedFor(t, dsn, "AUD", "123456789")
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		hooks := newEventLog(t)
		created := p.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "10", bsbOK, bsbOK), hooks, "Basic b2s="))
		p.runDue(m)
		shown := showFile(t, dsn, cutFile(t, dsn, railName))
		if len(shown.Transfers) != 2 {
			t.Fatalf("the file %+v", shown)
		}
		returned := shown.Transfers[1].BankReference
		stmt := feedtest.File{MsgID: "STMT-DR", Account: "123456789", Currency: "AUD", Date: "2026-03-02", OpeningMinor: 500000, Entries: []feedtest.Entry{
			{Key: "BECS0001", AmountMinor: 2000, Debit: true, Reference: shown.FileReference, Remittance: "PAYD FILE " + shown.Name},
			{Key: "BECS0002", AmountMinor: 999, Debit: true, Reference: "NOSUCHREF0000001"},
		}}
		drop(t, inbox, "stmt-1.xml", feedtest.Camt053(stmt))
		p.pollFeeds()
		if got := txStatuses(p.payoutDetail(m, str(created, "uuid"))); strings.Join(got, ",") != "done,done" {
			t.Errorf("after the file's debit: %v, want both done", got)
		}
		exc := feedExceptions(t, dsn, false)
		if len(exc) != 1 || exc["BECS0002"].Kind != "unmatched" || exc["BECS0002"].Feed != feedName {
			t.Errorf("exceptions %+v, want the unknown debit unmatched", exc)
		}
		before := minorUnits(t, p.balanceOf(m, "AUD").Available, "AUD")
		ret := feedtest.File{MsgID: "STMT-RT", Account: "123456789", Currency: "AUD", Date: "2026-03-03", OpeningMinor: 498001, Entries: []feedtest.Entry{
			{Key: "NPPRT0001", AmountMinor: 1000, Return: true, Reference: returned, ReturnReason: "AC04 Account closed"},
		}}
		for _, name := range []string{"return.xml", "return-again.xml"} {
			drop(t, inbox, name, feedtest.Camt053(ret))
			p.pollFeeds()
		}
		txs := p.txByUUID(m, str(created, "uuid"))
		var statuses []string
		for _, tx := range txs {
			statuses = append(statuses, str(tx, "status")+" "+str(tx, "failure_reason"))
		}
		slices.Sort(statuses)
		if strings.Join(statuses, ",") != "done ,returned AC04 Account closed" {
			t.Errorf("after the return: %q", statuses)
		}
		if after := minorUnits(t, p.balanceOf(m, "AUD").Available, "AUD"); after != before+1050 {
			t.Errorf("available %d after the return, want %d (the transfer and its fee back)", after, before+1050)
		}
		waitUntil(t, "the transfers' webhooks", 10*time.Second, func() bool {
			return hooks.count("payout_transaction.done") == 2 && hooks.count("payout_transaction.returned") == 1
		})
		if filed(inbox, "return-again.xml") != "processed" || hooks.count("payout_transaction.returned") != 1 {
			t.Errorf("the return again: %q, %d returned webhooks", filed(inbox, "return-again.xml"), hooks.count("payout_transaction.returned"))
		}
		ledgerVerifies(t, dsn)
	})
}
