package channeltest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// ClosedPort returns a loopback address, host:port, that refuses every
// connection for as long as the test runs. A port merely closed again would be
// free for the next listener of a test running beside this one, which would
// then answer in its place; this one is held by a socket bound to it that
// does not listen, which the system refuses connections for and gives no
// other socket.
func ClosedPort(t testing.TB) string {
	t.Helper()
	addr, release, err := holdPort()
	if err != nil {
		t.Fatalf("hold a closed loopback port: %v", err)
	}
	t.Cleanup(release)
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
