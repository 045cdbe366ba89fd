package channeltest_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/heraldhq/herald/channels/channeltest"
)

// TestClosedPortRefusesAndIsTakenByNoListener: a dial to the port is refused,
// and no listener gets it while the test runs, asked for by number or by
// the system's choice of a free port.
func TestClosedPortRefusesAndIsTakenByNoListener(t *testing.T) {
	t.Parallel()
	addr := channeltest.ClosedPort(t)
	if c, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("a listener took %s", addr)
	}
	for range 2000 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := l.Addr().String()
		l.Close()
		if got == addr {
			t.Fatalf("the system gave %s to a listener", addr)
		}
	}
}
