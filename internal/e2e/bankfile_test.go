package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"payd/internal/bankchannel/sftptest"
	"payd/internal/iso20022"
	"payd/internal/payfile/aba"
	"payd/internal/payfile/zengin"
	"payd/internal/rail/bankfile/banktest"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// operatorCmd runs `payd WORD WORD --db dsn ARGS…` (the built binary, a
// process of its own beside the server under test) and returns its
// standard output, failing the test unless it exits 0.
func operatorCmd(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	out, code, stderr := tryOperatorCmd(t, dsn, args...)
	if code != 0 {
		t.Fatalf("payd %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
	}
	return out
}

func tryOperatorCmd(t *testing.T, dsn string, args ...string) (stdout string, code int, stderr string) {
	t.Helper()
	full := slices.Concat(args[:2], []string{"--db", dsn}, args[2:])
	cmd := exec.Command(paydBinary(t), full...)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if exit, ok := err.(*exec.ExitError); ok {
		return string(out), exit.ExitCode(), errBuf.String()
	}
	if err != nil {
		t.Fatalf("payd %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0, errBuf.String()
}

// testRails are the tests' bank-file rails: an aba rail of AUD bank payouts,
// settlements and external transfers, and a pain001 rail of AUD PayIDs,
// each with a dir: outbox and inbox of its own.
type testRails struct {
	aba, npp       string
	abaOut, nppOut string
}

// setRails sets the test rails through payd rail set, with names no other
// test uses (their locks are shared by the tests' schemas), and has the
// server see them at once rather than within its cache's second.
func setRails(t *testing.T, p *payd, dsn string) testRails {
	t.Helper()
	dir := t.TempDir()
	suffix := strings.ToLower(store.RandomID(6))
	r := testRails{aba: "au-" + suffix, npp: "npp-" + suffix, abaOut: filepath.Join(dir, "aba-out"), nppOut: filepath.Join(dir, "npp-out")}
	for _, d := range []string{r.abaOut, r.nppOut, filepath.Join(dir, "aba-in"), filepath.Join(dir, "npp-in")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	common := []string{"--currency", "AUD", "--debtor-name", "PAYD OPERATIONS", "--debtor-account", "123456789", "--debtor-bsb", "062-000",
		"--cutoffs", "09:30,15:00", "--timezone", "Australia/Sydney", "--actor", "ops@example.com"}
	operatorCmd(t, dsn, slices.Concat([]string{"rail", "set", "--name", r.aba, "--format", "aba", "--methods", "au_bank_aud,settlements,transfers",
		"--originator-id", "301500", "--bank-abbrev", "CBA", "--outbox", "dir:" + r.abaOut, "--inbox", "dir:" + filepath.Join(dir, "aba-in")}, common)...)
	operatorCmd(t, dsn, slices.Concat([]string{"rail", "set", "--name", r.npp, "--format", "pain001", "--methods", "au_payid_npp_aud",
		"--originator-id", "PAYD", "--outbox", "dir:" + r.nppOut, "--inbox", "dir:" + filepath.Join(dir, "npp-in")}, common)...)
	p.srv.Files.Forget()
	return r
}

var bankReference = regexp.MustCompile(`^[A-Z0-9]{16}$`)

// TestBankFileRail: with rails set (here on a sandbox, which then pays
// through the files exactly as production does), v2 bank payouts, a v1 BSB
// payout, a settlement to a bank account and an external transfer go into
// one ABA file at a cut-off (payd bankfile cut), and a PayID payout into a
// pain.001 file; each record shows its bank reference, each file reads back
// to exactly those transfers, is delivered to its dir: outbox byte for byte,
// and every operator command that changed something is in the audit log.
// The sandbox network answers none of the rails' transfers, and
// /v2/transfers/simulate refuses one the rail holds.
func TestBankFileRail(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		rails := setRails(t, p, dsn)
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "10000")
		tr := p.post("/v2/treasury_accounts", m, map[string]any{})
		want(t, tr, 201)
		in := p.post("/v2/transfers", m, map[string]any{"amount": "100", "description": "to treasury", "treasury_account_id": str(tr.JSON(t), "id")}).JSON(t)
		if in["bank_reference"] != nil {
			t.Errorf("an internal transfer has bank_reference %v, want null", in["bank_reference"])
		}
		want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in, "uuid"), "status": "completed"}), 200)

		second := map[string]any{"bsb": "633000", "account_number": "87654321", "account_name": "John O'Brien"}
		v2 := p.createPayout(m, payoutBody("AUD", "au_bank_aud", "12.50", bsbOK, second))
		for _, tx := range v2["payout_transactions"].([]any) {
			if ref := tx.(map[string]any)["bank_reference"]; ref != nil {
				t.Errorf("a payout transaction not yet handed to a rail has bank_reference %v, want null", ref)
			}
		}
		npp := p.createPayout(m, payoutBody("AUD", "au_payid_npp_aud", "7", payIDOK))
		v1 := p.post("/v1/payouts", m, v1Body("v1-bsb", v1Tx("Bob Smith", "20", v1Account)))
		want(t, v1, 201)
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)
		stl := p.post("/v2/settlements", m, map[string]any{"amount": "50"})
		want(t, stl, 201)
		ext := p.post("/v2/transfers", m, map[string]any{"amount": "30", "description": "to my bank", "external_bank_account": audBank})
		want(t, ext, 201)
		p.runDue(m)
		// Handed to the rail, the transfer is the bank's to end: a simulated
		// failure would give back money the file pays.
		if r := p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(ext.JSON(t), "uuid"), "status": "failed"}); r.Status != 409 ||
			!strings.Contains(string(r.Body), "bank-file rail") {
			t.Errorf("simulating a transfer handed to the rail: %d %s, want 409 INVALID_STATE", r.Status, r.Body)
		}

		// Every record shows its bank reference: the payouts' from the
		// hand-over, the settlement's and the transfer's from creation.
		wantRefs := map[string]string{} // reference → what the file pays under it, as the file names it
		paid := func(ref, kind, uuid string, amountMinor int, name string) {
			wantRefs[ref] = fmt.Sprintf("%s %s %d %s", kind, uuid, amountMinor, strings.ToUpper(name))
		}
		for _, tx := range p.payoutDetail(m, str(v2, "uuid"))["payout_transactions"].([]any) {
			tx := tx.(map[string]any)
			paid(str(tx, "bank_reference"), "payout_transaction", str(tx, "uuid"), 1250, str(tx["payout_method_params"].(map[string]any), "account_name"))
		}
		v1Detail := p.get(fmt.Sprintf("/v1/payouts/detail?id=%v", v1.JSON(t)["id"]), m).JSON(t)
		v1Tx := v1Detail["payout_transactions"].([]any)[0].(map[string]any)
		paid(str(v1Tx, "bank_reference"), "payout_transaction", str(v1Tx, "uuid"), 2000, "Bob Smith")
		stlRecord := p.get("/v2/settlements/detail?uuid="+str(stl.JSON(t), "uuid"), m).JSON(t)
		paid(str(stlRecord, "bank_reference"), "settlement", str(stlRecord, "uuid"), 5000, "Shop Pty Ltd")
		extRecord := ext.JSON(t)
		paid(str(extRecord, "bank_reference"), "transfer", str(extRecord, "uuid"), 3000, "Shop Pty Ltd")
		if got := p.get("/v2/transfers/detail?uuid="+str(extRecord, "uuid"), m).JSON(t)["bank_reference"]; got != extRecord["bank_reference"] {
			t.Errorf("the transfer's detail shows bank_reference %v, its creation %v", got, extRecord["bank_reference"])
		}
		nppTx := p.payoutDetail(m, str(npp, "uuid"))["payout_transactions"].([]any)[0].(map[string]any)
		for ref := range wantRefs {
			if !bankReference.MatchString(ref) {
				t.Errorf("bank reference %q is not 16 [A-Z0-9] (of %s)", ref, wantRefs[ref])
			}
		}
		if len(wantRefs) != 5 || !bankReference.MatchString(str(nppTx, "bank_reference")) {
			t.Fatalf("bank references %v and %v, want five distinct ones and the PayID's", wantRefs, nppTx["bank_reference"])
		}

		var listed struct {
			Records []struct {
				Name    string `json:"name"`
				Waiting int    `json:"waiting"`
			} `json:"records"`
		}
		if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "rail", "list", "--json")), &listed); err != nil {
			t.Fatal(err)
		}
		waiting := map[string]int{}
		for _, r := range listed.Records {
			waiting[r.Name] = r.Waiting
		}
		if waiting[rails.aba] != 5 || waiting[rails.npp] != 1 {
			t.Errorf("waiting %v, want 5 on %s and 1 on %s", waiting, rails.aba, rails.npp)
		}

		file := cutFile(t, dsn, rails.aba)
		content := []byte(operatorCmd(t, dsn, "bankfile", "get", file))
		read, err := aba.Read(content)
		if err != nil {
			t.Fatalf("the ABA file does not read back: %v", err)
		}
		var shown struct {
			Name      string `json:"name"`
			Count     int    `json:"count"`
			Status    string `json:"status"`
			Transfers []struct {
				BankReference string `json:"bank_reference"`
				Type          string `json:"type"`
				MerchantID    string `json:"merchant_id"`
				UUID          string `json:"uuid"`
				Amount        string `json:"amount"`
				Status        string `json:"status"`
			} `json:"transfers"`
		}
		if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "bankfile", "show", file, "--json")), &shown); err != nil {
			t.Fatal(err)
		}
		types := map[string]string{}
		for _, s := range shown.Transfers {
			types[s.BankReference] = s.Type + " " + s.UUID
			if s.MerchantID != m.MerchantID {
				t.Errorf("transfer %s of merchant %s, want %s", s.BankReference, s.MerchantID, m.MerchantID)
			}
		}
		got := map[string]string{}
		for _, c := range read.Credits {
			got[c.BankReference] = fmt.Sprintf("%s %d %s", types[c.BankReference], c.AmountMinor, c.Name)
		}
		if !equalMaps(got, wantRefs) || shown.Count != 5 {
			t.Errorf("the ABA file holds\n%v\nwant exactly\n%v", got, wantRefs)
		}

		// Delivered to the outbox by the server's next round, byte for byte.
		waitUntil(t, "the ABA file delivered", 20*time.Second, func() bool {
			delivered, err := os.ReadFile(filepath.Join(rails.abaOut, file))
			return err == nil && string(delivered) == string(content) && fileStatus(t, dsn, file) == "delivered"
		})
		nppFile := cutFile(t, dsn, rails.npp)
		pain, err := iso20022.ReadPain001([]byte(operatorCmd(t, dsn, "bankfile", "get", nppFile)))
		if err != nil || len(pain.Credits) != 1 || pain.Credits[0].BankReference != str(nppTx, "bank_reference") || pain.Credits[0].PayID != "jane@example.com" ||
			pain.Credits[0].AmountMinor != 700 {
			t.Errorf("the pain.001 file holds %+v (%v), want the one PayID payout", pain.Credits, err)
		}
		if got := cutFile(t, dsn, rails.aba); got != "" {
			t.Errorf("a cut-off with nothing waiting made %s", got)
		}

		// The sandbox network answers none of them: they wait for the bank.
		p.advance(m, 60)
		for _, uuid := range []string{str(v2, "uuid"), str(npp, "uuid")} {
			if d := p.payoutDetail(m, uuid); str(d, "status") != "processing" {
				t.Errorf("payout %s is %s, want processing until the bank answers", uuid, str(d, "status"))
			}
		}

		var audit struct {
			Records []struct {
				Actor   string   `json:"actor"`
				Command string   `json:"command"`
				Args    []string `json:"args"`
				Outcome string   `json:"outcome"`
			} `json:"records"`
		}
		if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "audit", "list", "--json")), &audit); err != nil {
			t.Fatal(err)
		}
		var commands []string
		for _, e := range audit.Records {
			commands = append(commands, e.Command+": "+e.Outcome)
			if slices.Contains(e.Args, dsn) || slices.Contains(e.Args, "--db") {
				t.Errorf("the audit log keeps the database: %v", e.Args)
			}
		}
		wantCommands := []string{"bankfile cut: no file: nothing was waiting", "bankfile cut: file " + nppFile, "bankfile cut: file " + file,
			"rail set: rail " + rails.npp + " set", "rail set: rail " + rails.aba + " set"}
		if !slices.Equal(commands, wantCommands) || audit.Records[0].Actor == "" || audit.Records[len(audit.Records)-1].Actor != "ops@example.com" {
			t.Errorf("audit log %v, want %v", commands, wantCommands)
		}
		metrics := string(p.do(req{method: "GET", path: "/metrics", root: true}).Body)
		if !strings.Contains(metrics, "payd_bankfile_transfers_waiting 0") || strings.Contains(metrics, "payd_bankfile_last_delivery_timestamp_seconds 0\n") ||
			!strings.Contains(metrics, "payd_bankfile_last_delivery_timestamp_seconds") {
			t.Errorf("metrics lack the bank-file gauges as they stand:\n%s", grepLines(metrics, "payd_bankfile"))
		}
	})
}

// cutFile runs payd bankfile cut on a rail and returns the file it made, or
// "" for none.
func cutFile(t *testing.T, dsn, rail string) string {
	t.Helper()
	var cut struct {
		File *string `json:"file"`
	}
	if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "bankfile", "cut", "--rail", rail, "--json")), &cut); err != nil {
		t.Fatal(err)
	}
	if cut.File == nil {
		return ""
	}
	return *cut.File
}

// fileStatus is a bank file's status as payd bankfile list shows it.
func fileStatus(t *testing.T, dsn, name string) string {
	t.Helper()
	var list struct {
		Records []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "bankfile", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Records {
		if r.Name == name {
			return r.Status
		}
	}
	return ""
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func grepLines(s, word string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, word) {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return strings.Join(out, "\n")
}

// TestBankFileRailSFTP: a rail's files go to the bank's SFTP host (a real
// OpenSSH server on loopback, key authentication, its host key pinned):
// delivered whole under their name; the bank's status report is fetched
// from the SFTP inbox, applied and moved to its processed/; with the server down the file stays
// written with the error and is delivered once when it is back; a rail
// whose known_hosts pins another key never delivers, and says why.
func TestBankFileRailSFTP(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		sshd := sftptest.Start(t)
		outbox, inbox := sshd.Mkdir("outbox"), sshd.Mkdir("inbox")
		p := start(t, dsn)
		name := "au-" + strings.ToLower(store.RandomID(6))
		set := func(name, outbox, inbox, knownHosts string) {
			operatorCmd(t, dsn, "rail", "set", "--name", name, "--format", "aba", "--currency", "AUD", "--methods", "au_bank_aud",
				"--debtor-name", "PAYD OPERATIONS", "--debtor-account", "123456789", "--debtor-bsb", "062-000", "--originator-id", "301500",
				"--bank-abbrev", "CBA", "--cutoffs", "09:30", "--timezone", "Australia/Sydney",
				"--outbox", sshd.URL(outbox), "--inbox", sshd.URL(inbox), "--sftp-key", sshd.KeyFile, "--sftp-known-hosts", knownHosts)
			p.srv.Files.Forget()
		}
		set(name, outbox, inbox, sshd.KnownHostsFile)
		m := p.merchant("AUD")["AUD"]
		p.fund(m, "1000")
		pay := func() string {
			uuid := str(p.createPayout(m, payoutBody("AUD", "au_bank_aud", "10", bsbOK)), "uuid")
			p.runDue(m)
			return uuid
		}
		delivered := func(file string) bool {
			got, err := os.ReadFile(filepath.Join(outbox, file))
			return err == nil && string(got) == operatorCmd(t, dsn, "bankfile", "get", file) && fileStatus(t, dsn, file) == "delivered"
		}

		paid := pay()
		first := cutFile(t, dsn, name)
		waitUntil(t, first+" delivered over SFTP", 20*time.Second, func() bool { return delivered(first) })

		// The bank's status report, left in the SFTP inbox, is fetched,
		// applied and filed away in processed/ there.
		tx := p.payoutDetail(m, paid)["payout_transactions"].([]any)[0].(map[string]any)
		drop(t, inbox, "STS-SFTP.xml", bankReport(showFile(t, dsn, first), "STS-SFTP", banktest.Transaction{Reference: str(tx, "bank_reference"), Status: "ACSC"}).XML())
		p.pollInbox()
		if d := p.payoutDetail(m, paid); str(d, "status") != "completed" || filed(inbox, "STS-SFTP.xml") != "processed" {
			t.Errorf("after the SFTP inbox's report: the payout %s, the report in %q; want completed and processed/", str(d, "status"), filed(inbox, "STS-SFTP.xml"))
		}

		sshd.Stop()
		pay()
		second := cutFile(t, dsn, name)
		waitUntil(t, "a failed attempt recorded", 20*time.Second, func() bool {
			var attempts int
			var lastError string
			err := p.srv.DB.Read().QueryRow(`SELECT attempts, last_error FROM bank_files WHERE name = $1`, second).Scan(&attempts, &lastError)
			return err == nil && attempts > 0 && lastError != ""
		})
		if fileStatus(t, dsn, second) != "written" {
			t.Errorf("%s with the server down is %s, want written", second, fileStatus(t, dsn, second))
		}
		sshd.Restart()
		if _, err := p.srv.Files.Deliver(ctx, second); err != nil {
			t.Errorf("the retry once the server is back: %v", err)
		}
		waitUntil(t, second+" delivered once the server is back", 20*time.Second, func() bool { return delivered(second) })

		other := "au-" + strings.ToLower(store.RandomID(6))
		operatorCmd(t, dsn, "rail", "unset", "--name", name)
		set(other, sshd.Mkdir("outbox2"), sshd.Mkdir("inbox2"), sshd.KnownHostsWithOtherKey())
		pay()
		third := cutFile(t, dsn, other)
		// The serving loop may be trying it too (then Deliver leaves it to
		// that attempt): whichever tries, the refusal is recorded.
		if _, err := p.srv.Files.Deliver(ctx, third); err != nil && !strings.Contains(err.Error(), "host key") {
			t.Errorf("a delivery to a server whose host key is not the pinned one: %v, want refused for its host key", err)
		}
		waitUntil(t, "the host key refusal recorded", 20*time.Second, func() bool {
			var lastError string
			err := p.srv.DB.Read().QueryRow(`SELECT last_error FROM bank_files WHERE name = $1`, third).Scan(&lastError)
			return err == nil && strings.Contains(lastError, "host key")
		})
		if fileStatus(t, dsn, third) != "written" {
			t.Errorf("the file refused for its host key is %s, want still written", fileStatus(t, dsn, third))
		}
		entries, _ := os.ReadDir(outbox)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := sortedStrings([]string{first, second}); !slices.Equal(sortedStrings(names), want) {
			t.Errorf("the SFTP outbox holds %v, want only %v (no temporary left)", names, want)
		}
	})
}

// TestBankFileZenginRail: with a zengin rail of JPY bank payouts, a v2
// jp_bank_jpy payout goes into a 総合振込 file at the cut-off under a
// ten-digit bank reference, its full-width katakana account name made
// half-width and the bank's kana name from the Zengin directory, and the
// file reads back to exactly that transfer; a name in kanji, which has no
// half-width form, is refused at creation with 422 naming the field, and
// nothing is held for it.
func TestBankFileZenginRail(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		dir := t.TempDir()
		name := "jp-" + strings.ToLower(store.RandomID(6))
		operatorCmd(t, dsn, "rail", "set", "--name", name, "--format", "zengin", "--currency", "JPY", "--methods", "jp_bank_jpy",
			"--debtor-name", "ﾍﾟｲﾄﾞ", "--debtor-account", "1234567", "--debtor-bank-code", "0001", "--debtor-branch-code", "001",
			"--originator-id", "1234567890", "--cutoffs", "10:00", "--timezone", "Asia/Tokyo",
			"--outbox", "dir:"+filepath.Join(dir, "out"), "--inbox", "dir:"+filepath.Join(dir, "in"))
		p.srv.Files.Forget()
		m := p.merchant("JPY")["JPY"]
		p.fund(m, "100000")
		before := p.balanceOf(m, "JPY")

		kanji := map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "7654321", "account_name": "山田太郎", "account_type": "ordinary"}
		r := p.post("/v2/payouts", m, payoutBody("JPY", "jp_bank_jpy", "10000", kanji))
		want(t, r, 422)
		if !strings.Contains(string(r.Body), `payout_transaction_details[0].payout_method_params.account_name`) {
			t.Errorf("a kanji account name: %s, want the field named", r.Body)
		}
		if after := p.balanceOf(m, "JPY"); after.Available != before.Available {
			t.Errorf("available %s after a refused payout, was %s", after.Available, before.Available)
		}

		kana := map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "7654321", "account_name": "ヤマダ タロウ", "account_type": "ordinary"}
		po := p.createPayout(m, payoutBody("JPY", "jp_bank_jpy", "10000", kana))
		p.runDue(m)
		tx := p.payoutDetail(m, str(po, "uuid"))["payout_transactions"].([]any)[0].(map[string]any)
		ref := str(tx, "bank_reference")
		if !regexp.MustCompile(`^[0-9]{10}$`).MatchString(ref) || str(tx, "status") != "pending" {
			t.Fatalf("the transaction handed to the zengin rail: %s %q, want pending with a ten-digit reference", str(tx, "status"), ref)
		}
		file := cutFile(t, dsn, name)
		if !strings.HasSuffix(file, ".txt") {
			t.Errorf("the zengin file is named %q", file)
		}
		content := []byte(operatorCmd(t, dsn, "bankfile", "get", file))
		read, err := zengin.Read(content)
		if err != nil {
			t.Fatalf("the file does not read back: %v", err)
		}
		var got []string
		for _, c := range read.Credits {
			got = append(got, fmt.Sprintf("%s %d %s-%s %s %s %s", c.BankReference, c.AmountMinor, c.BankCode, c.BranchCode, c.BankNameKana, c.Account, c.Name))
		}
		if want := []string{ref + " 10000 0001-001 ﾐｽﾞﾎ 7654321 ﾔﾏﾀﾞ ﾀﾛｳ"}; !slices.Equal(got, want) || read.Total() != 10000 {
			t.Errorf("the file holds %q (total %d), want %q", got, read.Total(), want)
		}
	})
}

// TestBankFileRailRefusesNames: with an aba rail serving settlements and
// external transfers, a settlement beneficiary or an external transfer's
// bank account whose name holds a letter outside the BECS set is refused
// when it is given (422 VALIDATION_FAILED naming
// external_bank_account.account_name, CONTRACT §17, §25), and nothing
// changes: the config keeps its beneficiary and the treasury account's
// balance history has no new record. The same names pass for JPY, which no rail
// serves.
func TestBankFileRailRefusesNames(t *testing.T) {
	t.Parallel()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		p := start(t, dsn)
		setRails(t, p, dsn)
		ms := p.merchant("AUD", "JPY")
		m := ms["AUD"]
		p.fund(m, "1000")
		tr := p.post("/v2/treasury_accounts", m, map[string]any{})
		want(t, tr, 201)
		in := p.post("/v2/transfers", m, map[string]any{"amount": "100", "description": "to treasury", "treasury_account_id": str(tr.JSON(t), "id")}).JSON(t)
		want(t, p.post("/v2/transfers/simulate", m, map[string]any{"uuid": str(in, "uuid"), "status": "completed"}), 200)
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": audBank}}), 200)

		zoe := map[string]any{"bank_name": "Westpac", "bsb": "062000", "account_number": "12345678", "account_name": "Zoë Ltd"}
		const field = `"external_bank_account.account_name"`
		r := p.do(req{method: "PUT", path: "/v2/settlements/config", as: &m, body: map[string]any{"frequency": "on_demand", "external_bank_account": zoe}})
		want(t, r, 422)
		if !strings.Contains(string(r.Body), field) || !strings.Contains(string(r.Body), "BECS") {
			t.Errorf("a beneficiary the ABA file cannot name: %s", r.Body)
		}
		if cfg := p.get("/v2/settlements/config", m).JSON(t); str(cfg["external_bank_account"].(map[string]any), "account_name") != "Shop Pty Ltd" {
			t.Errorf("the config after a refused change: %v", cfg)
		}
		treasury := "size=100&account=" + str(tr.JSON(t), "id")
		before := len(p.history(m, treasury).Records)
		r = p.post("/v2/transfers", m, map[string]any{"amount": "30", "description": "to my bank", "external_bank_account": zoe})
		want(t, r, 422)
		if !strings.Contains(string(r.Body), field) {
			t.Errorf("an external transfer the ABA file cannot name: %s", r.Body)
		}
		if after := len(p.history(m, treasury).Records); after != before {
			t.Errorf("%d treasury balance records after a refused transfer, were %d", after, before)
		}

		j := ms["JPY"]
		jpBank := map[string]any{"bank_code": "0001", "branch_code": "001", "account_number": "1234567", "account_name": "Zoë Ltd", "account_type": "ordinary"}
		want(t, p.do(req{method: "PUT", path: "/v2/settlements/config", as: &j, body: map[string]any{"frequency": "on_demand", "external_bank_account": jpBank}}), 200)
	})
}
