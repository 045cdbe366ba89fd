package channeltest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// ClosedPort returns a loopback address, host:port, at which nothing
// listens: a connection to it is refused.
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// Speaker listens on a loopback port and answers every connection with
// answer, once it has read what the client sent first (up to 4 KiB, or
// nothing within a second), then closes it: with a nil answer it closes
// after reading, and with bytes of no protocol it speaks garbage. It
// returns the address, host:port; the listener closes when the test ends.
func Speaker(t testing.TB, answer []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(time.Second))
				_, _ = c.Read(make([]byte, 4<<10))
				_, _ = c.Write(answer)
			})
		}
	})
	return l.Addr().String()
}
