package httpguard

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// TestLimitPerClientClosesTheConnectionsBeyondIt: a client address holds at most max
// connections; one more is closed at once and counted, and a place given back is
// taken again; another address, and a trusted proxy's, are not held back by it.
func TestLimitPerClientClosesTheConnectionsBeyondIt(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int32
	ln := LimitPerClient(inner, 2, []netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")}, func() { refused.Add(1) })
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	closedAtOnce := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second)) // a bound on the read, not a wait
		_, err := c.Read(make([]byte, 1))
		return errors.Is(err, io.EOF)
	}

	a1 := dial("127.0.0.2")
	s1 := <-accepted
	dial("127.0.0.2")
	<-accepted
	if closed := closedAtOnce(dial("127.0.0.2")); !closed || refused.Load() != 1 {
		t.Fatalf("a third connection from one address: closed %v, refused %d", closed, refused.Load())
	}
	other := dial("127.0.0.1")
	if s := <-accepted; s.RemoteAddr().String() != other.LocalAddr().String() {
		t.Errorf("accepted %s, want the other address's %s", s.RemoteAddr(), other.LocalAddr())
	}
	for range 4 {
		dial("127.0.0.3")
		<-accepted
	}
	s1.Close()
	a1.Close()
	dial("127.0.0.2")
	if s := <-accepted; s == nil || refused.Load() != 1 {
		t.Errorf("after one connection closed, a new one: refused %d", refused.Load())
	}
}

func TestAnIPv6ClientIsItsSlash64(t *testing.T) {
	t.Parallel()
	l := &clientLimit{}
	a, _ := l.client(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:aaaa::1")})
	b, _ := l.client(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2:bbbb::2")})
	c, _ := l.client(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:3::1")})
	v4, _ := l.client(&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.2")})
	if a != b || a == c || v4 != netip.MustParseAddr("127.0.0.2") {
		t.Errorf("clients %s %s %s %s", a, b, c, v4)
	}
}
