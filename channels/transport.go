package channels

import (
	"net/http"
	"time"
)

// Transport returns a pool of HTTP connections of a sender's own, with Go's
// defaults (proxy from the environment, HTTP/2 where the server offers it,
// dial and handshake timeouts), that keeps up to conns idle connections to
// each host. A kind that runs conns sends at once to one provider then reuses
// its connections; with Go's default of two, all but two of them would be
// closed after each send and the next sends would dial, and shake TLS hands,
// again.
func Transport(conns int) *http.Transport {
	t, ok := http.DefaultTransport.(*http.Transport)
	if ok {
		t = t.Clone()
	} else { // replaced by a program; start from what it would have been
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true, MaxIdleConns: 100,
			IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ExpectContinueTimeout: time.Second}
	}
	t.MaxIdleConnsPerHost = max(conns, http.DefaultMaxIdleConnsPerHost)
	t.MaxIdleConns = max(t.MaxIdleConns, t.MaxIdleConnsPerHost)
	return t
}
