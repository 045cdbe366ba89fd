// Command api measures authenticated API throughput and latency: GET
// /svc/account/profile/<id>/projects on a Herald started in-process, beside a
// bare net/http handler that serves the same bytes with no authentication or
// database, both loaded by the same Go load generator over loopback keep-alive
// connections in the same run.
//
//	go run ./bench/api [-c 32] [-d 10s] [-projects 10]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/client"
)

func main() {
	conns := flag.Int("c", 32, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration of each measurement")
	nproj := flag.Int("projects", 10, "projects in the listing")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the Herald measurement to this file")
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	dir, err := os.MkdirTemp("", "herald-bench-api")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	h, stop, err := benchapp.Start(ctx, dir, nil, app.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	a, c := h.App, h.Client
	for i := range *nproj {
		if _, err := c.CreateProject(ctx, fmt.Sprintf("Project %d", i), "bench"); err != nil {
			log.Fatal(err)
		}
	}
	target := a.URL() + h.Profile + "/projects"
	// The load client's transport keeps one connection per worker alive.
	lc := client.New(a.URL(), client.WithUserAgent("bench"), client.WithHTTPClient(&http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}}))
	if _, err := lc.Login(ctx, app.DefaultConfig().AdminLogin, benchapp.AdminPassword); err != nil {
		log.Fatal(err)
	}
	hc := lc.HTTPClient()
	body := fetch(hc, target)

	bare := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(body)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go bare.Serve(ln)
	defer bare.Close()

	fmt.Printf("GET %s (%d bytes), %d connections, %s each, GOMAXPROCS=%d\n", h.Profile+"/projects", len(body), *conns, *dur, runtime.GOMAXPROCS(0))
	hb := measure(hc, "http://"+ln.Addr().String()+"/", *conns, *dur)
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
	}
	hh := measure(hc, target, *conns, *dur)
	pprof.StopCPUProfile()
	fmt.Printf("%-8s %10s %8s %8s %8s\n", "server", "req/s", "p50", "p99", "errors")
	for _, r := range []struct {
		name string
		res  result
	}{{"bare", hb}, {"herald", hh}} {
		fmt.Printf("%-8s %10.0f %8s %8s %8d\n", r.name, r.res.rps, r.res.p50, r.res.p99, r.res.errors)
	}
	fmt.Printf("ratio herald/bare throughput: %.2f\n", hh.rps/hb.rps)
}

func fetch(hc *http.Client, target string) []byte {
	resp, err := hc.Get(target)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		log.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	return b
}

type result struct {
	rps      float64
	p50, p99 time.Duration
	errors   int
}

func measure(hc *http.Client, target string, conns int, d time.Duration) result {
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			bad := 0
			for time.Now().Before(deadline) {
				start := time.Now()
				resp, err := hc.Get(target)
				if err != nil {
					bad++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					bad++
					continue
				}
				local = append(local, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, local...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	if len(lat) == 0 {
		return result{errors: errs}
	}
	return result{rps: float64(len(lat)) / d.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100], errors: errs}
}
