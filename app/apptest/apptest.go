package apptest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/app"
	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/internal/clock/clocktest"
)

// AdminPassword is the password of the bootstrap admin in every Bundle.
const AdminPassword = "Adm1n-Passw0rd"

// Clock is a clock for tests that moves only when told to.
type Clock = clocktest.Clock

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return clocktest.New(t) }

// Bundle is one running service and what a test needs to drive it.
type Bundle struct {
	App    *app.App
	URL    string
	Config app.Config
	Clock  *Clock
	// Admin is logged in as the domain admin.
	Admin *client.Client
	// AdminProfile is the admin's profile URI.
	AdminProfile string
	// Log holds everything the service logged.
	Log *SyncBuffer
	// Stdout holds what the service printed for a person.
	Stdout *SyncBuffer
}

// Option changes the configuration of a Bundle before it starts.
type Option func(*app.Config)

// Start runs a service until the test ends. The data folder is t.TempDir()
// unless an option sets Config.Data.
func Start(t testing.TB, opts ...Option) *Bundle {
	t.Helper()
	return start(t, false, opts)
}

// StartDemo is Start with the demo project set up, as serve --demo does on
// first start; Bundle.Stdout says where it is.
func StartDemo(t testing.TB, opts ...Option) *Bundle {
	t.Helper()
	return start(t, true, opts)
}

func start(t testing.TB, demo bool, opts []Option) *Bundle {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Data = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Metrics.Listen = "127.0.0.1:0"
	cfg.Auth.PasswordCost = 4
	cfg.Log.Level = "debug"
	for _, o := range opts {
		o(&cfg)
	}
	b := &Bundle{Config: cfg, Clock: NewClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)),
		Log: &SyncBuffer{}, Stdout: &SyncBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, app.Options{
		Clock:  b.Clock,
		Demo:   demo,
		Logger: slog.New(slog.NewTextHandler(b.Log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Stdout: b.Stdout,
		Getenv: func(k string) string {
			if k == "HERALD_ADMIN_PASSWORD" {
				return AdminPassword
			}
			return ""
		},
	})
	if err != nil {
		cancel()
		t.Fatalf("start service: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service stopped with: %v", err)
		}
	})
	b.App, b.URL = a, a.URL()
	b.Admin = b.Client("admin-test")
	res, err := b.Admin.Login(context.Background(), cfg.AdminLogin, AdminPassword)
	if err != nil {
		t.Fatalf("admin login: %v", err)
	}
	b.AdminProfile = res.Profile
	awaitReady(t, a.OpsURL())
	return b
}

// awaitReady returns once /readyz at opsURL answers 200, as an operator's
// probe would wait: the engine has then loaded the subscriptions and armed
// its timer, so a test that moves the clock next does not race the load. It
// returns at once when the operator's listener is off.
func awaitReady(t testing.TB, opsURL string) {
	t.Helper()
	if opsURL == "" {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(opsURL + "/readyz")
		if err != nil {
			t.Fatalf("readyz: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready within 30s: %d %s", resp.StatusCode, body)
		}
		time.Sleep(10 * time.Millisecond) // polls the service, not the test's clock
	}
}

// Client returns a new client of the service with the given User-Agent.
func (b *Bundle) Client(userAgent string) *client.Client {
	return client.New(b.URL, client.WithUserAgent(userAgent))
}

// NewUser creates a domain user and returns a client logged in as it, and its profile URI.
func (b *Bundle) NewUser(t testing.TB, login string) (*client.Client, string) {
	t.Helper()
	ctx := context.Background()
	const pw = "S3cret-pass"
	uri, err := b.Admin.CreateUser(ctx, b.Config.Domain, client.NewUser{Login: login, Password: pw, FirstName: "Test", LastName: "User"})
	if err != nil {
		t.Fatalf("create user %s: %v", login, err)
	}
	c := b.Client("ua-" + login)
	if _, err := c.Login(ctx, login, pw); err != nil {
		t.Fatalf("login %s: %v", login, err)
	}
	return c, uri
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
