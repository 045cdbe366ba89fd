package distant

import (
	"net"
	"sync"
	"time"
)

// Listener returns ln with d between it and each client it accepts, each
// way: what a client writes is read d later, and what is written to it
// arrives d later, in order, without holding up the writer.
func Listener(ln net.Listener, d time.Duration) net.Listener {
	return &distantListener{Listener: ln, d: d}
}

// distantListener accepts connections whose bytes each take d to arrive.
type distantListener struct {
	net.Listener
	d time.Duration
}

func (l *distantListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	dc := &distantConn{Conn: c, d: l.d, in: make(chan chunk, 64), out: make(chan chunk, 64), closed: make(chan struct{})}
	go dc.receive()
	go dc.send()
	return dc, nil
}

// chunk is what one read or write carried, and when it arrives.
type chunk struct {
	b   []byte
	due time.Time
	err error
}

// distantConn delays what it reads and what it writes by d, in order,
// without holding up the writer: a write returns at once and arrives later.
type distantConn struct {
	net.Conn
	d       time.Duration
	in, out chan chunk
	pending []byte // of the chunk being read
	readErr error

	mu     sync.Mutex // over closing out
	closed chan struct{}
}

// receive reads what the client sent and queues it to arrive d later.
func (c *distantConn) receive() {
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Conn.Read(buf)
		ch := chunk{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(c.d), err: err}
		select {
		case c.in <- ch:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// send writes each queued chunk to the client once it is due.
func (c *distantConn) send() {
	for ch := range c.out {
		time.Sleep(time.Until(ch.due))
		if _, err := c.Conn.Write(ch.b); err != nil {
			for range c.out { // drop the rest, so that no write waits
			}
			return
		}
	}
}

func (c *distantConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		if c.readErr != nil {
			return 0, c.readErr
		}
		var ch chunk
		select {
		case ch = <-c.in:
		case <-c.closed:
			return 0, net.ErrClosed
		}
		time.Sleep(time.Until(ch.due))
		c.pending, c.readErr = ch.b, ch.err
		if len(c.pending) == 0 {
			return 0, c.readErr
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *distantConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	c.out <- chunk{b: append([]byte(nil), p...), due: time.Now().Add(c.d)}
	return len(p), nil
}

func (c *distantConn) Close() error {
	c.mu.Lock()
	select {
	case <-c.closed:
	default:
		close(c.closed)
		close(c.out)
	}
	c.mu.Unlock()
	return c.Conn.Close()
}
