package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/textproto"
	"strings"
	"sync"

	"github.com/emersion/go-smtp"
)

// sink is an SMTP server on 127.0.0.1 that accepts every message and
// remembers how often each Message-ID arrived.
type sink struct {
	srv    *smtp.Server
	ln     net.Listener
	served chan struct{}

	mu     sync.Mutex
	ids    map[string]int
	total  int
	target int
	done   chan struct{} // closed when total reaches target
}

func newSink(target int) (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{ln: ln, served: make(chan struct{}), ids: make(map[string]int, target), target: target, done: make(chan struct{})}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: s}, nil }))
	s.srv.Domain = "localhost"
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

func (s *sink) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *sink) close() {
	_ = s.srv.Shutdown(context.Background())
	<-s.served
}

// counts returns how many messages arrived and how many distinct Message-IDs.
func (s *sink) counts() (total, distinct int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, len(s.ids)
}

func (s *sink) record(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[id]++
	s.total++
	if s.total == s.target {
		close(s.done)
	}
}

type sinkSession struct{ s *sink }

func (*sinkSession) AuthMechanisms() []string             { return nil }
func (*sinkSession) Mail(string, *smtp.MailOptions) error { return nil }
func (*sinkSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (*sinkSession) Reset()                               {}
func (*sinkSession) Logout() error                        { return nil }
func (ss *sinkSession) Data(r io.Reader) error {
	br := bufio.NewReader(r)
	h, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err
	}
	id := strings.TrimSpace(h.Get("Message-Id"))
	if id == "" {
		return errors.New("no Message-ID")
	}
	ss.s.record(id)
	return nil
}
