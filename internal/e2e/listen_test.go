package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// listenProcess is `payd listen` running as a child process.
type listenProcess struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
}

// startListen runs payd listen for as against p, forwarding to forwardTo,
// with configDir as the user's config directory.
func startListen(t *testing.T, p *payd, as creds, forwardTo, configDir string, extra ...string) *listenProcess {
	t.Helper()
	args := append([]string{"listen", "--api", p.root, "--app-id", as.AppID, "--secret-key", as.SecretKey, "--forward-to", forwardTo}, extra...)
	cmd := exec.Command(paydBinary(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configDir, "HOME="+configDir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	l := &listenProcess{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l.mu.Lock()
			l.lines = append(l.lines, sc.Text())
			l.mu.Unlock()
		}
		io.Copy(io.Discard, out)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-l.done
		cmd.Wait()
	})
	return l
}

// count is how many lines of the output start with prefix.
func (l *listenProcess) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

func (l *listenProcess) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

var readySecret = regexp.MustCompile(`^Ready! Your webhook signing secret is (whsec_\S+)`)

// secret waits for the Ready line and returns the secret it prints.
func (l *listenProcess) secret(t *testing.T) string {
	t.Helper()
	var secret string
	waitUntilOr(t, "payd listen ready", 20*time.Second, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, line := range l.lines {
			if m := readySecret.FindStringSubmatch(line); m != nil {
				secret = m[1]
				return true
			}
		}
		return false
	}, func() string { return "\n" + l.output() })
	return secret
}

// TestListenSurvivesSIGKILL: payd listen forwards each event to the local
// URL signed with its local secret, printing --> and <-- lines; killed
// with SIGKILL and started again, it keeps its secret and resumes where it
// stopped: across the restart every event is forwarded exactly once, those
// made while it was down included.
func TestListenSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, p *payd) {
		m := p.merchant("IDR")["IDR"]
		recv := newEndpointReceiver(t)
		config := t.TempDir()
		l := startListen(t, p, m, recv.URL+"/hooks", config)
		secret := l.secret(t)
		for range 3 {
			pinReceived(t, p, m, nil, "")
		}
		waitUntilOr(t, "3 events forwarded", 20*time.Second, func() bool { return l.count("<-- [200]") == 3 },
			func() string { return "\n" + l.output() })
		if got := l.count("--> payin.received ["); got != 3 {
			t.Errorf("--> lines = %d:\n%s", got, l.output())
		}
		l.cmd.Process.Signal(syscall.SIGKILL)
		<-l.done
		l.cmd.Wait()

		for range 3 {
			pinReceived(t, p, m, nil, "")
		}
		again := startListen(t, p, m, recv.URL+"/hooks", config)
		if s := again.secret(t); s != secret {
			t.Errorf("the local secret changed across the restart: %s, then %s", secret, s)
		}
		waitUntilOr(t, "the 3 events made while it was down", 20*time.Second, func() bool { return again.count("<-- [200]") == 3 },
			func() string { return "\n" + again.output() })
		listed, _ := p.loggedEvents(m, "")
		got := recv.ids()
		if len(got) != len(listed) || len(listed) != 6 {
			t.Errorf("forwarded %d distinct events, listed %d", len(got), len(listed))
		}
		for _, e := range listed {
			if n := got[e["id"].(string)]; n != 1 {
				t.Errorf("%s forwarded %d times", e["id"], n)
			}
		}
		for _, d := range recv.deliveries() {
			if d.typ != "payin.received" || !d.verifies(secret) {
				t.Errorf("forwarded %s %s, signature %q", d.typ, d.id, d.signature)
			}
		}
		files, _ := filepath.Glob(filepath.Join(config, "payd", "listen", "*.json"))
		if len(files) != 1 {
			t.Errorf("listen state files = %v", files)
		}
	})
}

// TestTrigger: payd trigger --list names the events it makes, one a line;
// each makes its event happen on the sandbox; a production server (404 on
// the sandbox clock) makes it exit 1.
func TestTrigger(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(paydBinary(t), "trigger", "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	list := strings.Fields(string(out))
	wantList := []string{"payin.received", "payin.failed", "payout.completed", "payout_transaction.failed", "payment_request.received", "dispute.created"}
	if strings.Join(list, " ") != strings.Join(wantList, " ") {
		t.Errorf("--list = %q", out)
	}
	each(t, func(t *testing.T, p *payd) {
		aud := p.merchant("AUD")["AUD"]
		for _, event := range wantList {
			cmd := exec.Command(paydBinary(t), "trigger", "--api", p.root, "--app-id", aud.AppID, "--secret-key", aud.SecretKey, event)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("trigger %s: %v\n%s", event, err, out)
			}
			waitUntilOr(t, event+" in the events", 15*time.Second, func() bool {
				got, _ := p.loggedEvents(aud, "type="+event)
				return len(got) > 0
			}, func() string {
				all, _ := p.loggedEvents(aud, "size=100")
				return fmt.Sprintf(": the events are %v (trigger said %s)", eventTypes(all), out)
			})
		}
	})
	storeEach := func(t *testing.T, p *payd) {
		m := p.merchant("AUD")["AUD"]
		cmd := exec.Command(paydBinary(t), "trigger", "--api", p.root, "--app-id", m.AppID, "--secret-key", m.SecretKey, "payin.received")
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "production") {
			t.Errorf("trigger against production: exit %d (%v): %s", code, err, out)
		}
	}
	each(t, storeEach, production)
}
