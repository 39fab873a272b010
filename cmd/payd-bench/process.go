package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// buildPayd compiles cmd/payd into a temporary directory.
func buildPayd() (string, func(), error) {
	dir, err := os.MkdirTemp("", "payd-bench-")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "payd")
	out, err := exec.Command("go", "build", "-o", bin, "./cmd/payd").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("build payd: %v\n%s", err, out)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

func numCPU() int { return runtime.NumCPU() }

// paydProcess is payd serve running as a child process.
type paydProcess struct {
	cmd       *exec.Cmd
	base      string
	pprofAddr string
	apps      map[string]app // demo merchant's apps by currency
	merchant  string         // the demo merchant's id
}

type app struct {
	account, id, secret string
}

var (
	listening = regexp.MustCompile(`listening on (http://[0-9.:]+)`)
	bannerApp = regexp.MustCompile(`^\s+([A-Z]{3})\s+([0-9]{12})\s+(\S+)\s+(sk_\S+)$`)
	bannerID  = regexp.MustCompile(`created the demo merchant (\S+)\.`)
)

// startPayd runs `payd serve` on dsn and waits for the listening line and the demo banner.
func startPayd(ctx context.Context, bin, dsn, pprofAddr string) (*paydProcess, error) {
	return startServe(ctx, bin, dsn, pprofAddr, true)
}

// startBeside runs another `payd serve` on the database of one already
// running, and waits for its listening line (it prints no demo banner).
func startBeside(ctx context.Context, bin, dsn string) (*paydProcess, error) {
	return startServe(ctx, bin, dsn, "", false)
}

// startServe runs `payd serve` on dsn and waits for the listening line, and
// with demo for the demo banner too.
func startServe(ctx context.Context, bin, dsn, pprofAddr string, demo bool) (*paydProcess, error) {
	args := []string{"serve", "--addr", "127.0.0.1:0", "--db", dsn}
	if pprofAddr != "" {
		args = append(args, "--pprof-addr", pprofAddr)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &paydProcess{cmd: cmd, apps: map[string]app{}}
	var mu sync.Mutex
	ready := make(chan struct{}, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := bannerID.FindStringSubmatch(sc.Text()); m != nil {
				mu.Lock()
				p.merchant = m[1]
				mu.Unlock()
			}
			if m := bannerApp.FindStringSubmatch(sc.Text()); m != nil {
				mu.Lock()
				p.apps[m[1]] = app{account: m[2], id: m[3], secret: m[4]}
				seen := len(p.apps)
				mu.Unlock()
				if seen == 7 {
					ready <- struct{}{}
					break
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	exited := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var tail []string // the last lines, for a payd that exits before it listens
		listened := false
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				mu.Lock()
				p.base = m[1]
				mu.Unlock()
				ready <- struct{}{}
				listened = true
				break
			}
			tail = append(tail[max(0, len(tail)-9):], sc.Text())
		}
		if !listened { // its stderr closed: payd exited
			exited <- strings.Join(tail, "\n")
			return
		}
		// From here on payd's log is only drained: matching each request's
		// line would charge the load generator for payd's logging.
		io.Copy(io.Discard, stderr)
	}()
	waits := 1
	if demo {
		waits = 2
	}
	for range waits {
		select {
		case <-ready:
		case said := <-exited:
			p.stop()
			return nil, fmt.Errorf("payd exited before it listened; its last words:\n%s", said)
		case <-time.After(60 * time.Second):
			p.stop()
			return nil, fmt.Errorf("payd did not start within 60 s")
		}
	}
	return p, nil
}

func (p *paydProcess) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
		}
	}
}

// cpuTime is the CPU time the process has used (user + system).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// peakRSS is the process's high-water resident memory, in MiB.
func peakRSS(pid int) float64 { return statusMiB(pid, "VmHWM:") }

// currentRSS is the process's resident memory now, in MiB.
func currentRSS(pid int) float64 { return statusMiB(pid, "VmRSS:") }

// statusMiB reads a kB field of /proc/PID/status (VmHWM:, VmRSS:) in MiB;
// 0 when the process or the field is gone.
func statusMiB(pid int, field string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// machineTime is the CPU time every core of the machine has spent busy
// since boot, and the time the hypervisor gave the machine's virtual cores
// to others (steal), which is no work of this machine's and so not busy.
type machineTime struct{ busy, steal time.Duration }

func (m machineTime) since(before machineTime) machineTime {
	return machineTime{busy: m.busy - before.busy, steal: m.steal - before.steal}
}

// machineCPU reads machineTime from /proc/stat.
func machineCPU() machineTime {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTime{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPULine(line)
}

// parseCPULine reads the first line of /proc/stat ("cpu user nice system
// idle iowait irq softirq steal …", in USER_HZ ticks): busy is all but idle,
// iowait and steal.
func parseCPULine(line string) machineTime {
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return machineTime{}
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	var busy, steal int64
	for i, f := range fields[1:9] {
		n, _ := strconv.ParseInt(f, 10, 64)
		switch i {
		case 3, 4: // idle, iowait
		case 7:
			steal = n
		default:
			busy += n
		}
	}
	return machineTime{busy: time.Duration(busy) * time.Second / ticksPerSecond, steal: time.Duration(steal) * time.Second / ticksPerSecond}
}

// selfCPU is this process's CPU time (the load generator's share).
func selfCPU() time.Duration { return cpuTime(os.Getpid()) }

// heapProfile writes payd's heap profile (what is allocated and held now)
// beside the CPU profiles, when profiling.
func (p *paydProcess) heapProfile(s settings, db string) { p.heapProfileAs(s, db+"-heap") }

// heapProfileAs writes payd's heap profile as name.pprof in the profile
// directory, when profiling.
func (p *paydProcess) heapProfileAs(s settings, name string) {
	if p.pprofAddr == "" {
		return
	}
	res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/heap", p.pprofAddr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "heap profile:", err)
		return
	}
	defer res.Body.Close()
	os.MkdirAll(s.profileDir, 0o755)
	f, err := os.Create(filepath.Join(s.profileDir, name+".pprof"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "heap profile:", err)
		return
	}
	defer f.Close()
	io.Copy(f, res.Body)
}

// profile starts a CPU profile of payd for the scenario's duration and
// returns a function that waits for it to be written.
func (p *paydProcess) profile(s settings, db, name string) func() {
	if p.pprofAddr == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		secs := max(1, int(s.duration.Seconds())-1)
		res, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprofAddr, secs))
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return
		}
		defer res.Body.Close()
		os.MkdirAll(s.profileDir, 0o755)
		f, err := os.Create(filepath.Join(s.profileDir, db+"-"+strings.ReplaceAll(name, " ", "_")+".pprof"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "profile:", err)
			return
		}
		defer f.Close()
		io.Copy(f, res.Body)
	}()
	return func() { <-done }
}
