package distant_test

import (
	"bufio"
	"net"
	"net/textproto"
	"testing"
	"time"

	"github.com/heraldhq/herald/bench/internal/distant"
)

// TestAReplyTakesARoundTrip: through the listener, a greeting comes no
// sooner than d after the connection, an answer no sooner than 2d after its
// line, and two lines written together are both answered after one round
// trip, not two.
func TestAReplyTakesARoundTrip(t *testing.T) {
	t.Parallel()
	const d = 50 * time.Millisecond
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := distant.Listener(l, d)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write([]byte("220 hello\r\n"))
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			_, _ = c.Write([]byte("250 " + sc.Text() + "\r\n"))
		}
	}()
	began := time.Now()
	c, err := textproto.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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
}
