package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/bench/internal/cpuset"
	"github.com/heraldhq/herald/bench/internal/latency"
)

// loadEnv, set in its environment, makes the benchmark's binary the load
// generator: it reads a loadSpec on stdin and writes a loadReport on stdout.
const loadEnv = "HERALD_BENCH_API_LOAD"

// loadSpec is what the load generator is asked to do.
type loadSpec struct {
	URL string `json:"url"`
	// Header is sent with every request: the login cookies.
	Header http.Header `json:"header"`
	Conns  int         `json:"conns"`
	// Warmup is loaded but not counted; Duration is counted after it.
	Warmup   time.Duration `json:"warmup_ns"`
	Duration time.Duration `json:"duration_ns"`
	// CPUs, if any, are the CPUs the generator runs on, with as many Ps.
	CPUs []int `json:"cpus"`
}

// loadReport is what the load generator measured in the counted window.
type loadReport struct {
	// OK counts the answers 200 that arrived in the window; Errors the
	// other answers and the failed requests, warm-up included.
	OK     int64         `json:"ok"`
	Errors int64         `json:"errors"`
	Window time.Duration `json:"window_ns"`
	// CPUs are those the generator ran on, as the kernel says.
	CPUs       []int              `json:"cpus"`
	GOMAXPROCS int                `json:"gomaxprocs"`
	Latency    *latency.Histogram `json:"latency"`

	// ServerCPU and LoadCPU are the shares of their CPUs' time the
	// server process and the generator used while the generator ran: 1 is
	// all of it. ServerCPU is -1 where it is not read.
	ServerCPU float64 `json:"-"`
	LoadCPU   float64 `json:"-"`
}

// rps is the answers 200 per second of the window.
func (r loadReport) rps() float64 { return float64(r.OK) / r.Window.Seconds() }

// runLoad runs the load generator as a child process of this binary and
// returns what it measured.
func runLoad(ctx context.Context, spec loadSpec) (loadReport, error) {
	exe, err := os.Executable()
	if err != nil {
		return loadReport{}, err
	}
	in, err := json.Marshal(spec)
	if err != nil {
		return loadReport{}, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), loadEnv+"=1")
	if len(spec.CPUs) > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", len(spec.CPUs)))
	}
	cmd.Stdin, cmd.Stderr = bytes.NewReader(in), os.Stderr
	cmd.SysProcAttr = childProcAttr()
	serverBefore, haveServer := processCPUTime()
	began := time.Now()
	out, err := cmd.Output()
	wall := time.Since(began)
	if err != nil {
		return loadReport{}, fmt.Errorf("load generator: %w", err)
	}
	serverAfter, _ := processCPUTime()
	var r loadReport
	if err := json.Unmarshal(out, &r); err != nil {
		return loadReport{}, fmt.Errorf("load generator's report: %w", err)
	}
	if r.Latency == nil {
		r.Latency = &latency.Histogram{}
	}
	if len(spec.CPUs) > 0 && (!slices.Equal(r.CPUs, spec.CPUs) || r.GOMAXPROCS != len(spec.CPUs)) {
		return loadReport{}, fmt.Errorf("load generator ran on %s with GOMAXPROCS %d, not on %s", cpuset.Format(r.CPUs), r.GOMAXPROCS, cpuset.Format(spec.CPUs))
	}
	r.ServerCPU = -1
	if haveServer {
		r.ServerCPU = share(serverAfter-serverBefore, wall, runtime.GOMAXPROCS(0))
	}
	r.LoadCPU = share(cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime(), wall, r.GOMAXPROCS)
	return r, nil
}

// share is the share of n CPUs' time over wall that cpu is.
func share(cpu, wall time.Duration, n int) float64 {
	return cpu.Seconds() / wall.Seconds() / float64(max(n, 1))
}

// loadMain is the load generator's main: spec on stdin, report on stdout.
func loadMain() error {
	var spec loadSpec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	if len(spec.CPUs) > 0 {
		if err := cpuset.Pin(spec.CPUs); err != nil {
			return err
		}
	}
	r, err := generate(spec)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// generator loads one URL from keep-alive connections until end, counting
// what arrives from start on.
type generator struct {
	addr       string
	request    []byte
	start, end time.Time
}

// newGenerator prepares the request the spec asks for.
func newGenerator(spec loadSpec) (*generator, error) {
	u, err := url.Parse(spec.URL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%s: only http URLs are loaded", spec.URL)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: bench\r\nAccept: application/json\r\n", u.RequestURI(), u.Host)
	if err := spec.Header.Write(&b); err != nil {
		return nil, err
	}
	b.WriteString("\r\n")
	return &generator{addr: u.Host, request: []byte(b.String())}, nil
}

// generate runs the spec's connections, each on a goroutine of its own.
func generate(spec loadSpec) (loadReport, error) {
	g, err := newGenerator(spec)
	if err != nil {
		return loadReport{}, err
	}
	g.start = time.Now().Add(spec.Warmup)
	g.end = g.start.Add(spec.Duration)
	r := loadReport{Window: spec.Duration, GOMAXPROCS: runtime.GOMAXPROCS(0), Latency: &latency.Histogram{}}
	r.CPUs, _ = cpuset.Allowed() // none where they cannot be read
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range spec.Conns {
		wg.Go(func() {
			var h latency.Histogram
			ok, bad := g.connection(&h)
			mu.Lock()
			defer mu.Unlock()
			r.Latency.Merge(&h)
			r.OK += ok
			r.Errors += bad
		})
	}
	wg.Wait()
	return r, nil
}

// connection sends requests one after the other on a keep-alive connection,
// dialling again when the server closes it or a request fails, until the
// end; it records the latency of each answer 200 that arrives in the window.
func (g *generator) connection(h *latency.Histogram) (ok, bad int64) {
	for time.Now().Before(g.end) {
		conn, err := net.Dial("tcp", g.addr)
		if err != nil {
			bad++
			time.Sleep(10 * time.Millisecond)
			continue
		}
		// A server that stops answering cannot hold the generator past
		// the end by much.
		_ = conn.SetDeadline(g.end.Add(10 * time.Second))
		o, b := g.requests(conn, h)
		ok, bad = ok+o, bad+b
		conn.Close()
	}
	return ok, bad
}

// requests runs requests on conn until the end, an error or a closed
// connection.
func (g *generator) requests(conn net.Conn, h *latency.Histogram) (ok, bad int64) {
	br := bufio.NewReaderSize(conn, 16<<10)
	for {
		sent := time.Now()
		if !sent.Before(g.end) {
			return ok, bad
		}
		status, closed, err := g.roundTrip(conn, br)
		done := time.Now()
		counted := !done.Before(g.start) && done.Before(g.end)
		switch {
		case err != nil:
			return ok, bad + 1
		case status != http.StatusOK:
			bad++
		case counted:
			ok++
			h.Record(done.Sub(sent))
		}
		if closed {
			return ok, bad
		}
	}
}

// roundTrip sends the request and reads the whole answer.
func (g *generator) roundTrip(conn net.Conn, br *bufio.Reader) (status int, closed bool, err error) {
	if _, err := conn.Write(g.request); err != nil {
		return 0, true, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, true, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Close, err
}
