package distant_test

import (
	"bufio"
	"net"
	"net/textproto"
	"testing"
	"testing/synctest"
	"time"

	"github.com/heraldhq/herald/bench/internal/distant"
)

// pipeListener accepts the far ends of in-memory connections made by dial.
type pipeListener struct{ conns chan net.Conn }

func (l pipeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}
func (l pipeListener) Close() error   { close(l.conns); return nil }
func (l pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv6loopback} }

func (l pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

// TestAReplyTakesARoundTrip: through the listener, a greeting comes no
// sooner than d after the connection, an answer no sooner than 2d after its
// line, and two lines written together are both answered after one round
// trip, not two. The connections are in memory and the times the bubble's,
// so that no test waits in real time or depends on the machine's load.
func TestAReplyTakesARoundTrip(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const d = 50 * time.Millisecond
		pl := pipeListener{conns: make(chan net.Conn, 1)}
		ln := distant.Listener(pl, d)
		defer ln.Close()
		began := time.Now()
		c := textproto.NewConn(pl.dial())
		served := make(chan struct{})
		defer func() { c.Close(); <-served }() // the server sees the close d later
		go func() {
			defer close(served)
			sc, err := ln.Accept()
			if err != nil {
				return
			}
			defer sc.Close()
			_, _ = sc.Write([]byte("220 hello\r\n"))
			lines := bufio.NewScanner(sc)
			for lines.Scan() {
				_, _ = sc.Write([]byte("250 " + lines.Text() + "\r\n"))
			}
		}()
		if _, _, err := c.ReadResponse(220); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took < d {
			t.Errorf("greeting after %v, want at least %v", took, d)
		}
		sent := time.Now()
		if err := c.PrintfLine("one"); err != nil {
			t.Fatal(err)
		}
		if _, msg, err := c.ReadResponse(250); err != nil || msg != "one" {
			t.Fatalf("answer %q, %v", msg, err)
		}
		if took := time.Since(sent); took < 2*d {
			t.Errorf("answered after %v, want at least %v", took, 2*d)
		}
		sent = time.Now()
		if _, err := c.W.WriteString("two\r\nthree\r\n"); err != nil {
			t.Fatal(err)
		}
		if err := c.W.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"two", "three"} {
			if _, msg, err := c.ReadResponse(250); err != nil || msg != want {
				t.Fatalf("answer %q, %v; want %q", msg, err, want)
			}
		}
		if took := time.Since(sent); took < 2*d || took >= 4*d {
			t.Errorf("two lines written together answered after %v, want one round trip (%v to %v)", took, 2*d, 4*d)
		}
	})
}
