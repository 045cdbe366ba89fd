package egress

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

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what a Guard admits and how it connects.
type Config struct {
	// AllowNetworks lists networks in CIDR form that URLs may reach although
	// they are internal or addresses of this host, and that plain http may be
	// sent to; entries that do not parse (see ValidateNetworks) are left out.
	AllowNetworks []string
	// Key names AllowNetworks as the configuration file does, in refusals:
	// "webhook.allowNetworks".
	Key string
	// Name starts the errors of a refused connection, such as "webhook".
	Name string
	// Example is a URL the kind takes, for errors: "https://hooks.example.com/herald".
	Example string
	// NoCredentials says, after "must not hold credentials (user:password@)",
	// why a URL may not hold them; "" says nothing more.
	NoCredentials string
	// Resolver looks up host names when connecting; nil means net.DefaultResolver.
	Resolver Resolver
	// InterfaceAddrs lists this host's addresses, which are refused; nil
	// means net.InterfaceAddrs.
	InterfaceAddrs func() ([]net.Addr, error)
	// Dial connects to an address the guard admitted; nil means a net.Dialer's.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ValidateNetworks checks a list of networks in CIDR form; its errors name
// the wrong entry as allowNetworks[i].
func ValidateNetworks(list []string) error {
	var errs []error
	for i, n := range list {
		if _, err := netip.ParsePrefix(strings.TrimSpace(n)); err != nil {
			errs = append(errs, fmt.Errorf("allowNetworks[%d]: %q is not a network in CIDR form, such as 10.0.0.0/8", i, n))
		}
	}
	return errors.Join(errs...)
}

// Guard decides which addresses a URL a channel names may reach: none that
// is internal to the network Herald runs in or not reachable on the internet
// at large (see class), and none of this host's own (see hostAddrs), unless
// it lies in one of the allowed networks. It is safe for concurrent use.
type Guard struct {
	allow    []netip.Prefix
	key      string
	name     string
	noCreds  string
	example  string
	host     *hostAddrs
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	resolver Resolver
}

// New returns the guard of c.
func New(c Config) *Guard {
	g := &Guard{host: thisHost, dial: c.Dial, key: c.Key, name: c.Name, noCreds: c.NoCredentials, resolver: c.Resolver,
		example: c.Example}
	if g.example == "" {
		g.example = "https://hooks.example.com/herald"
	}
	if g.key == "" {
		g.key = "allowNetworks"
	}
	if g.name == "" {
		g.name = "egress"
	}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if c.InterfaceAddrs != nil {
		g.host = &hostAddrs{read: c.InterfaceAddrs}
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		g.dial = d.DialContext
	}
	for _, n := range c.AllowNetworks {
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

// Warm reads this host's addresses unless they were read within a minute,
// so that the first send does not wait for it.
func (g *Guard) Warm() { g.host.warm() }

// allowed reports whether a lies in an allowed network.
func (g *Guard) allowed(a netip.Addr) bool {
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
func (g *Guard) refusal(a netip.Addr) string {
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
func (g *Guard) dialer(plain bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := g.resolve(ctx, host)
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
func (g *Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, ok := parseAddr(host); ok {
		return []netip.Addr{a.Unmap()}, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", host)
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
func (g *Guard) check(host string, a netip.Addr, plain bool) error {
	what := fmt.Sprintf("%s resolves to %s,", host, a)
	if literal, ok := parseAddr(host); ok && literal.Unmap() == a {
		what = fmt.Sprintf("%s is", a)
	}
	if why := g.refusal(a); why != "" {
		return channels.Permanent(fmt.Errorf("%s: %s %s, refused unless %s admits it", g.name, what, why, g.key))
	}
	if plain && !g.allowed(a) {
		return channels.Permanent(fmt.Errorf("%s: %s outside %s, the only networks plain http is sent to; use https", g.name, what, g.key))
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
