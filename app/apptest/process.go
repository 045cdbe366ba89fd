package apptest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Binary builds the herald command once per test binary and returns its path.
// The build is kept in the user's cache folder, one per checkout, and built
// again in place: go build then links only when a source changed, so the test
// binaries of one go test ./... link it once between them, and none leaves a
// copy of it behind.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binary, buildErr = buildHerald()
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

const heraldCommand = "github.com/heraldhq/herald/cmd/herald"

// buildHerald builds the herald command into the cache folder, or into a
// temporary folder where there is no cache folder to keep it in.
func buildHerald() (string, error) {
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		dir, err := os.MkdirTemp("", "herald-test-bin-")
		if err != nil {
			return "", err
		}
		path := filepath.Join(dir, "herald")
		return path, goBuild(path, heraldCommand)
	}
	dir := filepath.Join(cache, "herald-test")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSpace(root))
	path := filepath.Join(dir, "herald-"+hex.EncodeToString(sum[:6]))
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	return path, goBuild(path, heraldCommand)
}

// goBuild builds pkg into path.
func goBuild(path, pkg string) error {
	out, err := exec.Command("go", "build", "-o", path, pkg).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return nil
}

// Process is the herald binary serving as a child process, as an operator runs it.
type Process struct {
	t      testing.TB
	cmd    *exec.Cmd
	Dir    string // the data folder
	URL    string // the API
	OpsURL string // the operator's listener
	// Out holds what the process printed on stdout and stderr.
	Out  *SyncBuffer
	done chan struct{}
	err  error
	// api is closed once the API listens; URL is set then. A control process
	// waiting for the control lease serves the operator's listener first.
	api chan struct{}
}

var (
	listening = regexp.MustCompile(`Herald is listening on (\S+) `)
	opsAt     = regexp.MustCompile(`Metrics, health and readiness at (\S+)/metrics`)
	// standing by or serving without the API: StartProcess need not wait for it.
	noAPIYet = regexp.MustCompile(`^(Waiting for the control lease|Herald worker is sending)`)
)

// StartProcess runs `herald serve` on the data folder dir, with the admin password
// AdminPassword, the API and the operator's listener on free loopback ports, a cheap
// password hash, and env (KEY=value, HERALD_* configuration keys) on top. It returns
// once the process listens.
func StartProcess(t testing.TB, dir string, env ...string) *Process {
	t.Helper()
	return startProcess(t, dir, nil, env)
}

// StartDemoProcess is StartProcess with --demo: the first start on dir sets
// up the demo project.
func StartDemoProcess(t testing.TB, dir string, env ...string) *Process {
	t.Helper()
	return startProcess(t, dir, []string{"--demo"}, env)
}

func startProcess(t testing.TB, dir string, args, env []string) *Process {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"serve", "--data", dir, "--listen", "127.0.0.1:0"}, args...)...)
	// GOTRACEBACK=all: a process that hangs is sent SIGQUIT, and says where
	// each of its goroutines waits.
	cmd.Env = append(os.Environ(), "HERALD_ADMIN_PASSWORD="+AdminPassword, "HERALD_METRICS_LISTEN=127.0.0.1:0",
		"HERALD_AUTH_PASSWORDCOST=4", "GOTRACEBACK=all")
	cmd.Env = append(cmd.Env, env...)
	out := &SyncBuffer{}
	pr, pw := io.Pipe()
	// Out first: what the scanner reads of a write is in Out by then.
	cmd.Stdout, cmd.Stderr = io.MultiWriter(out, pw), out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start herald: %v", err)
	}
	p := &Process{t: t, cmd: cmd, Dir: dir, Out: out, done: make(chan struct{}), api: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		var ops, api, noAPI, told bool
		for sc.Scan() {
			line := sc.Text()
			if m := listening.FindStringSubmatch(line); m != nil && !api {
				p.URL, api = m[1], true
				close(p.api)
			}
			if m := opsAt.FindStringSubmatch(line); m != nil && !ops {
				p.OpsURL, ops = m[1], true
			}
			noAPI = noAPI || noAPIYet.MatchString(line)
			if ops && (api || noAPI) && !told {
				close(ready)
				told = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case <-ready:
	case <-p.done:
		t.Fatalf("herald exited before it listened: %v\n%s", p.err, out.String())
	case <-time.After(2 * time.Minute):
		p.quit()
		t.Fatalf("herald did not listen within 2 minutes; its output, and where it waited:\n%s", out.String())
	}
	return p
}

// quit sends SIGQUIT to a process that hangs and to the processes it
// started, so that each writes its goroutines' stacks to its output before it
// exits, and waits a while for them.
func (p *Process) quit() {
	signalTree(p.cmd.Process, syscall.SIGQUIT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// API waits up to within for the API to listen (a control process waiting
// for the control lease listens once it holds it) and returns its URL.
func (p *Process) API(within time.Duration) string {
	p.t.Helper()
	select {
	case <-p.api:
		return p.URL
	case <-p.done:
		p.t.Fatalf("herald exited before its API listened: %v\n%s", p.err, p.Out.String())
	case <-time.After(within):
		p.quit()
		p.t.Fatalf("herald's API did not listen within %v; its output, and where it waited:\n%s", within, p.Out.String())
	}
	return ""
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// Kill ends the process with SIGKILL and waits until it is gone.
func (p *Process) Kill() {
	p.Signal(syscall.SIGKILL)
	<-p.done
}

// KillAll ends the process and the processes it started (a control
// process's replicator) with SIGKILL at once, as when their machine is
// lost, and waits until the process is gone.
func (p *Process) KillAll() {
	killTree(p.cmd.Process)
	<-p.done
}

// SignalAll sends sig to the process and the processes it started: SIGSTOP
// and SIGCONT freeze and thaw them together, as a paused machine.
func (p *Process) SignalAll(sig syscall.Signal) { signalTree(p.cmd.Process, sig) }

// Wait waits up to d for the process to exit and reports whether it did and how.
func (p *Process) Wait(d time.Duration) (exited bool, err error) {
	select {
	case <-p.done:
		return true, p.err
	case <-time.After(d):
		return false, nil
	}
}

// PeakRSS is the most resident memory the process has had, in bytes (VmHWM).
func (p *Process) PeakRSS() int64 { return p.status("VmHWM") }

// RSS is the resident memory of the process now, in bytes (VmRSS).
func (p *Process) RSS() int64 { return p.status("VmRSS") }

// status reads a size in kB from the process's /proc status, in bytes.
func (p *Process) status(field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		p.t.Fatalf("read the process status: %v", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				p.t.Fatalf("%s %q: %v", field, rest, err)
			}
			return kb << 10
		}
	}
	p.t.Fatalf("no %s in the process status", field)
	return 0
}
