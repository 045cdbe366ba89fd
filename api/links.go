package api

import (
	"errors"
	htmltemplate "html/template"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/heraldhq/herald/notify"
	"github.com/heraldhq/herald/store"
)

// The links messages carry need no login: the signed token in the path is
// the permission. They answer pages for people, not JSON.

// linkPage is the one small page of an unsubscribe link: what it stops, a
// button that does it, or what happened.
var linkPage = htmltemplate.Must(htmltemplate.New("link").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Heading}} · Herald</title>
<style>
body{margin:0;background:#f3f4f6;font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#111827}
main{max-width:32rem;margin:12vh auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.35rem;margin:0 0 .75rem}
p{margin:0 0 1rem}
button{font:inherit;font-weight:600;padding:.6rem 1.2rem;border:0;border-radius:8px;background:#b91c1c;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
button.accept{background:#15803d}
.muted{color:#6b7280;font-size:.9rem}
</style></head>
<body><main>
<h1>{{.Heading}}</h1>
{{range .Lines}}<p>{{.}}</p>{{end}}
{{if .Ask}}<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>{{end}}
{{if .Accept}}<form method="post"><button type="submit" class="accept">Accept the messages</button></form>{{end}}
<p class="muted">Herald · scheduled reports and alerts</p>
</main></body></html>
`))

type linkView struct {
	Heading string
	Lines   []string
	Ask     bool // the unsubscribe button
	Accept  bool // the button that accepts a channel's messages
}

// pageHeaders keep a link page from being framed, cached or scripted.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
}

func (s *Server) page(w http.ResponseWriter, status int, v linkView) {
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := linkPage.Execute(w, v); err != nil {
		s.log.Warn("link page", "err", err)
	}
}

// linkError shows a refusal of the domain as a page; other errors go to the
// usual error path.
func (s *Server) linkError(w http.ResponseWriter, err error) error {
	var de *notify.Error
	if !errors.As(err, &de) {
		return err
	}
	status := http.StatusNotFound
	if de.Code == notify.Gone {
		status = http.StatusGone
	}
	s.page(w, status, linkView{Heading: "This link does not work any more", Lines: []string{de.Text()}})
	return nil
}

// unsubscribe serves an unsubscribe link. GET asks (mail scanners follow
// links, so a GET changes nothing); POST, from the page's button or a mail
// client's one-click request (RFC 8058), pauses the subscription for the
// channel and says so.
func (s *Server) unsubscribe(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		_ = r.ParseForm() // List-Unsubscribe=One-Click or nothing; the token decides
		u, err := s.notify.Unsubscribe(r.Context(), token)
		if err != nil {
			return s.linkError(w, err)
		}
		s.page(w, http.StatusOK, linkView{Heading: "Unsubscribed", Lines: []string{
			"“" + u.Subscription.Title + "” sends nothing more to " + recipient(u) + ".",
			"Its owner sees this in the subscription's history and can turn it back on.",
		}})
		return nil
	}
	u, err := s.notify.Unsubscription(r.Context(), token)
	if err != nil {
		return s.linkError(w, err)
	}
	if u.Paused != nil {
		s.page(w, http.StatusOK, linkView{Heading: "Already unsubscribed", Lines: []string{
			"“" + u.Subscription.Title + "” has sent nothing to " + recipient(u) + " since " +
				u.Paused.At.Format("2 January 2006 15:04 MST") + ".",
		}})
		return nil
	}
	s.page(w, http.StatusOK, linkView{Ask: true, Heading: "Unsubscribe?", Lines: []string{
		"Stop “" + u.Subscription.Title + "” from sending to " + recipient(u) + ".",
	}})
	return nil
}

func recipient(u notify.Unsubscription) string {
	if u.Recipient == "" {
		return "this channel"
	}
	return u.Recipient
}

// sharedFile serves a download link of an attachment.
func (s *Server) sharedFile(w http.ResponseWriter, r *http.Request) error {
	f, err := s.notify.SharedFile(r.Context(), r.PathValue("token"))
	if err != nil {
		return s.linkError(w, err)
	}
	pageHeaders(w)
	w.Header().Set("Expires", f.Expires.Format(http.TimeFormat))
	err = s.serveFile(w, r, f.Attachment)
	if errors.Is(err, os.ErrNotExist) {
		w.Header().Del("Expires")
		s.page(w, http.StatusGone, linkView{Heading: "This link does not work any more", Lines: []string{"This file is no longer kept."}})
		return nil
	}
	return err
}

// serveFile sends a run's attachment as a download of its type (never as
// HTML). A file that is gone gives an error wrapping os.ErrNotExist, before
// anything is written.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, a store.Attachment) error {
	file, err := os.Open(a.Path)
	if err != nil {
		return err
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return err
	}
	s.longDeadlines(w)
	w.Header().Set("Content-Type", contentTypeOr(a.ContentType))
	w.Header().Set("Content-Disposition", contentDisposition(a.Name))
	http.ServeContent(w, r, "", info.ModTime().Truncate(time.Second), file)
	return nil
}

// contentTypeOr keeps a stored content type that is a plain MIME type, and
// falls back to a download otherwise.
func contentTypeOr(ct string) string {
	if ct == "" || strings.ContainsAny(ct, "\r\n") || strings.HasPrefix(strings.ToLower(ct), "text/html") {
		return "application/octet-stream"
	}
	return ct
}
