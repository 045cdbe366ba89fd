package channeltest

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestProxyComesBackOnItsPort: down, the proxy refuses connections; up, it
// takes them on the same port. Where the kernel says which ports it hands
// out by itself, the proxy's is outside them, so that no listener of another
// test and no outgoing connection takes it while the proxy is down.
func TestProxyComesBackOnItsPort(t *testing.T) {
	t.Parallel()
	peer := NewSMTPServer(t)
	p := NewTCPProxy(t, peer.Addr())
	port := p.Port()
	if data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		low, _ := strconv.Atoi(strings.Fields(string(data))[0])
		if port >= low {
			t.Errorf("the proxy's port %d is in the range the kernel hands out (from %d)", port, low)
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p.Down()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("a connection went through while the proxy was down")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while down: %v, want connection refused", err)
	}
	p.Up(t)
	if p.Port() != port {
		t.Fatalf("up again on port %d, want %d", p.Port(), port)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial once up again: %v", err)
	}
	c.Close()
}
