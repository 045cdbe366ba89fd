package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/channels"
)

// guard decides which addresses a webhook may reach: none that is internal
// to the network Herald runs in or not reachable on the internet at large
// (see class), and none of this host's own (see hostAddrs), unless it lies in
// one of the allowed networks.
type guard struct {
	allow []netip.Prefix
	host  *hostAddrs
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
}

// newGuard parses the allowed networks of set; entries that do not parse,
// which Settings.Validate reports, are left out.
func newGuard(set *Settings) *guard {
	g := &guard{host: thisHost, dial: set.Dial}
	if set.InterfaceAddrs != nil {
		g.host = &hostAddrs{read: set.InterfaceAddrs}
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		g.dial = d.DialContext
	}
	for _, n := range set.AllowNetworks {
		p, err := netip.ParsePrefix(strings.TrimSpace(n))
		if err != nil {
			continue
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// ::ffff:10.0.0.0/104 is 10.0.0.0/8; addresses are unmapped before they are matched.
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		g.allow = append(g.allow, p.Masked())
	}
	return g
}

// allowed reports whether a lies in an allowed network.
func (g *guard) allowed(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range g.allow {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// refusal says why a may not be reached, or returns "" when it may: class
// refuses it, or it is an address of this host or an IPv6 form of one, and
// no allowed network holds it.
func (g *guard) refusal(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if g.allowed(a) {
		return ""
	}
	// What class says comes first, so that an internal address of this
	// host is refused in the words its neighbours are: the refusal does
	// not single out the host's addresses among them.
	if why := class(a); why != "" {
		return why
	}
	if g.host.has(a) {
		return "an address of this host"
	}
	for _, v4 := range embedded(a) {
		if g.host.has(v4) {
			return fmt.Sprintf("%s of %s, an address of this host", embeddedForm(a), v4)
		}
	}
	return ""
}

// parseAddr parses host as a literal IP address, with or without an IPv6 zone.
func parseAddr(host string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(host)
	return a, err == nil
}

// dialer returns a DialContext that resolves the host once, checks every
// address it resolves to and dials only those addresses, so that a name
// cannot pass the check with one address and be dialled at another (DNS
// rebinding). With plain, for http, every address must also lie in an
// allowed network. A refused address is a permanent error.
func (g *guard) dialer(resolver Resolver, plain bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := g.resolve(ctx, resolver, host)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			if err := g.check(host, a, plain); err != nil {
				return nil, err
			}
		}
		var errs []error
		for _, a := range addrs {
			c, err := g.dial(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		return nil, errors.Join(errs...)
	}
}

// resolve returns the addresses of host, unmapped: host itself when it is
// a literal address.
func (g *guard) resolve(ctx context.Context, resolver Resolver, host string) ([]netip.Addr, error) {
	if a, ok := parseAddr(host); ok {
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", host)
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = a.Unmap()
	}
	return out, nil
}

// check refuses an address host resolved to, permanently.
func (g *guard) check(host string, a netip.Addr, plain bool) error {
	what := fmt.Sprintf("%s resolves to %s,", host, a)
	if literal, ok := parseAddr(host); ok && literal.Unmap() == a {
		what = fmt.Sprintf("%s is", a)
	}
	if why := g.refusal(a); why != "" {
		return channels.Permanent(fmt.Errorf("webhook: %s %s, refused unless webhook.allowNetworks admits it", what, why))
	}
	if plain && !g.allowed(a) {
		return channels.Permanent(fmt.Errorf("webhook: %s outside webhook.allowNetworks, the only networks plain http is sent to; use https", what))
	}
	return nil
}

// hostAddrsTTL is how long the addresses of this host are taken as read;
// an address an interface gains is refused from the next read on.
const hostAddrsTTL = time.Minute

// hostAddrs are the addresses of this host's interfaces but loopback ones
// (which class refuses as such), read at the first use and again once
// hostAddrsTTL has passed. A read that fails keeps the addresses of the
// last one.
type hostAddrs struct {
	read func() ([]net.Addr, error)

	mu    sync.Mutex
	at    time.Time
	addrs map[netip.Addr]bool
}

// thisHost is the addresses of the host the process runs on, shared by
// every guard that reads the real interfaces.
var thisHost = &hostAddrs{read: net.InterfaceAddrs}

// warm reads the addresses unless they were read within hostAddrsTTL.
func (h *hostAddrs) warm() { h.has(netip.Addr{}) }

// has reports whether a, unmapped and without a zone, is an address of this host.
func (h *hostAddrs) has(a netip.Addr) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if now := time.Now(); h.addrs == nil || now.Sub(h.at) >= hostAddrsTTL {
		h.refresh(now)
	}
	return h.addrs[a.Unmap().WithZone("")]
}

// refresh reads the interfaces' addresses; h.mu is held.
func (h *hostAddrs) refresh(now time.Time) {
	h.at = now
	list, err := h.read()
	if err != nil && h.addrs != nil {
		return
	}
	addrs := make(map[netip.Addr]bool, len(list))
	for _, n := range list {
		var ip net.IP
		switch v := n.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if a, ok := netip.AddrFromSlice(ip); ok && !a.Unmap().IsLoopback() {
			addrs[a.Unmap()] = true
		}
	}
	h.addrs = addrs
}
