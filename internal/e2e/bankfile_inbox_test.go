package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"payd/internal/rail/bankfile/banktest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// inboxRail sets an aba rail of AUD bank payouts, settlements and external
// transfers through payd rail set, with a dir: outbox and inbox of its
// own, and returns its name and inbox directory.
func inboxRail(t *testing.T, dsn string) (name, inbox string) {
	t.Helper()
	dir := t.TempDir()
	name, inbox = "au-"+strings.ToLower(store.RandomID(6)), filepath.Join(dir, "in")
	for _, d := range []string{inbox, filepath.Join(dir, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	operatorCmd(t, dsn, "rail", "set", "--name", name, "--format", "aba", "--currency", "AUD", "--methods", "au_bank_aud,settlements,transfers",
		"--debtor-name", "PAYD OPERATIONS", "--debtor-account", "123456789", "--debtor-bsb", "062-000", "--originator-id", "301500",
		"--bank-abbrev", "CBA", "--cutoffs", "09:30", "--timezone", "Australia/Sydney", "--outbox", "dir:"+filepath.Join(dir, "out"),
		"--inbox", "dir:"+inbox, "--actor", "ops@example.com")
	return name, inbox
}

// shownFile is a bank file as payd bankfile show --json shows it.
type shownFile struct {
	Name          string `json:"name"`
	FileReference string `json:"file_reference"`
	Count         int    `json:"count"`
	Total         string `json:"total"`
	Transfers     []struct {
		BankReference string `json:"bank_reference"`
		Type          string `json:"type"`
		UUID          string `json:"uuid"`
		Status        string `json:"status"`
	} `json:"transfers"`
}

func showFile(t *testing.T, dsn, name string) shownFile {
	t.Helper()
	var f shownFile
	if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "bankfile", "show", name, "--json")), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// bankReport is the bank's status report on the file, stating its count
// and sum, with the transactions given.
func bankReport(f shownFile, id string, txs ...banktest.Transaction) banktest.Report {
	return banktest.Report{MsgID: id, File: f.Name, FileReference: f.FileReference, Count: f.Count, CtrlSum: f.Total, GroupStatus: "PART", Transactions: txs}
}

// drop has the bank leave content in the inbox under name.
func drop(t *testing.T, inbox, name string, content []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(inbox, name), content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pollInbox has the server read the rails' inboxes now, as its loop does
// every 30 s.
func (p *payd) pollInbox() {
	p.t.Helper()
	if err := p.srv.Files.PollInboxes(context.Background()); err != nil {
		p.t.Fatalf("poll the inboxes: %v", err)
	}
}

// filed reports where the inbox holds name: "" (waiting), "processed",
// "rejected", or "missing".
func filed(inbox, name string) string {
	for _, dir := range []string{"", "processed", "rejected"} {
		if _, err := os.Stat(filepath.Join(inbox, dir, name)); err == nil {
			return dir
		}
	}
	return "missing"
}

func (p *payd) txByUUID(as creds, payoutUUID string) map[string]map[string]any {
	p.t.Helper()
	out := map[string]map[string]any{}
	for _, tx := range p.payoutDetail(as, payoutUUID)["payout_transactions"].([]any) {
		tx := tx.(map[string]any)
		out[str(tx, "uuid")] = tx
	}
	return out
}

func (l *eventLog) count(typ string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// distinct counts the distinct events (by webhook-id) of typ: a delivery
// the killed process made but had not marked is made again by the next
// (at least once) with the same id, while a second event of one outcome
// has an id of its own and is counted.
func (l *eventLog) distinct(typ string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	for _, e := range l.events {
		if e.Type == typ {
			seen[e.ID] = true
		}
	}
	return len(seen)
}

// records counts the distinct records (by uuid) of the events of typ: a
// delivery the killed process made but had not marked is made again by
// the next (at least once), and is still one outcome.
func (l *eventLog) records(typ string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[any]bool{}
	for _, e := range l.events {
		if e.Type != typ {
			continue
		}
		if tx, ok := e.Record["payout_transaction"].(map[string]any); ok {
			seen[tx["uuid"]] = true // a transaction's event names the transaction
		} else {
			seen[e.Record["uuid"]] = true
		}
	}
	return len(seen)
}

func ledgerVerifies(t *testing.T, dsn string) {
	t.Helper()
	if out, err := exec.Command(paydBinary(t), "ledger", "verify", "--db", dsn).CombinedOutput(); err != nil {
		t.Errorf("payd ledger verify: %v\n%s", err, out)
	}
}

// TestBankFileStatusReport: the bank settles a rail's file by a pain.002
// left in the rail's inbox (CONTRACT §17, §25): ACSC done, RJCT failed with
// "<Rsn/Cd> <AddtlInf>" and its funds back in available, PDNG and an
// unlisted transfer still pending, each with its webhook; the same report
// again is filed away and applies nothing; a group RJCT fails every
// transfer of the next file; payd bankfile outcome --file --done confirms
// what is still pending, and the payouts complete; a report that is not
// the file's (its count) goes to rejected/ and changes nothing; the
// metrics count it; the ledger verifies.
func TestBankFileStatusReport(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		railName, inbox := inboxRail(t, dsn)
		p.srv.Files.Forget()
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		hooks := newEventLog(t)
		first := p.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "10", bsbOK, bsbOK, bsbOK, bsbOK), hooks, "Basic b2s="))
		p.runDue(m)
		file := cutFile(t, dsn, railName)
		shown := showFile(t, dsn, file)
		byRef := map[string]string{} // reference → transaction uuid
		var refs []string
		for _, tx := range p.payoutDetail(m, str(first, "uuid"))["payout_transactions"].([]any) {
			tx := tx.(map[string]any)
			byRef[str(tx, "bank_reference")] = str(tx, "uuid")
			refs = append(refs, str(tx, "bank_reference"))
		}
		if shown.Count != 4 || shown.Total != "40.00" || len(refs) != 4 {
			t.Fatalf("the file %+v, references %v", shown, refs)
		}
		report := bankReport(shown, "STS-0001",
			banktest.Transaction{Reference: refs[0], Status: "ACSC"},
			banktest.Transaction{Reference: refs[1], Status: "RJCT", Reason: banktest.Reason{Code: "AC04", Text: "Account closed"}},
			banktest.Transaction{Reference: refs[2], Status: "PDNG"})
		drop(t, inbox, "STS-0001.xml", report.XML())
		p.pollInbox()
		txs := p.txByUUID(m, str(first, "uuid"))
		got := []string{}
		for _, ref := range refs {
			tx := txs[byRef[ref]]
			got = append(got, strings.TrimSpace(str(tx, "status")+" "+str(tx, "failure_reason")))
		}
		if want := []string{"done", "failed AC04 Account closed", "pending", "pending"}; !slices.Equal(got, want) {
			t.Errorf("after the report: %q, want %q", got, want)
		}
		// 1000 - 4 × 10.50 held, 10.50 back for the failed one.
		if b := p.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != 100000-4*1050+1050 || minorUnits(t, b.Outgoing, "AUD") != 2*1050 {
			t.Errorf("balances available %s, outgoing %s; want 968.50 and 21.00", b.Available, b.Outgoing)
		}
		hooks.waitTypeSet(t, "payout.processing", "payout_transaction.done", "payout_transaction.failed")
		if filed(inbox, "STS-0001.xml") != "processed" {
			t.Errorf("the report is in %q, want processed/", filed(inbox, "STS-0001.xml"))
		}

		drop(t, inbox, "STS-0001-again.xml", report.XML())
		p.pollInbox()
		if filed(inbox, "STS-0001-again.xml") != "processed" || hooks.count("payout_transaction.done") != 1 || hooks.count("payout_transaction.failed") != 1 {
			t.Errorf("the same report again: %q, %v; want processed/, nothing applied twice", filed(inbox, "STS-0001-again.xml"), hooks.types())
		}

		second := p.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "5", bsbOK, bsbOK), hooks, "Basic b2s="))
		p.runDue(m)
		file2 := showFile(t, dsn, cutFile(t, dsn, railName))
		group := bankReport(file2, "STS-0002")
		group.GroupStatus, group.GroupReason = "RJCT", banktest.Reason{Code: "FF01", Text: "Invalid file format"}
		drop(t, inbox, "STS-0002.xml", group.XML())
		p.pollInbox()
		d := p.payoutDetail(m, str(second, "uuid"))
		for _, tx := range d["payout_transactions"].([]any) {
			if tx := tx.(map[string]any); str(tx, "status") != "failed" || str(tx, "failure_reason") != "FF01 Invalid file format" {
				t.Errorf("after a group rejection: %v %v", tx["status"], tx["failure_reason"])
			}
		}
		if str(d, "status") != "completed" {
			t.Errorf("the rejected file's payout is %s, want completed", str(d, "status"))
		}

		wrong := bankReport(shown, "STS-0003", banktest.Transaction{Reference: refs[2], Status: "ACSC"})
		wrong.Count = 5
		drop(t, inbox, "STS-0003.xml", wrong.XML())
		p.pollInbox()
		if filed(inbox, "STS-0003.xml") != "rejected" || str(p.txByUUID(m, str(first, "uuid"))[byRef[refs[2]]], "status") != "pending" {
			t.Errorf("a report that is not the file's: in %q, and applied", filed(inbox, "STS-0003.xml"))
		}

		var confirmed struct {
			Done, Already, Left int
		}
		if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "bankfile", "outcome", "--file", file, "--done", "--json")), &confirmed); err != nil ||
			confirmed.Done != 2 || confirmed.Already != 1 || confirmed.Left != 1 {
			t.Errorf("bankfile outcome --file --done: %+v (%v), want 2 done, 1 already, 1 left", confirmed, err)
		}
		if d := p.payoutDetail(m, str(first, "uuid")); str(d, "status") != "completed" || !slices.Equal(sortedStrings(txStatuses(d)), []string{"done", "done", "done", "failed"}) {
			t.Errorf("after the file's debit: %s %v, want completed, three done and the failed one", str(d, "status"), txStatuses(d))
		}
		hooks.waitTypeSet(t, "payout.processing", "payout.processing", "payout_transaction.done", "payout_transaction.done", "payout_transaction.done",
			"payout_transaction.failed", "payout_transaction.failed", "payout_transaction.failed", "payout.completed", "payout.completed")
		metrics := string(p.do(req{method: "GET", path: "/metrics", root: true}).Body)
		if !strings.Contains(metrics, "payd_bankfile_inbox_rejected_total 1\n") || !strings.Contains(metrics, "payd_bankfile_inbox_unknown_references_total 0\n") {
			t.Errorf("metrics:\n%s", grepLines(metrics, "payd_bankfile_inbox"))
		}
		ledgerVerifies(t, dsn)
	})
}

// TestBankFileReturns: a payout transaction, a settlement and an external
// transfer paid through a rail, confirmed by the file's debit, are
// returned by payd bankfile outcome --returned (CONTRACT §25): each is
// returned with the reason as failure_reason, a money_in record of its
// category (payout, settlement, transfer_out), done, names it in balance
// history, amount and fee are back in available, and its event goes to
// its webhook (payout_transaction.returned with the transaction's body,
// settlement.returned, transfer.returned); the payout stays completed. A
// contrary word (done after the return, a return of a pending transfer)
// changes nothing, opens an exception and exits 1.
func TestBankFileReturns(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		railName, _ := inboxRail(t, dsn)
		p.srv.Files.Forget()
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		hooks := newEventLog(t)
		hook := map[string]any{"endpoint_url": hooks.url}
		tr := p.post("/v2/treasury_accounts", m, map[string]any{})
		want(t, tr, 201)
		in := p.post("/v2/transfers", m, map[string]any{"amount": "100", "description": "to treasury", "treasury_account_id": str(tr.JSON(t), "id")}).JSON(t)
		want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in, "uuid"), "status": "completed"}), 200)

		po := p.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "20", bsbOK), hooks, ""))
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank,
			"webhook_notification": hook}}), 200)
		stl := p.post("/v2/settlements", m, map[string]any{"amount": "50"})
		want(t, stl, 201)
		ext := p.post("/v2/transfers", m, map[string]any{"amount": "30", "description": "to my bank", "external_bank_account": audBank, "webhook_notification": hook})
		want(t, ext, 201)
		p.runDue(m)
		file := cutFile(t, dsn, railName)
		operatorCmd(t, dsn, "bankfile", "outcome", "--file", file, "--done")
		before := p.balanceOf(m, "AUD")

		tx := p.payoutDetail(m, str(po, "uuid"))["payout_transactions"].([]any)[0].(map[string]any)
		settlement := p.get("/v2/settlements/detail?uuid="+str(stl.JSON(t), "uuid"), m).JSON(t)
		transfer := ext.JSON(t)
		returned := []struct {
			ref, uuid, category, event string
			back                       int64
		}{
			{str(tx, "bank_reference"), str(tx, "uuid"), "payout", "payout_transaction.returned", 2050},
			{str(settlement, "bank_reference"), str(settlement, "uuid"), "settlement", "settlement.returned", 5100},
			{str(transfer, "bank_reference"), str(transfer, "uuid"), "transfer_out", "transfer.returned", 3000},
		}
		for _, r := range returned {
			operatorCmd(t, dsn, "bankfile", "outcome", "--reference", r.ref, "--returned", "MS03 Not specified reason", "--actor", "ops@example.com")
		}
		tx = p.payoutDetail(m, str(po, "uuid"))["payout_transactions"].([]any)[0].(map[string]any)
		settlement = p.get("/v2/settlements/detail?uuid="+str(settlement, "uuid"), m).JSON(t)
		transfer = p.get("/v2/transfers/detail?uuid="+str(transfer, "uuid"), m).JSON(t)
		for what, rec := range map[string]map[string]any{"transaction": tx, "settlement": settlement, "transfer": transfer} {
			if str(rec, "status") != "returned" || str(rec, "failure_reason") != "MS03 Not specified reason" {
				t.Errorf("the %s after its return: %v %v", what, rec["status"], rec["failure_reason"])
			}
		}
		if d := p.payoutDetail(m, str(po, "uuid")); str(d, "status") != "completed" || str(d, "total_amount") != "20.00" {
			t.Errorf("the payout after its transaction's return: %s %s, want completed 20.00", str(d, "status"), str(d, "total_amount"))
		}
		after := p.balanceOf(m, "AUD")
		if back := minorUnits(t, after.Available, "AUD") - minorUnits(t, before.Available, "AUD"); back != 2050+5100 {
			t.Errorf("available grew by %d, want the payout's 20.50 and the settlement's 51.00", back)
		}
		history := p.history(m, "size=100")
		treasuryHistory := p.history(m, "size=100&account="+str(tr.JSON(t), "id"))
		for _, r := range returned {
			n := 0
			for _, rec := range slices.Concat(history.Records, treasuryHistory.Records) {
				if rec.ReferenceID == r.uuid && rec.RequestType == "money_in" && rec.TransactionType == r.category && rec.Status == "done" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d money_in %s records naming %s, want 1", n, r.category, r.uuid)
			}
		}
		var events []string
		for _, r := range returned {
			events = append(events, r.event)
		}
		waitUntil(t, "the returns' events", 10*time.Second, func() bool {
			for _, e := range events {
				if hooks.count(e) != 1 {
					return false
				}
			}
			return true
		})

		out, code, stderr := tryOperatorCmd(t, dsn, "bankfile", "outcome", "--reference", returned[0].ref, "--done")
		if code != 1 || !strings.Contains(stderr, "state mismatch: payout_transaction "+returned[0].uuid) {
			t.Errorf("done after the return: exit %d, %s%s", code, out, stderr)
		}
		pending := p.createPayout(m, payoutBody("AUD", "au_bank_aud", "10", bsbOK))
		p.runDue(m)
		ref := str(p.payoutDetail(m, str(pending, "uuid"))["payout_transactions"].([]any)[0].(map[string]any), "bank_reference")
		if _, code, stderr := tryOperatorCmd(t, dsn, "bankfile", "outcome", "--reference", ref, "--returned", "MS03"); code != 1 || !strings.Contains(stderr, "is pending") {
			t.Errorf("a return of a pending transfer: exit %d, %s", code, stderr)
		}
		var open int
		if err := p.srv.DB.Read().QueryRow(`SELECT count(*) FROM bank_exceptions WHERE kind = 'state_mismatch' AND status = 'open' AND source = $1`, railName).Scan(&open); err != nil || open != 2 {
			t.Errorf("%d open state_mismatch exceptions (%v), want 2", open, err)
		}
		if d := p.payoutDetail(m, str(pending, "uuid")); !slices.Equal(txStatuses(d), []string{"pending"}) {
			t.Errorf("the pending transfer after a contrary return: %v", txStatuses(d))
		}
		ledgerVerifies(t, dsn)
	})
}

// TestBankFileInboxCrash: payd serve killed with SIGKILL once it has
// applied the first entry of a status report (PAYD_TEST_BANKFILE_KILL=
// applying) leaves the report in the inbox, applying; the restart applies
// the rest and each transfer's status once: every transfer decided, a
// webhook for each (at least once), the report in processed/, the ledger
// sound.
func TestBankFileInboxCrash(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		railName, inbox := inboxRail(t, dsn)
		proc := startProcess(t, dsn)
		m := demoApp(t, proc, "AUD")
		client := &payd{t: t, base: proc.base}
		client.simulateDeposit(m, m.AccountNumber, "100000")
		client.runDue(m)
		start := minorUnits(t, client.balanceOf(m, "AUD").Available, "AUD")
		hooks := newEventLog(t)
		params := make([]map[string]any, 20)
		for i := range params {
			params[i] = bsbOK
		}
		created := client.createPayout(m, withHook(payoutBody("AUD", "au_bank_aud", "3", params...), hooks, ""))
		client.runDue(m)
		var refs []string
		for _, tx := range client.payoutDetail(m, str(created, "uuid"))["payout_transactions"].([]any) {
			refs = append(refs, str(tx.(map[string]any), "bank_reference"))
		}
		proc.cmd.Process.Signal(syscall.SIGKILL)
		proc.cmd.Wait()
		shown := showFile(t, dsn, cutFile(t, dsn, railName))
		var txs []banktest.Transaction
		for i, ref := range refs {
			status, reason := "ACSC", banktest.Reason{}
			if i%2 == 1 {
				status, reason = "RJCT", banktest.Reason{Code: "AC04", Text: "Account closed"}
			}
			txs = append(txs, banktest.Transaction{Reference: ref, Status: status, Reason: reason})
		}
		drop(t, inbox, "STS-CRASH.xml", bankReport(shown, "STS-CRASH", txs...).XML())

		killLog(t, killedAt(t, "applying", "serve", "--addr", "127.0.0.1:0", "--db", dsn))
		if where := filed(inbox, "STS-CRASH.xml"); where != "" {
			t.Fatalf("after the crash the report is in %q, want still in the inbox", where)
		}
		// A delivery the killed process left cut, or one that failed
		// beside the other tests, is tried again within a second, not
		// after the default schedule's minutes (the schedule is not what
		// this test is about).
		proc = startProcess(t, dsn, "--webhook-retry-schedule", "200ms,500ms,1s,1s,1s,1s,1s,1s")
		client = &payd{t: t, base: proc.base}
		waitUntil(t, "the report applied after the restart", 60*time.Second, func() bool { return filed(inbox, "STS-CRASH.xml") == "processed" })
		d := client.payoutDetail(m, str(created, "uuid"))
		counts := map[string]int{}
		for _, s := range txStatuses(d) {
			counts[s]++
		}
		if counts["done"] != 10 || counts["failed"] != 10 || str(d, "status") != "completed" {
			t.Errorf("after the restart: %s %v, want completed, 10 done and 10 failed", str(d, "status"), counts)
		}
		// Twenty-one deliveries from a process that has just started, beside
		// the other tests: a minute, as the report's own wait.
		waitUntil(t, "one webhook per transaction", 60*time.Second, func() bool {
			return hooks.records("payout_transaction.done") == 10 && hooks.records("payout_transaction.failed") == 10 && hooks.records("payout.completed") == 1
		})
		if b := client.balanceOf(m, "AUD"); minorUnits(t, b.Available, "AUD") != start-10*350 || minorUnits(t, b.Outgoing, "AUD") != 0 {
			t.Errorf("balances available %s, outgoing %s; want 35.00 (the 10 paid transfers and their fees) less than before and nothing outgoing", b.Available, b.Outgoing)
		}
		ledgerVerifies(t, dsn)
	})
}
