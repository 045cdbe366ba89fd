package channels

import "net/http"

// Transport returns a pool of HTTP connections of a sender's own, with Go's
// defaults (proxy from the environment, HTTP/2 where the server offers it,
// dial and handshake timeouts), that keeps up to conns idle connections to
// each host. A kind that runs conns sends at once to one provider then reuses
// its connections; with Go's default of two, all but two of them would be
// closed after each send and the next sends would dial, and shake TLS hands,
// again.
func Transport(conns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(conns, http.DefaultMaxIdleConnsPerHost)
	t.MaxIdleConns = max(t.MaxIdleConns, t.MaxIdleConnsPerHost)
	return t
}
