package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/heraldhq/herald/channels"
)

// guard decides which addresses a webhook may reach: none that is internal
// to the network Herald runs in (see refusal) unless it lies in one of the
// allowed networks.
type guard struct {
	allow []netip.Prefix
}

// newGuard parses the allowed networks; entries that do not parse, which
// Settings.Validate reports, are left out.
func newGuard(networks []string) *guard {
	g := &guard{}
	for _, n := range networks {
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

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT, RFC 6598
	broadcast   = netip.MustParseAddr("255.255.255.255")
	metadata    = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure and most clouds
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	}
)

// class names what kind of internal address a is, or returns "" for an
// address on the public internet. IPv4-mapped IPv6 addresses are judged by
// the IPv4 address they carry.
func class(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	for _, m := range metadata {
		if a == m {
			return "the cloud metadata address"
		}
	}
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case a == broadcast:
		return "the broadcast address"
	case thisNetwork.Contains(a):
		return `a "this network" address (0.0.0.0/8)`
	case sharedSpace.Contains(a):
		return "a carrier-grade NAT address (100.64.0.0/10)"
	}
	return ""
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

// refusal says why a may not be reached, or returns "" when it may.
func (g *guard) refusal(a netip.Addr) string {
	if why := class(a); why != "" && !g.allowed(a) {
		return why
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
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
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
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
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
