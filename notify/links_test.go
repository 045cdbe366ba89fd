package notify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/internal/clock"
	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/wire"
)

// linkWorld is a fixture whose service builds links, on a clock the test moves,
// with a subscription s1 of u1 that mails to a@example.com and a run r1 of it.
type linkWorld struct {
	*fixture
	now  time.Time
	sub  store.Subscription
	mail string // channel id
}

func newLinkWorld(t testing.TB) *linkWorld {
	t.Helper()
	f := newFixture(t)
	w := &linkWorld{fixture: f, now: t0}
	kinds := channels.MustRegistry(email.Descriptor)
	w.svc = notify.New(f.st, notify.DefaultConfig(), notify.Options{Kinds: kinds, Box: f.box,
		Clock: clock.NowFrom(func() time.Time { return w.now }), PublicURL: "https://herald.example.com/", LinkKey: []byte("0123456789abcdef0123456789abcdef")})
	ctx := context.Background()
	ch, err := w.svc.CreateChannel(ctx, "u1", channelBody(t, `{"configuration":{"emailConfiguration":{"to":"a@example.com"}},"meta":{"title":"m"}}`))
	must(t, err)
	w.mail = ch.ID
	w.sub, err = w.svc.CreateSubscription(ctx, "p1", "u1", subBody(t, `{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * *"}}],
		"condition":{"condition":{"expression":"true"}},"message":{"template":{"expression":"hi"}},
		"channels":["/svc/account/profile/u1/channelConfigurations/`+ch.ID+`"],"meta":{"title":"Morning"}}`))
	must(t, err)
	must(t, f.st.EnqueueRun(ctx, store.Run{ID: "r1", SubscriptionID: w.sub.ID, ScheduledAt: t0, Started: t0},
		[]store.Delivery{{ID: "r1-mail", ChannelID: ch.ID, Kind: "email"}}))
	return w
}

func subBody(t testing.TB, s string) notify.SubscriptionInput {
	t.Helper()
	var b wire.Subscription
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatal(err)
	}
	return subInput(&b)
}

// token is the last path element of a link.
func token(t *testing.T, link, prefix string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Host != "herald.example.com" || !strings.HasPrefix(u.Path, prefix) {
		t.Fatalf("link %q is not under https://herald.example.com%s", link, prefix)
	}
	return strings.TrimPrefix(u.Path, prefix)
}

func TestNoLinksWithoutPublicURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if l := f.svc.Links(store.Subscription{ID: "s1"}, "r1", "c1", []store.Attachment{{Name: "a.pdf"}}); l.Unsubscribe != "" || len(l.Files) != 0 {
		t.Fatalf("links without a public URL: %+v", l)
	}
}

func TestUnsubscribeLinkPausesOneChannel(t *testing.T) {
	t.Parallel()
	w := newLinkWorld(t)
	ctx := context.Background()
	links := w.svc.Links(w.sub, "r1", w.mail, nil)
	if want := "https://herald.example.com/console/projects/p1/subscriptions/" + w.sub.ID; links.Subscription != want {
		t.Errorf("subscription link %q, want %q", links.Subscription, want)
	}
	tok := token(t, links.Unsubscribe, notify.UnsubscribePath)

	u, err := w.svc.Unsubscription(ctx, tok)
	if err != nil || u.Recipient != "a@example.com" || u.Paused != nil || u.Subscription.ID != w.sub.ID {
		t.Fatalf("Unsubscription = %+v, %v", u, err)
	}
	w.now = t0.Add(time.Hour)
	if _, err := w.svc.Unsubscribe(ctx, tok); err != nil {
		t.Fatal(err)
	}
	sub, err := w.st.SubscriptionByID(ctx, w.sub.ID)
	must(t, err)
	p, ok := sub.Paused[w.mail]
	if !ok || !strings.HasPrefix(p.By, "a@example.com") || !p.At.Equal(w.now) {
		t.Fatalf("paused = %+v", sub.Paused)
	}
	run, err := w.st.RunByID(ctx, "r1")
	must(t, err)
	if ev := notify.Detail(run).Events; len(ev) != 1 || ev[0].Event != "unsubscribed" || ev[0].Channel != w.mail {
		t.Fatalf("run events = %+v", ev)
	}
	// Again: nothing changes, no second event.
	w.now = t0.Add(2 * time.Hour)
	u, err = w.svc.Unsubscribe(ctx, tok)
	must(t, err)
	run, _ = w.st.RunByID(ctx, "r1")
	if !u.Paused.At.Equal(t0.Add(time.Hour)) || len(notify.Detail(run).Events) != 1 {
		t.Fatalf("second unsubscribe changed the record: %+v, events %+v", u.Paused, notify.Detail(run).Events)
	}

	// A PUT without pausedChannels keeps the pause; with a list, it sets them.
	body := `{"triggers":[{"timerEvent":{"cronExpression":"0 0 9 * * *"}}],"condition":{"condition":{"expression":"true"}},
		"message":{"template":{"expression":"hi"}},"channels":["/svc/account/profile/u1/channelConfigurations/` + w.mail + `"],
		"meta":{"title":"Morning"}%s}`
	sub, err = w.svc.UpdateSubscription(ctx, "p1", "u1", w.sub.ID, subBody(t, strings.Replace(body, "%s", "", 1)))
	if err != nil || len(sub.Paused) != 1 {
		t.Fatalf("PUT without pausedChannels: %+v, %v", sub.Paused, err)
	}
	_, err = w.svc.UpdateSubscription(ctx, "p1", "u1", w.sub.ID, subBody(t, strings.Replace(body, "%s",
		`,"pausedChannels":[{"channel":"/svc/account/profile/u1/channelConfigurations/other"}]`, 1)))
	var de *notify.Error
	if !errors.As(err, &de) || de.Field != "subscription.pausedChannels[0].channel" {
		t.Fatalf("pausing a channel the subscription has not: %v", err)
	}
	sub, err = w.svc.UpdateSubscription(ctx, "p1", "u1", w.sub.ID, subBody(t, strings.Replace(body, "%s", `,"pausedChannels":[]`, 1)))
	if err != nil || len(sub.Paused) != 0 {
		t.Fatalf("PUT with no paused channels: %+v, %v", sub.Paused, err)
	}
}

func TestForgedLinksAreRefused(t *testing.T) {
	t.Parallel()
	w := newLinkWorld(t)
	ctx := context.Background()
	dir := t.TempDir()
	pdf := filepath.Join(dir, "a.pdf")
	must(t, os.WriteFile(pdf, []byte("%PDF-1.4"), 0o600))
	links := w.svc.Links(w.sub, "r1", w.mail, []store.Attachment{{Name: "a.pdf", Path: pdf}})
	unsub := token(t, links.Unsubscribe, notify.UnsubscribePath)
	file := token(t, links.Files[0].URL, notify.FilePath)
	for name, bad := range map[string]string{
		"changed channel":           strings.Replace(unsub, w.mail, "x"+w.mail[1:], 1),
		"changed signature":         unsub[:len(unsub)-1] + map[bool]string{true: "B", false: "A"}[strings.HasSuffix(unsub, "A")],
		"file token as unsubscribe": file,
		"no signature":              strings.Join(strings.Split(unsub, ".")[:3], "."),
		"empty":                     "",
	} {
		if _, err := w.svc.Unsubscribe(ctx, bad); !isCode(err, notify.NotFound) {
			t.Errorf("%s: %v, want not found", name, err)
		}
	}
	if _, err := w.svc.SharedFile(ctx, unsub); !isCode(err, notify.NotFound) {
		t.Errorf("unsubscribe token as a file: %v", err)
	}
	sub, _ := w.st.SubscriptionByID(ctx, w.sub.ID)
	if len(sub.Paused) != 0 {
		t.Fatalf("a forged link paused %+v", sub.Paused)
	}
}

func TestFileLinkExpires(t *testing.T) {
	t.Parallel()
	w := newLinkWorld(t)
	ctx := context.Background()
	dir := t.TempDir()
	pdf, png := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "chart.png")
	must(t, os.WriteFile(pdf, []byte("%PDF-1.4"), 0o600))
	must(t, os.WriteFile(png, []byte("\x89PNG"), 0o600))
	files := []store.Attachment{{Name: "a.pdf", ContentType: "application/pdf", Path: pdf},
		{Name: "chart.png", Path: png, ContentID: "chart-1@herald"}}
	detail, _ := json.Marshal(notify.RunDetail{Files: files})
	must(t, w.st.EnqueueRun(ctx, store.Run{ID: "r2", SubscriptionID: w.sub.ID, ScheduledAt: t0.Add(time.Hour), Started: t0,
		Detail: detail}, nil))
	links := w.svc.Links(w.sub, "r2", w.mail, files)
	if len(links.Files) != 1 || links.Files[0].Name != "a.pdf" || !links.Files[0].Expires.Equal(t0.Add(notify.DefaultConfig().FileLinkTTL)) {
		t.Fatalf("file links = %+v, want the PDF only (the chart is inline)", links.Files)
	}
	tok := token(t, links.Files[0].URL, notify.FilePath)
	f, err := w.svc.SharedFile(ctx, tok)
	if err != nil || f.Path != pdf || f.ContentType != "application/pdf" {
		t.Fatalf("SharedFile = %+v, %v", f, err)
	}
	w.now = links.Files[0].Expires.Add(-time.Second)
	if _, err := w.svc.SharedFile(ctx, tok); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	w.now = links.Files[0].Expires
	if _, err := w.svc.SharedFile(ctx, tok); !isCode(err, notify.Gone) {
		t.Fatalf("at expiry: %v, want gone", err)
	}
}

// FuzzLinkToken: whatever a client puts in a link's path, the service answers
// without panicking and never takes a forged token.
func FuzzLinkToken(f *testing.F) {
	w := newLinkWorld(f)
	good := w.svc.Links(w.sub, "r1", w.mail, []store.Attachment{{Name: "a.pdf", Path: "/nonexistent"}})
	f.Add(strings.TrimPrefix(good.Unsubscribe, "https://herald.example.com"+notify.UnsubscribePath))
	f.Add(strings.TrimPrefix(good.Files[0].URL, "https://herald.example.com"+notify.FilePath))
	f.Add("a.b.c.")
	f.Add("...")
	f.Fuzz(func(t *testing.T, tok string) {
		ctx := context.Background()
		if u, err := w.svc.Unsubscription(ctx, tok); err == nil && u.Subscription.ID != w.sub.ID {
			t.Fatalf("token %q names subscription %q", tok, u.Subscription.ID)
		}
		_, _ = w.svc.SharedFile(ctx, tok)
	})
}

// resume turns every channel of w.sub back on, as the owner does.
func (w *linkWorld) resume(t *testing.T) {
	t.Helper()
	_, err := w.svc.UpdateSubscription(context.Background(), "p1", "u1", w.sub.ID, subBody(t, `{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * *"}}],
		"condition":{"condition":{"expression":"true"}},"message":{"template":{"expression":"hi"}},
		"channels":["/svc/account/profile/u1/channelConfigurations/`+w.mail+`"],"meta":{"title":"Morning"},"pausedChannels":[]}`))
	must(t, err)
}

// TestUnsubscribeLinkIsVoidOnceResumed: a recipient unsubscribes, the owner turns the
// channel back on, and the old link no longer pauses it (a page saying so, gone); the
// link of a message sent after the resume works.
func TestUnsubscribeLinkIsVoidOnceResumed(t *testing.T) {
	t.Parallel()
	w := newLinkWorld(t)
	ctx := context.Background()
	old := token(t, w.svc.Links(w.sub, "r1", w.mail, nil).Unsubscribe, notify.UnsubscribePath)
	if _, err := w.svc.Unsubscribe(ctx, old); err != nil {
		t.Fatal(err)
	}
	w.resume(t)
	if _, err := w.svc.Unsubscription(ctx, old); !isCode(err, notify.Gone) {
		t.Errorf("reading the old link after the resume: %v, want gone", err)
	}
	if _, err := w.svc.Unsubscribe(ctx, old); !isCode(err, notify.Gone) {
		t.Errorf("the old link after the resume: %v, want gone", err)
	}
	sub, err := w.st.SubscriptionByID(ctx, w.sub.ID)
	must(t, err)
	if len(sub.Paused) != 0 {
		t.Fatalf("the old link paused the channel again: %+v", sub.Paused)
	}
	fresh := token(t, w.svc.Links(sub, "r1", w.mail, nil).Unsubscribe, notify.UnsubscribePath)
	if u, err := w.svc.Unsubscribe(ctx, fresh); err != nil || u.Paused == nil {
		t.Fatalf("the link of a message after the resume: %+v, %v", u, err)
	}
}

// TestUnsubscribeLinkExpires: a link works until subscriptions.linkTTL after it was
// made, and is gone from then on.
func TestUnsubscribeLinkExpires(t *testing.T) {
	t.Parallel()
	w := newLinkWorld(t)
	ctx := context.Background()
	tok := token(t, w.svc.Links(w.sub, "r1", w.mail, nil).Unsubscribe, notify.UnsubscribePath)
	ttl := notify.DefaultConfig().LinkTTL
	w.now = t0.Add(ttl - time.Second)
	if _, err := w.svc.Unsubscription(ctx, tok); err != nil {
		t.Fatalf("a second before it expires: %v", err)
	}
	w.now = t0.Add(ttl)
	if _, err := w.svc.Unsubscribe(ctx, tok); !isCode(err, notify.Gone) {
		t.Fatalf("at expiry: %v, want gone", err)
	}
}

// TestUnsubscribeLinkOfAnEarlierVersion: a link made before links carried a generation
// and an expiry (subscription.channel.run and its MAC) still works, as of generation 0,
// until linkTTL after its run; not once the channel was turned back on, nor once the
// run is no longer kept.
func TestUnsubscribeLinkOfAnEarlierVersion(t *testing.T) {
	t.Parallel()
	w := newLinkWorld(t)
	ctx := context.Background()
	body := w.sub.ID + "." + w.mail + ".r1"
	m := hmac.New(sha256.New, []byte("0123456789abcdef0123456789abcdef"))
	m.Write([]byte("unsubscribe\x00" + body))
	old := body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])

	if u, err := w.svc.Unsubscription(ctx, old); err != nil || u.Recipient != "a@example.com" {
		t.Fatalf("an earlier version's link: %+v, %v", u, err)
	}
	w.now = t0.Add(notify.DefaultConfig().LinkTTL) // r1 was scheduled at t0
	if _, err := w.svc.Unsubscription(ctx, old); !isCode(err, notify.Gone) {
		t.Errorf("an earlier version's link linkTTL after its run: %v, want gone", err)
	}
	w.now = t0.Add(time.Hour)
	if _, err := w.svc.Unsubscribe(ctx, old); err != nil {
		t.Fatal(err)
	}
	w.resume(t)
	if _, err := w.svc.Unsubscribe(ctx, old); !isCode(err, notify.Gone) {
		t.Errorf("an earlier version's link after the resume: %v, want gone", err)
	}
	body = w.sub.ID + "." + w.mail + ".pruned"
	m.Reset()
	m.Write([]byte("unsubscribe\x00" + body))
	if _, err := w.svc.Unsubscription(ctx, body+"."+base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])); !isCode(err, notify.Gone) {
		t.Errorf("an earlier version's link of a run no longer kept: %v, want gone", err)
	}
}
