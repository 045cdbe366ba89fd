package engine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// TestUnreadableFileFailsAtRender: a PDF that does not come out as a PDF
// is never handed over: the run fails at the render stage, and the health
// roll-up tells the owner at once, not after the failures in a row it waits
// for otherwise.
func TestUnreadableFileFailsAtRender(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 1)
		b.exec.garble = "PDF"
		b.subscribe(t, "s1", "0 0 * * * *", "true", "daily", func(s *store.Subscription) {
			s.Def.Attachments = []store.ReportAttachment{{Report: "/svc/md/p1/obj/9", Formats: []string{"PDF"}}}
		})
		domain := notify.New(b.st, notify.DefaultConfig(), notify.Options{Domain: "default"})
		e := b.engine(t, func(c *Config) { c.Domain = domain })
		e.fire(context.Background(), Fire{SubscriptionID: "s1", At: time.Now().Add(time.Hour)})
		runs := b.runs(t, "s1")
		if len(runs) != 1 || runs[0].State != store.RunFailed || !strings.HasPrefix(runs[0].Error, "render: ") ||
			!strings.Contains(runs[0].Error, "the PDF file came out unreadable") {
			t.Fatalf("runs = %+v", runs)
		}
		if d := detailOf(t, runs[0]); d.Stage != "render" {
			t.Errorf("stage = %q, want render", d.Stage)
		}
		if _, err := domain.RateRuns(context.Background()); err != nil {
			t.Fatal(err)
		}
		dels, err := b.st.RunDeliveries(context.Background(), runs[0].ID)
		must(t, err)
		if len(dels) != len(b.channels) || !strings.Contains(dels[0].Payload.Subject, "could not render") ||
			!strings.Contains(dels[0].Payload.Text, "came out unreadable") {
			t.Fatalf("deliveries of the failed run = %+v, want the notice to each of the owner's channels", dels)
		}
	})
}

// TestCheckFile: the signatures and encodings a rendered file is checked for.
func TestCheckFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		format, data string
		ok           bool
	}{
		{"PDF", "%PDF-1.7\n...", true},
		{"PDF", "<html>502 Bad Gateway</html>", false},
		{"PDF", "", false},
		{"PNG", "\x89PNG\r\n\x1a\n....", true},
		{"PNG", "GIF89a", false},
		{"XLS", "PK\x03\x04....", true},
		{"XLS", "Region,Revenue\n", false},
		{"CSV", "Region,Revenue\nPraha,1\n", true},
		{"CSV", "Region\xff\xfe,Revenue\n", false},
		{"CSV", strings.Repeat("a", 4095) + "é", true}, // a character across the part read
		{"HTML", "<table></table>", true},
	} {
		path := dir + "/f"
		must(t, writeFile(path, tc.data))
		if err := checkFile(path, tc.format); (err == nil) != tc.ok {
			t.Errorf("%s %.20q: %v, want ok %v", tc.format, tc.data, err, tc.ok)
		}
	}
}

func writeFile(path, data string) error { return os.WriteFile(path, []byte(data), 0o600) }

// TestNewRowsPerChannel: each channel is sent the rows after the mark of
// the last delivery it was sent; a channel whose delivery failed gets again
// what it missed, and its links lead to its own files.
func TestNewRowsPerChannel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		b := newBundle(t)
		b.exec.set(m1, 1)
		const date = "/svc/md/p1/obj/5"
		b.subscribe(t, "s1", "0 0 * * * *", "true", "daily", func(s *store.Subscription) {
			s.Def.Attachments = []store.ReportAttachment{{Report: "/svc/md/p1/obj/9", Formats: []string{"PDF"}, NewRowsBy: date}}
		})
		domain := notify.New(b.st, notify.DefaultConfig(), notify.Options{Domain: "default", PublicURL: "https://h.test",
			LinkKey: []byte("0123456789abcdef0123456789abcdef")})
		e := b.engine(t, func(c *Config) { c.Domain = domain })
		key := "/svc/md/p1/obj/9 " + date
		at := time.Now().Add(time.Hour)
		e.fire(ctx, Fire{SubscriptionID: "s1", At: at})
		first := b.runs(t, "s1")[0]
		dels, err := b.st.RunDeliveries(ctx, first.ID)
		must(t, err)
		for _, d := range dels {
			if d.ChannelID == b.channels[0] {
				_, err = b.st.MarkSent(ctx, d.ID, "id", at)
			} else {
				_, err = b.st.MarkFailed(ctx, d.ID, "refused", at)
			}
			must(t, err)
		}
		marks, err := b.st.ChannelMarks(ctx, "s1")
		must(t, err)
		if len(marks) != 1 || marks[b.channels[0]].HighWater[key] != 10 {
			t.Fatalf("marks after the first run = %+v, want day 10 for the channel sent to", marks)
		}

		e.fire(ctx, Fire{SubscriptionID: "s1", At: at.Add(time.Hour)})
		second := b.runs(t, "s1")[1]
		files := detailOf(t, second).Files
		dels, err = b.st.RunDeliveries(ctx, second.ID)
		must(t, err)
		if len(dels) != 2 || len(files) != 4 { // a PDF and a chart per channel
			t.Fatalf("%d deliveries, %d files", len(dels), len(files))
		}
		for _, d := range dels {
			sent := d.ChannelID == b.channels[0]
			want := map[bool]string{true: "/after/10 PDF", false: "/after/0 PDF"}[sent]
			pdf := d.Payload.Attachments[0]
			data, err := os.ReadFile(pdf.Path)
			must(t, err)
			if !strings.HasSuffix(string(data), want) {
				t.Errorf("channel %s (sent before: %v) is sent %q, want the rows %s", d.ChannelID, sent, data, want)
			}
			i := map[bool]string{true: ".0.", false: ".2."}[sent] // its PDF among the run's files
			if len(d.Payload.Links.Files) != 1 || !strings.Contains(d.Payload.Links.Files[0].URL, second.ID+i) ||
				files[map[bool]int{true: 0, false: 2}[sent]].Path != pdf.Path {
				t.Errorf("channel %s: links %+v to files %+v", d.ChannelID, d.Payload.Links.Files, files)
			}
		}
	})
}

// TestPreviousAtTheFirstFire: a condition that needs a previous value does
// not hold while there is none, rather than failing the run; the value
// each fire saw is the next one's previous.
func TestPreviousAtTheFirstFire(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := newBundle(t)
		b.exec.set(m1, 100, 100, 95, 80)
		prev := "f:previous('" + m1 + "')"
		b.subscribe(t, "s1", "0 0 * * * *", "f:executeMetric('"+m1+"') <= 0.9 * "+prev,
			"from ${"+prev+"} to ${f:executeMetric('"+m1+"')}")
		e := b.engine(t)
		at := time.Now().Add(time.Hour)
		for i := range 4 {
			e.fire(context.Background(), Fire{SubscriptionID: "s1", At: at.Add(time.Duration(i) * time.Hour)})
		}
		var states []string
		for _, r := range b.runs(t, "s1") {
			states = append(states, r.State)
		}
		// 100 (none before), 100, 95 (5% down), 80 (16% down).
		want := []string{store.RunNotTriggered, store.RunNotTriggered, store.RunNotTriggered, store.RunQueued}
		if strings.Join(states, " ") != strings.Join(want, " ") {
			t.Fatalf("states = %v, want %v", states, want)
		}
		if d := detailOf(t, b.runs(t, "s1")[3]); d.Text != "from 95.00 to 80.00" {
			t.Errorf("text = %q", d.Text)
		}
		st, err := b.st.State(context.Background(), "s1")
		must(t, err)
		if v := st.LastValues[m1]; v == nil || *v != 80 {
			t.Errorf("kept previous = %v, want 80", v)
		}
	})
}

// FuzzCheckFile: any bytes, in any format, are checked without a panic,
// and a file that passes is not empty and starts as its format does.
func FuzzCheckFile(f *testing.F) {
	f.Add([]byte("%PDF-1.7"), "PDF")
	f.Add([]byte("Region\xff,1"), "CSV")
	f.Add([]byte("PK\x03\x04"), "XLS")
	f.Add([]byte{}, "PNG")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if checkFile(path, format) == nil && (len(data) == 0 || !bytes.HasPrefix(data, signatures[format])) {
			t.Fatalf("%s %q passed", format, data)
		}
	})
}
