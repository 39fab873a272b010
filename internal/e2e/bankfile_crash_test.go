package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"payd/internal/payfile/aba"
	"payd/internal/store"
	"payd/internal/store/storetest"
)

// killEnv has a payd process kill itself with SIGKILL at a step of a
// cut-off or a delivery (bankfile.Deps.KillAt).
const killEnv = "PAYD_TEST_BANKFILE_KILL"

// killedAt runs payd with args and killEnv=step and waits for it to die of
// its SIGKILL at that step; it returns what it wrote to standard error.
func killedAt(t *testing.T, step string, args ...string) string {
	t.Helper()
	cmd := exec.Command(paydBinary(t), args...)
	cmd.Env = append(os.Environ(), killEnv+"="+step)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("payd %s with %s=%s ended with %v, want its SIGKILL at the step; it said:\n%s", strings.Join(args, " "), killEnv, step, err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("payd %s never reached the step %s; it said:\n%s", strings.Join(args, " "), step, stderr.String())
	}
	return stderr.String()
}

// killLog is the kill point's log line: the file and its SHA-256.
func killLog(t *testing.T, stderr string) (file, sum string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		var rec struct {
			Step, File, SHA256 string
		}
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Step != "" {
			return rec.File, rec.SHA256
		}
	}
	t.Fatalf("no kill point in the log:\n%s", stderr)
	return "", ""
}

// railState is what a test checks of the rail after each crash: its
// files by name with their status and count, and what still waits.
func railState(t *testing.T, dsn, rail string) (files map[string]string, waiting int) {
	t.Helper()
	var list struct {
		Records []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Count  int    `json:"count"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "bankfile", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	files = map[string]string{}
	for _, f := range list.Records {
		files[f.Name] = f.Status
	}
	var rails struct {
		Records []struct {
			Name    string `json:"name"`
			Waiting int    `json:"waiting"`
		} `json:"records"`
	}
	if err := json.Unmarshal([]byte(operatorCmd(t, dsn, "rail", "list", "--json")), &rails); err != nil {
		t.Fatal(err)
	}
	for _, r := range rails.Records {
		if r.Name == rail {
			waiting = r.Waiting
		}
	}
	return files, waiting
}

// TestBankFileCrashes: payd is killed with SIGKILL at each step of a
// cut-off and of a delivery (bankfile.Step, through PAYD_TEST_BANKFILE_KILL):
// after the file's bytes are built (nothing is kept, and the cut-off made
// again writes the same bytes under the same name), after its transaction
// commits (the file is kept, written, and the next serve delivers it), as a
// delivery starts and after the outbox holds the file (the restart puts it
// again, the same bytes, once). In the end every transfer is in exactly one
// file, each file in the outbox once, nothing else there, and the ledger
// verifies.
func TestBankFileCrashes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts payd processes")
	}
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		dir := t.TempDir()
		outbox, inbox := filepath.Join(dir, "out"), filepath.Join(dir, "in")
		for _, d := range []string{outbox, inbox} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		rail := "au-" + strings.ToLower(store.RandomID(6))
		operatorCmd(t, dsn, "rail", "set", "--name", rail, "--format", "aba", "--currency", "AUD", "--methods", "au_bank_aud",
			"--debtor-name", "PAYD OPERATIONS", "--debtor-account", "123456789", "--debtor-bsb", "062-000", "--originator-id", "301500",
			"--bank-abbrev", "CBA", "--cutoffs", "09:30", "--timezone", "Australia/Sydney", "--outbox", "dir:"+outbox, "--inbox", "dir:"+inbox)

		proc := startProcess(t, dsn)
		m := demoApp(t, proc, "AUD")
		client := &payd{t: t, base: proc.base}
		client.simulateDeposit(m, m.AccountNumber, "100000")
		client.runDue(m)
		batch := func(c *payd, n int) []string {
			t.Helper()
			params := make([]map[string]any, n)
			for i := range params {
				params[i] = bsbOK
			}
			created := c.createPayout(m, payoutBody("AUD", "au_bank_aud", "3", params...))
			c.runDue(m)
			var refs []string
			for _, tx := range c.payoutDetail(m, str(created, "uuid"))["payout_transactions"].([]any) {
				refs = append(refs, str(tx.(map[string]any), "bank_reference"))
			}
			return refs
		}
		stop := func(p *process) {
			p.cmd.Process.Signal(syscall.SIGKILL)
			p.cmd.Wait()
		}
		first := batch(client, 20)
		stop(proc)

		// Killed after the file is built: nothing of it is kept.
		built, builtSum := killLog(t, killedAt(t, "built", "bankfile", "cut", "--db", dsn, "--rail", rail, "--json"))
		if files, waiting := railState(t, dsn, rail); len(files) != 0 || waiting != 20 {
			t.Fatalf("after a crash once %s was built: files %v, %d waiting; want none and 20", built, files, waiting)
		}
		f1 := cutFile(t, dsn, rail)
		content1 := []byte(operatorCmd(t, dsn, "bankfile", "get", f1))
		if sum := sha256.Sum256(content1); f1 != built || hex.EncodeToString(sum[:]) != builtSum {
			t.Errorf("made again: %s (sha256 %x), want %s (sha256 %s) as built before the crash", f1, sum, built, builtSum)
		}

		// Killed as the delivery starts, then as it ends: the next serve puts it, once.
		killedAt(t, "uploading", "serve", "--addr", "127.0.0.1:0", "--db", dsn)
		if files, _ := railState(t, dsn, rail); files[f1] != "written" {
			t.Errorf("after a crash as its delivery started: %v, want %s written", files, f1)
		}
		proc = startProcess(t, dsn)
		client = &payd{t: t, base: proc.base}
		waitUntil(t, f1+" delivered", 30*time.Second, func() bool { files, _ := railState(t, dsn, rail); return files[f1] == "delivered" })
		second := batch(client, 10)
		stop(proc)

		// Killed once the file's transaction committed: the file is kept.
		written, _ := killLog(t, killedAt(t, "written", "bankfile", "cut", "--db", dsn, "--rail", rail, "--json"))
		if files, waiting := railState(t, dsn, rail); files[written] != "written" || waiting != 0 {
			t.Fatalf("after a crash once %s was written: files %v, %d waiting; want it written and none waiting", written, files, waiting)
		}
		killedAt(t, "uploaded", "serve", "--addr", "127.0.0.1:0", "--db", dsn)
		if files, _ := railState(t, dsn, rail); files[written] != "written" {
			t.Errorf("after a crash once the outbox held %s: %v, want it still written", written, files)
		}
		proc = startProcess(t, dsn)
		waitUntil(t, written+" delivered", 30*time.Second, func() bool { files, _ := railState(t, dsn, rail); return files[written] == "delivered" })
		content2 := []byte(operatorCmd(t, dsn, "bankfile", "get", written))

		// One file per cut-off, each transfer in one of them, each file in the outbox once.
		for _, c := range []struct {
			name    string
			content []byte
			want    []string
		}{{f1, content1, first}, {written, content2, second}} {
			read, err := aba.Read(c.content)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cr := range read.Credits {
				got = append(got, cr.BankReference)
			}
			delivered, err := os.ReadFile(filepath.Join(outbox, c.name))
			if !slices.Equal(sortedStrings(got), sortedStrings(c.want)) || err != nil || string(delivered) != string(c.content) {
				t.Errorf("%s holds %v (delivered as written: %v, %v), want %v", c.name, got, string(delivered) == string(c.content), err, c.want)
			}
		}
		entries, err := os.ReadDir(outbox)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if want := sortedStrings([]string{f1, written}); !slices.Equal(sortedStrings(names), want) {
			t.Errorf("the outbox holds %v, want only %v", names, want)
		}
		if files, waiting := railState(t, dsn, rail); len(files) != 2 || waiting != 0 {
			t.Errorf("files %v, %d waiting; want the two, none waiting", files, waiting)
		}
		if out, err := exec.Command(paydBinary(t), "ledger", "verify", "--db", dsn).CombinedOutput(); err != nil {
			t.Errorf("payd ledger verify: %v\n%s", err, out)
		}
	})
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
