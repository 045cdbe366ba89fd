package channeltest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TCPProxy forwards connections from a fixed loopback port to a target. Down
// closes the port and every connection, as a relay going away does; Up opens
// the same port again. Hang makes it take new connections and say nothing on
// them, as a relay does that accepts and never greets.
type TCPProxy struct {
	target string
	addr   string

	mu      sync.Mutex
	ln      net.Listener // nil while down
	conns   map[net.Conn]struct{}
	hanging bool
	wg      sync.WaitGroup
}

// NewTCPProxy forwards a new loopback port to target until the test ends.
func NewTCPProxy(t testing.TB, target string) *TCPProxy {
	t.Helper()
	p := &TCPProxy{target: target, addr: "127.0.0.1:0", conns: make(map[net.Conn]struct{})}
	p.Up(t)
	t.Cleanup(p.Down)
	return p
}

// Port is the proxy's port.
func (p *TCPProxy) Port() int {
	_, port, _ := net.SplitHostPort(p.addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Up opens the port again.
func (p *TCPProxy) Up(t testing.TB) {
	t.Helper()
	ln, err := p.listen()
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() { p.accept(ln) })
}

// Down closes the port and every connection through it.
func (p *TCPProxy) Down() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Hang makes the proxy hold the connections it takes from now on without a
// word, until the client gives up or Down closes them (on), or forward them
// again (off). Connections taken while hanging stay silent.
func (p *TCPProxy) Hang(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hanging = on
}

func (p *TCPProxy) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.hanging {
			p.conns[c] = struct{}{}
			p.mu.Unlock()
			continue
		}
		p.mu.Unlock()
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // went down meanwhile
			p.mu.Unlock()
			_ = c.Close()
			_ = up.Close()
			return
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(c, up) })
		p.wg.Go(func() { p.pipe(up, c) })
	}
}

// pipe copies src to dst and closes both when src ends.
func (p *TCPProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
	_ = dst.Close()
	_ = src.Close()
}

// listen opens the proxy's port, and at the first Up picks it: below the
// range the kernel hands out for port 0 and for outgoing connections, where
// it says which that is (Linux). While the proxy is down no other listener or
// connection is given that port, so that Up takes it again however many other
// tests run meanwhile.
func (p *TCPProxy) listen() (net.Listener, error) {
	if p.addr == "127.0.0.1:0" {
		if low, ok := ephemeralLow(); ok {
			for range 100 {
				ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", proxyFloor+rand.IntN(low-proxyFloor)))
				if err == nil {
					return ln, nil
				}
			}
		}
	}
	return net.Listen("tcp", p.addr)
}

// ephemeralLow is the lowest port the kernel hands out by itself, where it
// says (Linux), if there is room below it for a proxy's port.
func ephemeralLow() (int, bool) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 0, false
	}
	low, err := strconv.Atoi(fields[0])
	return low, err == nil && low > proxyFloor
}

// proxyFloor is the lowest port a proxy picks: above the ports services are
// commonly given.
const proxyFloor = 10000
