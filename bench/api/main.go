// Command api measures authenticated API throughput and latency: GET
// /svc/account/profile/<id>/projects on a Herald started in-process, beside a
// bare net/http handler that serves the same bytes with no authentication or
// database, both loaded in the same run by the same load generator: this
// binary run again as a child process, over loopback keep-alive connections,
// so that the figures are the server's alone.
//
// The server process (Herald and the bare handler) and the load generator
// are pinned to different CPUs, with GOMAXPROCS to match: on two CPUs, the
// server on CPU 0 and the load on CPU 1. -server-cpus and -load-cpus change
// the split; where processes cannot be pinned, the output says so and they
// share the CPUs.
//
// Each server is measured -rounds times, alternating which goes first; the
// medians and the ratio of the median throughputs sum them up.
//
//	go run ./bench/api [-c 32] [-d 10s] [-warmup 1s] [-rounds 3] [-projects 10]
//		[-server-cpus 0] [-load-cpus 1] [-cpuprofile file]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/bench/benchapp"
	"github.com/heraldhq/herald/bench/internal/cpuset"
	"github.com/heraldhq/herald/client"
)

func main() {
	if os.Getenv(loadEnv) != "" {
		if err := loadMain(); err != nil {
			log.Fatal(err)
		}
		return
	}
	conns := flag.Int("c", 32, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration of each measurement")
	warmup := flag.Duration("warmup", time.Second, "load before each measurement that is not counted")
	rounds := flag.Int("rounds", 3, "measurements of each server, alternating which goes first")
	nproj := flag.Int("projects", 10, "projects in the listing")
	serverCPUs := flag.String("server-cpus", "", "CPUs of the server process, such as 0 or 0-1 (default: the first half of this process's CPUs, or those -load-cpus leaves)")
	loadCPUs := flag.String("load-cpus", "", "CPUs of the load generator (default: the CPUs the server's leave)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the last round's Herald measurement to this file")
	flag.Parse()
	sp, note, err := cpuset.Choose(*serverCPUs, *loadCPUs)
	if err != nil {
		log.Fatal(err)
	}
	if note != "" {
		fmt.Println("note:", note)
	}
	cfg := config{conns: *conns, dur: *dur, warmup: *warmup, rounds: max(*rounds, 1), projects: *nproj, cpuprofile: *cpuprofile, split: sp}
	if err := run(context.Background(), cfg); err != nil {
		log.Fatal(err)
	}
}

// config is what the flags ask for.
type config struct {
	conns       int
	dur, warmup time.Duration
	rounds      int
	projects    int
	cpuprofile  string
	split       cpuset.Split
}

// servers are the two servers measured: Herald and the bare handler that
// answers with the same bytes.
type servers struct {
	lc     *client.Client // logged in as the admin, for the load's cookies
	herald string         // the listing's URL on Herald
	bare   string         // the bare handler's URL
	path   string         // the listing's path
	size   int            // bytes of the listing
}

// run starts both servers and measures them.
func run(ctx context.Context, cfg config) error {
	if cfg.split.Pinned() {
		// Before Herald starts, so that its threads and pools are sized
		// and placed for the server's CPUs.
		if err := cpuset.Pin(cfg.split.Server); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dir, err := os.MkdirTemp("", "herald-bench-api")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, stop, err := start(ctx, dir, cfg.projects)
	if err != nil {
		return err
	}
	defer stop()

	benchapp.Header(os.Stdout, "api")
	fmt.Printf("GET %s (%d bytes), %d connections, %s each after %s warm-up, %d rounds\n",
		s.path, s.size, cfg.conns, cfg.dur, cfg.warmup, cfg.rounds)
	fmt.Println(cfg.split)
	bare := &side{name: "bare", url: s.bare}
	herald := &side{name: "herald", url: s.herald, header: s.cookies, profile: true}
	if err := compare(ctx, os.Stdout, cfg, bare, herald); err != nil {
		return err
	}
	summarize(os.Stdout, bare, herald)
	return nil
}

// start runs Herald with its data in dir and the admin's projects, and the
// bare handler beside it, until stop is called.
func start(ctx context.Context, dir string, projects int) (s *servers, stop func(), err error) {
	// Herald as it runs by default: every request logged at Info, as text
	// (written nowhere here, but formatted).
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	h, stopHerald, err := benchapp.Start(ctx, dir, func(c *app.Config) { c.Log.Level = "info" }, app.Options{Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			stopHerald()
		}
	}()
	for i := range projects {
		if _, err := h.Client.CreateProject(ctx, fmt.Sprintf("Project %d", i), "bench"); err != nil {
			return nil, nil, err
		}
	}
	s = &servers{path: h.Profile + "/projects", herald: h.App.URL() + h.Profile + "/projects"}
	s.lc = client.New(h.App.URL(), client.WithUserAgent("bench"))
	if _, err := s.lc.Login(ctx, app.DefaultConfig().AdminLogin, benchapp.AdminPassword); err != nil {
		return nil, nil, err
	}
	body, err := fetch(s.lc.HTTPClient(), s.herald)
	if err != nil {
		return nil, nil, err
	}
	s.size = len(body)
	// The same bytes with the same framing: Herald says the length of its
	// JSON answers.
	length := strconv.Itoa(len(body))
	bare := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(body)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	go func() { _ = bare.Serve(ln) }()
	s.bare = "http://" + ln.Addr().String() + "/"
	return s, func() { bare.Close(); stopHerald() }, nil
}

// cookies gets a new temporary token, valid for the token's lifetime from
// now, and returns the header that carries the login to the listing.
func (s *servers) cookies(ctx context.Context) (http.Header, error) {
	if err := s.lc.Do(ctx, http.MethodGet, "/svc/account/token", nil, nil); err != nil {
		return nil, err
	}
	u, err := url.Parse(s.herald)
	if err != nil {
		return nil, err
	}
	req := &http.Request{Header: http.Header{}}
	for _, c := range s.lc.HTTPClient().Jar.Cookies(u) {
		req.AddCookie(c)
	}
	return req.Header, nil
}

// fetch is the body of a GET of target, which must answer 200.
func fetch(hc *http.Client, target string) ([]byte, error) {
	resp, err := hc.Get(target)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	return b, nil
}
