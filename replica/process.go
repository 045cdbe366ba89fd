package replica

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/heraldhq/herald/internal/clock"
)

// Replicator is the replicator running as a child process of the control
// process, which tells it to stop, or kills it when it loses the lease. The
// child ends by itself when the control process dies: its standard input,
// a pipe from the control process, ends then.
type Replicator struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   *slog.Logger
	done  chan struct{} // closed once the process exited and the goroutines watching it returned; err is how
	err   error
	// exited is closed once the process exited: what tells it stops then.
	exited chan struct{}
	in     sync.Mutex // one line at a time on stdin

	mu       sync.Mutex
	restored *Restored
	last     report // the last report
}

// tellEvery is how often a fenced replicator is told the lease's validity.
const tellEvery = LeaseTTL / 20

// StartReplicator starts cmd, a replicator process (RunReplicator), and
// returns once it said it is ready: it restored the database, or found
// nothing to restore. cmd's standard input and output are the replicator's
// own; its standard error is left as set (the control process's log). A
// replicator started with ReplicatorConfig.Fenced is told valid, until when
// this process holds the control lease (zero: it does not), at once and
// every tellEvery until it exits; a nil valid tells it nothing.
//
// While it waits it says so in the log every notReadyEvery: a restore from a
// large replica takes minutes, and a replicator that cannot reach NATS waits
// for it, while this process holds the control lease and serves nothing.
func StartReplicator(ctx context.Context, cmd *exec.Cmd, valid func() time.Time, log *slog.Logger) (*Replicator, error) {
	return startReplicatorWith(ctx, cmd, valid, log, clock.Real())
}

// notReadyEvery is how often StartReplicator says it still waits.
const notReadyEvery = 30 * time.Second

// startReplicatorWith is StartReplicator on the clock clk.
func startReplicatorWith(ctx context.Context, cmd *exec.Cmd, valid func() time.Time, log *slog.Logger,
	clk clock.Clock) (*Replicator, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the replicator: %w", err)
	}
	r := &Replicator{cmd: cmd, stdin: stdin, log: log, done: make(chan struct{}), exited: make(chan struct{})}
	ready := make(chan report, 1)
	var read, telling sync.WaitGroup
	read.Go(func() { r.read(stdout, ready) })
	if valid != nil {
		r.tell(validLine(valid()))
		telling.Go(func() { r.keepTelling(valid) })
	}
	go func() {
		read.Wait() // Wait closes the output: only once it is read to its end
		r.err = cmd.Wait()
		close(r.exited)
		telling.Wait()
		close(r.done)
	}()
	began := clk.Now()
	tick := clk.NewTicker(notReadyEvery)
	defer tick.Stop()
	for {
		select {
		case rep := <-ready:
			if rep.Err != "" {
				r.Kill()
				return nil, fmt.Errorf("replicator: %s", rep.Err)
			}
			return r, nil
		case <-r.done:
			return nil, fmt.Errorf("the replicator exited before it was ready: %v", r.err)
		case <-ctx.Done():
			r.Kill()
			return nil, ctx.Err()
		case <-tick.C():
			log.Warn("the replicator is not ready yet: it restores the database, or waits for NATS",
				"pid", cmd.Process.Pid, "waited", clk.Now().Sub(began).Round(time.Second))
		}
	}
}

// read takes the replicator's reports until its output ends, and hands the
// first on to ready.
func (r *Replicator) read(out io.Reader, ready chan<- report) {
	sc := bufio.NewScanner(out)
	first := true
	for sc.Scan() {
		var rep report
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			r.log.Warn("the replicator wrote a line that is no report", "line", sc.Text())
			continue
		}
		r.mu.Lock()
		if first {
			r.restored = rep.Restored
		}
		r.last = rep
		r.mu.Unlock()
		if first {
			ready <- rep
			first = false
		}
	}
	_, _ = io.Copy(io.Discard, out)
}

// Restored is what the replicator restored before it started, nil when the
// database was there or the replica empty.
func (r *Replicator) Restored() *Restored {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restored
}

// Done is closed once the process exited.
func (r *Replicator) Done() <-chan struct{} { return r.done }

// Err is how the process exited, once Done is closed.
func (r *Replicator) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

// Synced is when the replica last took what the database had, zero before
// the first upload.
func (r *Replicator) Synced() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last.Synced
}

// Checkpoints is how many checkpoints the replicator made of the database.
func (r *Replicator) Checkpoints() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last.Checkpoints
}

// Check reports whether the replicator runs.
func (r *Replicator) Check() error {
	select {
	case <-r.done:
		return fmt.Errorf("the replicator exited: %v", r.err)
	default:
		return nil
	}
}

// tell writes a line on the replicator's standard input.
func (r *Replicator) tell(line string) {
	r.in.Lock()
	defer r.in.Unlock()
	_, _ = io.WriteString(r.stdin, line)
}

// keepTelling tells the replicator valid every tellEvery until it exits.
func (r *Replicator) keepTelling(valid func() time.Time) {
	t := clock.Real().NewTicker(tellEvery) // the replicator reads the lease on the machine's time
	defer t.Stop()
	for {
		select {
		case <-r.exited:
			return
		case <-t.C():
			r.tell(validLine(valid()))
		}
	}
}

// Stop asks the replicator to upload what it has not yet and stop, and waits
// for it to exit, at most within; then it is killed. A fenced replicator is
// told the lease's validity meanwhile.
func (r *Replicator) Stop(within time.Duration) error {
	r.tell("stop\n")
	defer func() {
		r.in.Lock()
		defer r.in.Unlock()
		_ = r.stdin.Close()
	}()
	t := clock.Real().NewTimer(within) // a process of its own ends in real time
	defer t.Stop()
	select {
	case <-r.done:
		var exit *exec.ExitError
		if errors.As(r.err, &exit) {
			return fmt.Errorf("the replicator: %w", r.err)
		}
		return nil
	case <-t.C():
		r.Kill()
		return fmt.Errorf("the replicator did not stop within %v; killed", within)
	}
}

// Kill ends the replicator at once, whatever it was uploading, and waits
// until it is gone: a process that lost the lease must not write into the
// replica its successor now writes.
func (r *Replicator) Kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}
