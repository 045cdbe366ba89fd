package egress

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

// MaxURL is the longest URL CheckURL admits, in bytes.
const MaxURL = 2048

// CheckURL validates a URL a channel names; its errors are
// *channels.FieldError on "url". A literal address is checked as the guard
// checks it when connecting; a host name is not resolved, since the
// transport checks its addresses when it connects.
func (g *Guard) CheckURL(raw string) (*url.URL, error) {
	example := "such as " + g.example
	if raw == "" {
		return nil, channels.Invalid("url", "is required")
	}
	if len(raw) > MaxURL {
		return nil, channels.Invalid("url", "must be at most %d characters", MaxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, channels.Invalid("url", "must be an absolute https URL, %s", example)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, channels.Invalid("url", "must be an https URL, %s; %q is not supported", example, u.Scheme+":")
	}
	if u.User != nil {
		why := "must not hold credentials (user:password@)"
		if g.noCreds != "" {
			why += ": " + g.noCreds
		}
		return nil, channels.Invalid("url", "%s", why)
	}
	if u.Hostname() == "" {
		return nil, channels.Invalid("url", "must name a host, %s", example)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, channels.Invalid("url", "port %s is not a port number", p)
		}
	}
	addr, literal := parseAddr(u.Hostname())
	if literal {
		if why := g.refusal(addr); why != "" {
			return nil, channels.Invalid("url", "%s is %s, refused unless %s admits it", addr, why, g.key)
		}
	} else if why := oddName(u.Hostname()); why != "" {
		return nil, channels.Invalid("url", "%s %s", u.Hostname(), why)
	}
	if u.Scheme == "http" && (len(g.allow) == 0 || literal && !g.allowed(addr)) {
		return nil, channels.Invalid("url", "must be https; plain http only to networks in %s", g.key)
	}
	return u, nil
}

// oddName says why a host that is not a literal address is no name to
// resolve, or returns "": a name whose last label is a number (127.1,
// 2130706433, 0x7f.1) is an address in a form some resolvers read and
// others do not, and localhost names this host (RFC 6761).
func oddName(host string) string {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	last := host[strings.LastIndexByte(host, '.')+1:]
	if hex, ok := strings.CutPrefix(last, "0x"); ok && hex != "" && strings.Trim(hex, "0123456789abcdef") == "" ||
		last != "" && strings.Trim(last, "0123456789") == "" {
		return "is not a host name; write an IPv4 address as four decimal numbers"
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return "names this host, refused"
	}
	return ""
}

// Transport is a pool of connections of its own, conns kept to each host,
// that dials only addresses the guard admits: for plain http, only those in
// the allowed networks. It uses no proxy (which would dial on its own); its
// caller sends with RoundTrip, so that redirects are not followed and
// errors do not quote the URL.
func (g *Guard) Transport(plain bool, conns int) *http.Transport {
	t := channels.Transport(conns)
	t.Proxy = nil
	t.OnProxyConnectResponse = nil
	t.DialTLSContext = nil
	t.DialContext = g.dialer(plain)
	t.MaxResponseHeaderBytes = maxResponseHeader
	return t
}

// maxResponseHeader bounds the headers of a response.
const maxResponseHeader = 64 << 10

// MaxRetryAfter is the longest Retry-After RetryAfter honours.
const MaxRetryAfter = time.Hour

// RetryAfter parses a Retry-After header, seconds or an HTTP date, into a
// delay of at most MaxRetryAfter.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		d = time.Duration(min(secs, int64(MaxRetryAfter/time.Second))) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	} else {
		return 0, false
	}
	return min(max(d, 0), MaxRetryAfter), true
}
