package task

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/goleak"

	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.EnsureDomain(ctx, "default", t0); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateUser(ctx, store.User{ID: "u1", Domain: "default", Login: "u1@x.io", PasswordHash: "x", Created: t0, Updated: t0}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateProject(ctx, store.Project{ID: "p1", Title: "P", State: store.ProjectEnabled, Author: "u1",
		Contributor: "u1", Created: t0, Updated: t0}, "adminRole"); err != nil {
		t.Fatal(err)
	}
	return st
}

func newPool(st *store.Store, cfg Config) *Pool {
	cfg.Clock = clock.NowFrom(func() time.Time { return t0 })
	return New(st, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// running runs the pool until the test ends.
func running(t *testing.T, p *Pool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// wait polls the task until it is no longer running.
func wait(t *testing.T, st *store.Store, id string) store.Task {
	t.Helper()
	for range 5000 {
		task, err := st.TaskByID(context.Background(), "p1", id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != store.TaskRunning {
			return task
		}
		time.Sleep(time.Millisecond) // polling, as a client does; the outcome is not timed
	}
	t.Fatalf("task %s still running", id)
	return store.Task{}
}

func TestTasksReportTheirOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		fn           Func
		wantStatus   string
		wantResult   string
		wantMessages string
	}{
		{"result", func(context.Context) ([]byte, error) { return []byte(`{"rows":3}`), nil }, store.TaskOK, `{"rows":3}`, "[]"},
		{"user's error", func(context.Context) ([]byte, error) {
			return nil, Errorf("The token (%s) is not valid.", "abc")
		}, store.TaskError, "",
			`[{"error":{"errorClass":"User","component":"md","message":"The token (%s) is not valid.","parameters":["abc"]}}]`},
		{"internal error", func(context.Context) ([]byte, error) { return nil, errors.New("disk full at /secret/path") },
			store.TaskError, "", `[{"error":{"errorClass":"Internal","component":"md","message":"Internal error; the task id %s identifies it in the log","parameters":["$id"]}}]`},
		{"panic", func(context.Context) ([]byte, error) { panic("boom") },
			store.TaskError, "", `[{"error":{"errorClass":"Internal","component":"md","message":"Internal error; the task id %s identifies it in the log","parameters":["$id"]}}]`},
	}
	st := openStore(t)
	p := newPool(st, Config{Workers: 2})
	running(t, p)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			started, err := p.Start(context.Background(), store.Task{ProjectID: "p1", Kind: "test", StartedBy: "u1"}, tc.fn)
			if err != nil {
				t.Fatal(err)
			}
			if started.Status != store.TaskRunning || started.ID == "" {
				t.Fatalf("started %+v", started)
			}
			got := wait(t, st, started.ID)
			wantMsgs := replaceID(tc.wantMessages, started.ID)
			if got.Status != tc.wantStatus || string(got.Result) != tc.wantResult || string(got.Messages) != wantMsgs ||
				got.StartedBy != "u1" || !got.Finished.Equal(t0) {
				t.Fatalf("task %+v, messages %s; want %s %s %s", got, got.Messages, tc.wantStatus, tc.wantResult, wantMsgs)
			}
		})
	}
}

func replaceID(s, id string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if i+3 <= len(s) && s[i:i+3] == "$id" {
			out = append(out, id...)
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

func TestFullQueueRefusesAndStopFailsWhatIsLeft(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	p := newPool(st, Config{Workers: 1, Queue: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()

	started := make(chan struct{})
	blocking := func(ctx context.Context) ([]byte, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	first, err := p.Start(ctx, store.Task{ProjectID: "p1", Kind: "test"}, blocking)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	queued, err := p.Start(ctx, store.Task{ProjectID: "p1", Kind: "test"}, func(context.Context) ([]byte, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	refused, err := p.Start(ctx, store.Task{ProjectID: "p1", Kind: "test"}, func(context.Context) ([]byte, error) { return nil, nil })
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("a start beyond the queue: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id, text string
	}{
		{"running", first.ID, "The task was cut off: the service stopped before it finished."},
		{"queued", queued.ID, "The task was cut off: the service stopped before it finished."},
		{"refused", refused.ID, "The task was refused: too many tasks are waiting to run."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := st.TaskByID(context.Background(), "p1", tc.id)
			msgs := Decode(got.Messages)
			if got.Status != store.TaskError || len(msgs) != 1 || msgs[0].Text() != tc.text {
				t.Fatalf("task %+v %s", got, got.Messages)
			}
		})
	}
	// A stopped pool refuses new tasks rather than leave them waiting forever.
	if _, err := p.Start(context.Background(), store.Task{ProjectID: "p1", Kind: "test"}, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("start on a stopped pool: %v", err)
	}
}

func TestRecoverFailsTasksOfAPreviousProcess(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	ctx := context.Background()
	// A previous process queued a task and never ran it.
	before := newPool(st, Config{})
	left, err := before.Start(ctx, store.Task{ProjectID: "p1", Kind: "test"}, func(context.Context) ([]byte, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	p := newPool(st, Config{})
	n, err := p.Recover(ctx)
	if err != nil || n != 1 {
		t.Fatalf("recovered %d, %v", n, err)
	}
	got, _ := st.TaskByID(ctx, "p1", left.ID)
	msgs := Decode(got.Messages)
	if got.Status != store.TaskError || len(msgs) != 1 || msgs[0].Text() != "The task was cut off: the service restarted before it finished." {
		t.Fatalf("task %+v %s", got, got.Messages)
	}
}

func TestDecodeIgnoresWhatItCannotRead(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "[]", "{", `{"error":1}`} {
		if got := Decode([]byte(in)); len(got) != 0 {
			t.Errorf("Decode(%q) = %v", in, got)
		}
	}
}

// TestDeclaredKindsCountFromZero: the count of finished tasks of each
// declared kind is exported, at 0 by state, before any task finished.
func TestDeclaredKindsCountFromZero(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	p := New(nil, Config{Registerer: reg}, nil)
	p.Declare("validate", "project.export")
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, series := range []string{
		`herald_task_tasks_total{state="ERROR",type="project.export"} 0`,
		`herald_task_tasks_total{state="ERROR",type="validate"} 0`,
		`herald_task_tasks_total{state="OK",type="project.export"} 0`,
		`herald_task_tasks_total{state="OK",type="validate"} 0`,
	} {
		if !strings.Contains(rec.Body.String(), series+"\n") {
			t.Errorf("no %s in\n%s", series, rec.Body)
		}
	}
}
