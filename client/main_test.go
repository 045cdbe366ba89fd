package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/client"
)

// The service the examples run against.
var (
	heraldURL       string
	adminLogin      = "admin@herald.local"
	adminPassword   = "S3cret-pass"
	revenueByRegion string // the demo report's URI
)

func TestMain(m *testing.M) {
	stop, err := startHerald()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start herald:", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop herald:", err)
		code = 1
	}
	os.Exit(code)
}

// startHerald runs Herald with its demo project in a temporary folder, on
// loopback ports, until stop is called.
func startHerald() (stop func() error, err error) {
	dir, err := os.MkdirTemp("", "herald-client-examples-")
	if err != nil {
		return nil, err
	}
	cfg := app.DefaultConfig()
	cfg.Data = dir
	cfg.Listen = "127.0.0.1:0"
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.AdminLogin = adminLogin
	cfg.Auth.PasswordCost = 4
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{Demo: true, Stdout: io.Discard, Logger: slog.New(slog.DiscardHandler),
		Getenv: func(k string) string {
			if k == "HERALD_ADMIN_PASSWORD" {
				return adminPassword
			}
			return ""
		}})
	if err != nil {
		cancel()
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stop = func() error {
		cancel()
		return errors.Join(<-done, os.RemoveAll(dir))
	}
	heraldURL = a.URL()
	if err := ready(a.OpsURL()); err != nil {
		return nil, errors.Join(err, stop())
	}
	if revenueByRegion, err = demoReport(ctx); err != nil {
		return nil, errors.Join(err, stop())
	}
	return stop, nil
}

// ready waits for the service's readiness probe, as an operator's would.
func ready(opsURL string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(opsURL + "/readyz")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready in 30 s: %s", res.Status)
		}
		time.Sleep(10 * time.Millisecond) // polls the service
	}
}

// demoReport finds the URI of the demo project's report "Revenue by region".
func demoReport(ctx context.Context) (string, error) {
	c := client.New(heraldURL, client.WithLogin(adminLogin, adminPassword))
	res, err := c.Login(ctx, adminLogin, adminPassword)
	if err != nil {
		return "", err
	}
	projects, err := c.Projects(ctx, res.Profile)
	if err != nil || len(projects) != 1 {
		return "", fmt.Errorf("demo project: %v %v", projects, err)
	}
	var out struct {
		Query struct {
			Entries []struct{ Link, Title string } `json:"entries"`
		} `json:"query"`
	}
	md := "/svc/md/" + last(projects[0].Links["self"])
	if err := c.Do(ctx, http.MethodGet, md+"/query/reports", nil, &out); err != nil {
		return "", err
	}
	for _, e := range out.Query.Entries {
		if e.Title == "Revenue by region" {
			return e.Link, nil
		}
	}
	return "", fmt.Errorf("no report Revenue by region in %s", md)
}

func last(uri string) string { return uri[strings.LastIndexByte(uri, '/')+1:] }
