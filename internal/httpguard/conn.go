package httpguard

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
)

// Framing wraps ln so that the framing of the requests on each of its
// connections is followed as they are read (see RefuseAmbiguous). The
// http.Server that serves it must take ConnContext as its ConnContext, and
// DisableGeneralOptionsHandler, so that every request it reads reaches the
// handler and the requests are counted alike on both sides.
func Framing(ln net.Listener) net.Listener { return &framingListener{ln} }

type framingListener struct{ net.Listener }

func (l *framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framedConn{Conn: c, f: newFramer()}, nil
}

// framedConn is a connection whose requests are followed as they are read.
type framedConn struct {
	net.Conn
	mu     sync.Mutex // Read and next run on different goroutines
	f      *framer
	served int // requests handed to the handler
}

func (c *framedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.f.feed(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

// next counts a request the server hands to its handler and reports whether
// it is refused. net/http has parsed its header, so the framer has read it.
func (c *framedConn) next() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.served
	c.served++
	return c.f.refused(i)
}

type connKey struct{}

// ConnContext puts a connection that Framing follows in the context of its requests.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framedConn); ok {
		return context.WithValue(ctx, connKey{}, fc)
	}
	return ctx
}

// RefuseAmbiguous wraps h: a request that states its length both by
// Transfer-Encoding and by Content-Length, and every request after it on its
// connection, is answered 400 and the connection closed, so that nothing
// smuggled after it is answered. So is a request read after input that
// net/http would not have framed the way the framer does.
func RefuseAmbiguous(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fc, ok := r.Context().Value(connKey{}).(*framedConn); ok && fc.next() {
			log.InfoContext(r.Context(), "request refused: it states its length both by Transfer-Encoding and by Content-Length, "+
				"or follows one that does; the connection is closed", "remote", r.RemoteAddr)
			w.Header().Set("Connection", "close")
			http.Error(w, "Bad request: its length is given both by Transfer-Encoding and by Content-Length.", http.StatusBadRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}
