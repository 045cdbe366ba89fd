package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// Paths of the links messages carry, under the public URL. They need no
// login: the signed token in the path is the permission.
const (
	UnsubscribePath = "/unsubscribe/"
	FilePath        = "/f/"
)

// ConsolePath is the path of a subscription's page in the console.
func ConsolePath(sub store.Subscription) string {
	return "/console/projects/" + sub.ProjectID + "/subscriptions/" + sub.ID
}

// Token purposes: a token signed for one cannot be used for the other.
const (
	purposeUnsubscribe = "unsubscribe"
	purposeFile        = "file"
)

// macLen is how many bytes of the HMAC-SHA256 a token keeps: 128 bits.
const macLen = 16

var errBadLink = notFound("This link is not valid: it was changed, or it was made by another installation")

// Links returns the links a message of run to channel cid carries: the
// unsubscribe link, and one download link for each file of files that is not
// an inline image. Without a public URL it returns none.
func (s *Service) Links(sub store.Subscription, runID, cid string, files []store.Attachment) channels.Links {
	return s.LinksAt(sub, runID, cid, files, nil)
}

// LinksAt is Links of files that are at[i] among the run's files (at nil:
// the run's files are files), as in a run whose recipients' slices attach
// files of their own.
func (s *Service) LinksAt(sub store.Subscription, runID, cid string, files []store.Attachment, at []int) channels.Links {
	if s.publicURL == "" || len(s.linkKey) == 0 {
		return channels.Links{}
	}
	l := channels.Links{Unsubscribe: s.publicURL + UnsubscribePath + s.unsubscribeToken(sub, cid, runID),
		Subscription: s.publicURL + ConsolePath(sub)}
	expires := s.now().Add(s.cfg.FileLinkTTL).Truncate(time.Second)
	for i, f := range files {
		if f.ContentID == "" {
			n := i
			if at != nil {
				n = at[i]
			}
			l.Files = append(l.Files, s.fileLink(runID, n, f.Name, expires))
		}
	}
	return l
}

// fileLink is the download link of the i-th file of run, named name, until expires.
func (s *Service) fileLink(runID string, i int, name string, expires time.Time) channels.FileLink {
	exp := strconv.FormatInt(expires.Unix(), 36)
	return channels.FileLink{Name: name, Expires: expires.UTC(),
		URL: s.publicURL + FilePath + s.sign(purposeFile, runID, strconv.Itoa(i), exp)}
}

// unsubscribeToken is the token of the unsubscribe link of run's message to
// channel cid: the subscription, the channel, the run, the channel's
// generation (a resume moves it on, voiding the link) and when the link expires.
func (s *Service) unsubscribeToken(sub store.Subscription, cid, runID string) string {
	exp := s.now().Add(s.cfg.LinkTTL).Unix()
	return s.sign(purposeUnsubscribe, sub.ID, cid, runID, strconv.FormatInt(sub.Generations[cid], 36), strconv.FormatInt(exp, 36))
}

// sign joins fields with dots and appends their MAC. Fields are ids of
// [A-Za-z0-9] and numbers, so a dot never occurs inside one.
func (s *Service) sign(purpose string, fields ...string) string {
	body := strings.Join(fields, ".")
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac(purpose, body))
}

func (s *Service) mac(purpose, body string) []byte {
	m := hmac.New(sha256.New, s.linkKey)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return m.Sum(nil)[:macLen]
}

// verify returns the fields of a token signed for purpose, which must be
// one of the counts n.
func (s *Service) verify(purpose, token string, n ...int) ([]string, error) {
	if len(s.linkKey) == 0 || len(token) > 256 {
		return nil, errBadLink
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 {
		return nil, errBadLink
	}
	body, sig := token[:i], token[i+1:]
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(purpose, body)) {
		return nil, errBadLink
	}
	fields := strings.Split(body, ".")
	if !slices.Contains(n, len(fields)) {
		return nil, errBadLink
	}
	return fields, nil
}

// Unsubscription is what an unsubscribe link stops: one subscription's
// messages to one channel.
type Unsubscription struct {
	Subscription store.Subscription
	ChannelID    string
	Recipient    string // the channel's address, as a person reads it
	Paused       *store.Pause
	runID        string
	generation   int64 // the channel's generation when the link was made
}

// errResumed is the answer of a link made before its channel was turned back on.
var errResumed = gone("This link was made before the subscription was turned back on for this channel, " +
	"so it no longer works; the latest message carries one that does")

// Unsubscription reads what the unsubscribe token stands for, without
// changing anything. A link works until it expires (subscriptions.linkTTL
// after it was made), and only while its channel is in the generation the
// link was made in: once the owner turned the channel back on, the links
// sent before no longer pause it.
//
// Links made before they carried a generation and an expiry (three fields)
// are read as of generation 0, expiring linkTTL after their run was
// scheduled, and not at all once the run is no longer kept.
func (s *Service) Unsubscription(ctx context.Context, token string) (Unsubscription, error) {
	f, err := s.verify(purposeUnsubscribe, token, 3, 5)
	if err != nil {
		return Unsubscription{}, err
	}
	u := Unsubscription{ChannelID: f[1], runID: f[2]}
	if err := s.checkExpiry(ctx, &u, f); err != nil {
		return u, err
	}
	u.Subscription, err = s.st.SubscriptionByID(ctx, f[0])
	if errors.Is(err, store.ErrNotFound) {
		return u, notFound("The subscription this message came from was deleted: nothing more will be sent")
	}
	if err != nil {
		return u, err
	}
	ch, err := s.st.ChannelByID(ctx, u.ChannelID)
	if errors.Is(err, store.ErrNotFound) {
		return u, notFound("The channel this message came to was deleted: nothing more will be sent to it")
	}
	if err != nil {
		return u, err
	}
	if u.Subscription.Generations[u.ChannelID] != u.generation {
		return u, errResumed
	}
	if d, ok := s.kinds.Lookup(channels.Kind(ch.Kind)); ok {
		u.Recipient = d.Recipient(ch.Config)
	}
	if p, ok := u.Subscription.Paused[u.ChannelID]; ok {
		u.Paused = &p
	}
	return u, nil
}

// checkExpiry sets u's generation from the token's fields f and answers
// whether the link has expired.
func (s *Service) checkExpiry(ctx context.Context, u *Unsubscription, f []string) error {
	var expires time.Time
	if len(f) == 5 {
		gen, err1 := strconv.ParseInt(f[3], 36, 64)
		exp, err2 := strconv.ParseInt(f[4], 36, 64)
		if err1 != nil || err2 != nil {
			return errBadLink
		}
		u.generation, expires = gen, time.Unix(exp, 0)
	} else {
		run, err := s.st.RunByID(ctx, u.runID)
		if errors.Is(err, store.ErrNotFound) {
			return gone("This link has expired")
		}
		if err != nil {
			return err
		}
		expires = run.ScheduledAt.Add(s.cfg.LinkTTL)
	}
	if !s.now().Before(expires) {
		return gone("This link expired on %s", expires.UTC().Format(time.RFC1123))
	}
	return nil
}

// Unsubscribe pauses the subscription for the channel the token names, and
// notes it in the run whose message carried the link, as done by the
// channel's recipient. A second call changes nothing.
func (s *Service) Unsubscribe(ctx context.Context, token string) (Unsubscription, error) {
	u, err := s.Unsubscription(ctx, token)
	if err != nil || u.Paused != nil {
		return u, err
	}
	by := u.Recipient
	if by == "" {
		by = "the recipient"
	}
	by += " (unsubscribe link)"
	at := s.now().UTC().Truncate(time.Second)
	changed, err := s.st.PauseChannel(ctx, u.Subscription.ID, u.ChannelID, u.generation, u.runID, by, at)
	if errors.Is(err, store.ErrNotFound) {
		return u, notFound("The subscription no longer sends to this channel")
	}
	if errors.Is(err, store.ErrConflict) {
		return u, errResumed // turned back on since the read above
	}
	if err != nil {
		return u, err
	}
	if changed {
		s.log.Info("channel unsubscribed", "subscription", u.Subscription.ID, "channel", u.ChannelID, "run", u.runID)
		s.changed(u.Subscription.ID)
		s.callOff(ctx, u.Subscription.ID, u.ChannelID, "called off: the recipient unsubscribed")
	}
	u.Paused = &store.Pause{By: by, At: at}
	return u, nil
}

// SharedFile is a run's attachment a download link names.
type SharedFile struct {
	store.Attachment
	Expires time.Time
}

// SharedFile returns the file a download link names, while the link has not
// expired and the run still has the file.
func (s *Service) SharedFile(ctx context.Context, token string) (SharedFile, error) {
	f, err := s.verify(purposeFile, token, 3)
	if err != nil {
		return SharedFile{}, err
	}
	i, err1 := strconv.Atoi(f[1])
	exp, err2 := strconv.ParseInt(f[2], 36, 64)
	if err1 != nil || err2 != nil {
		return SharedFile{}, errBadLink
	}
	out := SharedFile{Expires: time.Unix(exp, 0).UTC()}
	if !s.now().Before(out.Expires) {
		return out, gone("This link expired on %s", out.Expires.Format(time.RFC1123))
	}
	run, err := s.st.RunByID(ctx, f[0])
	if errors.Is(err, store.ErrNotFound) {
		return out, gone("The run this file belonged to is no longer kept")
	}
	if err != nil {
		return out, err
	}
	files := Detail(run).Files
	if i < 0 || i >= len(files) || files[i].ContentID != "" {
		return out, errBadLink
	}
	out.Attachment = files[i]
	if _, err := os.Stat(out.Path); errors.Is(err, os.ErrNotExist) {
		return out, gone("This file is no longer kept")
	}
	return out, nil
}

// CheckPublicURL validates the public URL links are built on; "" is valid
// (no links).
func CheckPublicURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q must be an http or https URL such as https://herald.example.com", v)
	}
	return nil
}
