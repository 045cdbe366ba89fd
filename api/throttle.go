package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// loginThrottle slows down repeated failed logins. Each (login, client address) has a
// budget of failures that cost nothing; after it, each attempt must wait a delay that
// doubles with every further failure, up to a cap. On top of that, each login has a
// ceiling of failures from all addresses together; past it, only an address the login
// has succeeded from before may still try, so an attacker spraying from many addresses
// cannot lock the real user out, and one address cannot do it either.
//
// Admitting an attempt and counting it as a failure is one step: the attempt is counted
// before its password is checked and forgiven when it succeeds, so concurrent attempts
// cannot pass a wait together.
type loginThrottle struct {
	mu       sync.Mutex
	free     int // failures per (login, address) that cost nothing
	ceiling  int // failures per login, from all addresses, before unknown addresses wait
	maxDelay time.Duration
	pairs    map[string]*throttleEntry // login + "\x00" + address
	logins   map[string]*throttleEntry
	known    map[string][]string // login → addresses it succeeded from, newest last
}

type throttleEntry struct {
	failures int
	next     time.Time // no attempt before this
	last     time.Time
}

// maxKnown is how many addresses a login's successes are remembered from.
const maxKnown = 16

func newLoginThrottle(free, ceiling int, maxDelay time.Duration) *loginThrottle {
	return &loginThrottle{free: free, ceiling: ceiling, maxDelay: maxDelay,
		pairs: make(map[string]*throttleEntry), logins: make(map[string]*throttleEntry), known: make(map[string][]string)}
}

// admit decides whether an attempt for login from addr may check its password now. When
// it may, the attempt is counted as a failure at once, and done must be called with its
// outcome; when it may not, wait says for how long.
func (t *loginThrottle) admit(login, addr string, now time.Time) (done func(ok bool), wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.forget(now)
	pair := login + "\x00" + addr
	pe, le := t.entry(t.pairs, pair, now), t.entry(t.logins, login, now)
	known := t.isKnown(login, addr)
	if now.Before(pe.next) {
		return nil, pe.next.Sub(now)
	}
	if !known && now.Before(le.next) {
		return nil, le.next.Sub(now)
	}
	t.count(pe, t.free, now)
	t.count(le, t.ceiling, now)
	return func(ok bool) {
		if !ok {
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.pairs, pair)
		if le := t.logins[login]; le != nil {
			// The success forgives its own attempt only: the others stay counted.
			le.failures = max(le.failures-1, 0)
			if le.failures < t.ceiling {
				le.next = time.Time{}
			}
		}
		if !t.isKnown(login, addr) {
			k := append(t.known[login], addr)
			t.known[login] = k[max(len(k)-maxKnown, 0):]
		}
	}, 0
}

func (t *loginThrottle) entry(m map[string]*throttleEntry, key string, now time.Time) *throttleEntry {
	e := m[key]
	if e == nil || now.Sub(e.last) > 2*t.maxDelay {
		e = &throttleEntry{}
		m[key] = e
	}
	return e
}

// count records one more failure in e, and the wait that follows once free are used up.
func (t *loginThrottle) count(e *throttleEntry, free int, now time.Time) {
	e.failures++
	e.last = now
	if over := e.failures - free; over >= 0 {
		delay := t.maxDelay
		if over < 30 && time.Second<<over < t.maxDelay {
			delay = time.Second << over
		}
		e.next = now.Add(delay)
	}
}

func (t *loginThrottle) isKnown(login, addr string) bool {
	for _, a := range t.known[login] {
		if a == addr {
			return true
		}
	}
	return false
}

// forget drops entries quiet for a while once there are many, so that the maps stay bounded.
func (t *loginThrottle) forget(now time.Time) {
	for _, m := range []map[string]*throttleEntry{t.pairs, t.logins} {
		if len(m) <= 10000 {
			continue
		}
		for k, e := range m {
			if now.Sub(e.last) > 2*t.maxDelay {
				delete(m, k)
			}
		}
	}
	if len(t.known) > 100000 {
		clear(t.known)
	}
}

// clientAddress is the address a request came from: the peer's, or, when the peer is a
// trusted proxy, the nearest address in X-Forwarded-For that is not one.
func clientAddress(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !inAny(addr, trusted) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !inAny(hop, trusted) {
			return hop.String()
		}
	}
	return host
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
