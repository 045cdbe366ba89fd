package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// readyWithin bounds how long a child process may take to say it is ready.
const readyWithin = 2 * time.Minute

// binaries are the programs the scenarios run, built once into a folder of
// their own.
type binaries struct {
	dir, herald, nats string
}

// build compiles the herald command and nats-server (the version go.mod
// requires) into a new temporary folder; remove removes it.
func build(ctx context.Context) (*binaries, error) {
	dir, err := os.MkdirTemp("", "herald-scaleout-bin-")
	if err != nil {
		return nil, err
	}
	b := &binaries{dir: dir, herald: filepath.Join(dir, "herald"), nats: filepath.Join(dir, "nats-server")}
	for pkg, out := range map[string]string{
		"github.com/heraldhq/herald/cmd/herald": b.herald,
		"github.com/nats-io/nats-server/v2":     b.nats,
	} {
		if msg, err := exec.CommandContext(ctx, "go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			b.remove()
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
		}
	}
	return b, nil
}

// remove deletes the binaries' folder.
func (b *binaries) remove() { _ = os.RemoveAll(b.dir) }

// process is a child process whose output (stdout and stderr together) is
// read line by line as it comes.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *tail
	done chan struct{} // closed when the process has exited
	err  error         // how it exited, once done is closed
}

// startProcess runs bin with args and env on top of this process's
// environment, and returns once ready has returned true for a line of its
// output. ready is called on one goroutine, line by line, until then. On an
// error the process is killed.
func startProcess(ctx context.Context, name, bin string, args, env []string, ready func(line string) bool) (*process, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = childProcAttr()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, out: &tail{}, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	isReady := make(chan struct{})
	go p.scan(pr, ready, isReady)
	select {
	case <-isReady:
		return p, nil
	case <-p.done:
		return nil, fmt.Errorf("%s exited before it was ready: %v\n%s", name, p.err, p.out)
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	case <-time.After(readyWithin):
		p.kill()
		return nil, fmt.Errorf("%s was not ready within %v:\n%s", name, readyWithin, p.out)
	}
}

// scan keeps the output's last lines, closes isReady at the first line ready
// accepts, and reads on to the end so that the process never blocks writing.
func (p *process) scan(r io.Reader, ready func(string) bool, isReady chan<- struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	waiting := true
	for sc.Scan() {
		line := sc.Text()
		p.out.add(line)
		if waiting && ready(line) {
			waiting = false
			close(isReady)
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// kill ends the process with SIGKILL and waits until it is gone. It may be
// called more than once.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exited returns an error once any of procs has exited, or nil when stop is
// closed first.
func exited(stop <-chan struct{}, procs []*process) <-chan error {
	out := make(chan error, 1)
	for _, p := range procs {
		go func() {
			select {
			case <-p.done:
				select {
				case out <- fmt.Errorf("%s exited: %v\n%s", p.name, p.err, p.out):
				default:
				}
			case <-stop:
			}
		}()
	}
	return out
}

var (
	heraldListening = regexp.MustCompile(`Herald is listening on (\S+) `)
	heraldReady     = regexp.MustCompile(`Metrics, health and readiness at \S+/metrics`)
	natsListening   = regexp.MustCompile(`Listening for client connections on (\S+)`)
	natsReady       = regexp.MustCompile(`Server is ready`)
)

// herald is a running `herald serve`.
type herald struct {
	*process
	url string // the API, empty in a worker-only process
}

// startHerald runs `herald serve` on the data folder dir with the API on a
// free loopback port and env (HERALD_* keys) on top, and returns once its
// operator's listener is up and, if it serves the API (api), once it has
// said where: a control process on a shared NATS serves /readyz while it
// waits for the control lease, before its API.
// A cpu of 0 or more pins the process to that core, where taskset is found.
func startHerald(ctx context.Context, bin, name, dir string, env []string, cpu int, api bool) (*herald, error) {
	h := &herald{}
	bin, args := pinned(bin, []string{"serve", "--data", dir, "--listen", "127.0.0.1:0"}, cpu)
	ops := false
	p, err := startProcess(ctx, name, bin, args, env,
		func(line string) bool {
			if m := heraldListening.FindStringSubmatch(line); m != nil {
				h.url = m[1]
			}
			ops = ops || heraldReady.MatchString(line)
			return ops && (h.url != "" || !api)
		})
	if err != nil {
		return nil, err
	}
	h.process = p
	return h, nil
}

// natsServer is a running nats-server with JetStream.
type natsServer struct {
	*process
	url string // the client URL
}

// startNATS runs a nats-server with JetStream stored in dir, listening for
// clients on a free loopback port, and returns once it is ready.
func startNATS(ctx context.Context, bin, dir string) (*natsServer, error) {
	n := &natsServer{}
	p, err := startProcess(ctx, "nats-server", bin, []string{"-a", "127.0.0.1", "-p", "-1", "-js", "-sd", dir}, nil,
		func(line string) bool {
			if m := natsListening.FindStringSubmatch(line); m != nil {
				n.url = "nats://" + m[1]
			}
			return natsReady.MatchString(line)
		})
	if err != nil {
		return nil, err
	}
	if n.url == "" {
		p.kill()
		return nil, errors.New("nats-server did not say where it listens")
	}
	n.process = p
	return n, nil
}

// tail keeps the last lines a process printed, for error messages.
type tail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 40

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > 2*tailLines {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-tailLines:]...)
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines[max(len(t.lines)-tailLines, 0):], "\n")
}

// pinned returns the command that runs bin with args on core cpu only, by
// taskset, or bin and args themselves when cpu is below 0 or taskset is not
// found.
func pinned(bin string, args []string, cpu int) (string, []string) {
	if cpu < 0 {
		return bin, args
	}
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return bin, args
	}
	return ts, append([]string{"-c", strconv.Itoa(cpu), bin}, args...)
}
