package httpguard

import (
	"net"
	"net/netip"
	"sync"
)

// LimitPerClient wraps ln so that one client address holds at most max of its
// connections at once: a connection beyond that is closed as soon as it is
// accepted, and refused (when not nil) is called. An IPv6 client is its /64,
// the block one host is usually given. Addresses in trusted, the proxies in
// front of the service, are not limited: each of their connections may carry
// any client, and which one is known only from the requests; the listener's
// own bound (http.maxConnections) holds them.
func LimitPerClient(ln net.Listener, max int, trusted []netip.Prefix, refused func()) net.Listener {
	return &clientLimit{Listener: ln, max: max, trusted: trusted, refused: refused, conns: make(map[netip.Addr]int)}
}

type clientLimit struct {
	net.Listener
	max     int
	trusted []netip.Prefix
	refused func()

	mu    sync.Mutex
	conns map[netip.Addr]int // open connections by client
}

func (l *clientLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client, limited := l.client(c.RemoteAddr())
		if !limited {
			return c, nil
		}
		if l.take(client) {
			return &clientConn{Conn: c, release: func() { l.give(client) }}, nil
		}
		// Counted first: a client that sees its connection closed finds the
		// refusal in the metrics.
		if l.refused != nil {
			l.refused()
		}
		_ = c.Close()
	}
}

// client is the address a connection from addr counts against, and whether it is limited.
func (l *clientLimit) client(addr net.Addr) (netip.Addr, bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	a := tcp.AddrPort().Addr().Unmap()
	for _, p := range l.trusted {
		if p.Contains(a) {
			return a, false
		}
	}
	if a.Is6() {
		a = netip.PrefixFrom(a.WithZone(""), 64).Masked().Addr()
	}
	return a, true
}

func (l *clientLimit) take(client netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns[client] >= l.max {
		return false
	}
	l.conns[client]++
	return true
}

func (l *clientLimit) give(client netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conns[client]--; l.conns[client] <= 0 {
		delete(l.conns, client)
	}
}

// clientConn gives its client's place back when it is closed, once.
type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
