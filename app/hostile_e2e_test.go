package app_test

import (
	"bufio"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/heraldhq/herald/app/apptest"
)

// methodFlood sends n requests, each with a method of its own of size bytes, over
// conns connections to the service at base, alternating the API and the console,
// and reads every answer. It returns how many answers were not 501 and one of them.
func methodFlood(t *testing.T, base string, n, size, conns int, rng *rand.Rand) (others int, other string) {
	t.Helper()
	host := strings.TrimPrefix(base, "http://")
	methods := make(chan string, n)
	for range n {
		b := make([]byte, size)
		for i := range b {
			b[i] = 'A' + byte(rng.IntN(26))
		}
		methods <- string(b)
	}
	close(methods)
	paths := []string{"/", "/svc/projects", "/console/", "/console/login"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := make(chan string, conns)
	for range conns {
		wg.Go(func() {
			var c net.Conn
			var br *bufio.Reader
			defer func() {
				if c != nil {
					c.Close()
				}
			}()
			i := 0
			for m := range methods {
				if c == nil {
					var err error
					if c, err = net.Dial("tcp", host); err != nil {
						errs <- err.Error()
						return
					}
					br = bufio.NewReader(c)
				}
				i++
				if _, err := io.WriteString(c, m+" "+paths[i%len(paths)]+" HTTP/1.1\r\nHost: "+host+"\r\n\r\n"); err != nil {
					errs <- err.Error()
					return
				}
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					errs <- err.Error()
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusNotImplemented {
					mu.Lock()
					others, other = others+1, res.Status+" at "+paths[i%len(paths)]
					mu.Unlock()
				}
				if res.Close {
					c.Close()
					c = nil
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("flood: %s", e)
	}
	return others, other
}

// TestMethodFloodAddsNoSeries floods the built binary with 10,000 requests whose methods
// are 8 KiB of random letters, on the API and the console, as an attacker without an
// account can: every one is answered 501, /metrics keeps its series count (the method is
// one label value, "other"), and the process's resident memory grows by less than 64 MiB.
//
// It runs the binary as a child and reads its VmRSS and VmHWM: a test binary's own memory
// holds every other test of the package running beside it.
func TestMethodFloodAddsNoSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the herald binary")
	}
	p := apptest.StartProcess(t, t.TempDir())
	rng := rand.New(rand.NewPCG(35, 1))
	methodFlood(t, p.URL, 4, 16, 1, rng) // the "other" series exist from here on
	series := func() int {
		m, err := apptest.Metrics(p.OpsURL)
		if err != nil {
			t.Fatal(err)
		}
		return len(m)
	}
	before, rss, peak := series(), p.RSS(), p.PeakRSS()
	for _, n := range []int{100, 900, 9_000} { // 10,000 in all; the first check comes early
		others, other := methodFlood(t, p.URL, n, 8<<10, 8, rng)
		if got := series(); got != before {
			t.Fatalf("after %d more requests with unknown methods, /metrics has %d series, %d before", n, got, before)
		}
		if others > 0 {
			t.Errorf("%d of %d requests with unknown methods were not answered 501, such as %s", others, n, other)
		}
	}
	grewRSS, grewPeak := p.RSS()-rss, p.PeakRSS()-peak
	t.Logf("10,000 requests with 8 KiB methods: %d series before and after; RSS %d → %d MiB, peak %d → %d MiB",
		before, rss>>20, (rss+grewRSS)>>20, peak>>20, (peak+grewPeak)>>20)
	if grewRSS >= 64<<20 || grewPeak >= 64<<20 {
		t.Errorf("the flood grew the resident memory by %d MiB and its peak by %d MiB, want under 64 MiB each",
			grewRSS>>20, grewPeak>>20)
	}
}
