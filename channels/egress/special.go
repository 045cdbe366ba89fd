package egress

import (
	"fmt"
	"net/netip"
)

// The special-purpose ranges of IANA's IPv4 and IPv6 Special-Purpose Address
// Registries (RFC 6890 and its updates) whose addresses are not globally
// reachable, with multicast, and with the IPv6 space outside global unicast
// (2000::/3). A webhook endpoint must be reachable from the internet at
// large; an address in one of these is internal to some network, very
// likely the one Herald runs in.

// special is a refused range and what it is called.
type special struct {
	prefix netip.Prefix
	what   string
}

func ranges(list ...string) []special {
	out := make([]special, 0, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		out = append(out, special{netip.MustParsePrefix(list[i]), list[i+1]})
	}
	return out
}

// special4 are the refused IPv4 ranges, more specific ones first. All of
// 192.0.0.0/24 is refused, its anycast addresses for PCP and TURN
// (192.0.0.9, 192.0.0.10) included: neither is a webhook receiver.
var special4 = ranges(
	"169.254.169.254/32", "the cloud metadata address",
	"0.0.0.0/32", "an unspecified address",
	"0.0.0.0/8", `a "this network" address (0.0.0.0/8)`,
	"10.0.0.0/8", "a private address",
	"100.64.0.0/10", "a carrier-grade NAT address (100.64.0.0/10)",
	"127.0.0.0/8", "a loopback address",
	"169.254.0.0/16", "a link-local address",
	"172.16.0.0/12", "a private address",
	"192.0.0.0/24", "an IETF protocol assignment (192.0.0.0/24)",
	"192.0.2.0/24", "a documentation address (192.0.2.0/24)",
	"192.88.99.0/24", "a 6to4 relay anycast address (192.88.99.0/24)",
	"192.168.0.0/16", "a private address",
	"198.18.0.0/15", "a benchmarking address (198.18.0.0/15)",
	"198.51.100.0/24", "a documentation address (198.51.100.0/24)",
	"203.0.113.0/24", "a documentation address (203.0.113.0/24)",
	"224.0.0.0/4", "a multicast address",
	"255.255.255.255/32", "the broadcast address",
	"240.0.0.0/4", "a reserved address (240.0.0.0/4)",
)

// special6 are the refused IPv6 ranges, more specific ones first. The
// ranges of IPv6 forms of IPv4 addresses (IPv4-mapped, NAT64, 6to4, Teredo)
// are not among them: those are judged by the IPv4 address they carry.
var special6 = ranges(
	"fd00:ec2::254/128", "the cloud metadata address",
	"::/128", "an unspecified address",
	"::1/128", "a loopback address",
	"::/96", "an IPv4-compatible address (::/96), deprecated",
	"::ffff:0:0:0/96", "an IPv4-translated address (::ffff:0:0:0/96)",
	"64:ff9b:1::/48", "a local-use NAT64 address (64:ff9b:1::/48)",
	"100::/64", "a discard-only address (100::/64)",
	"100:0:0:1::/64", "a dummy address (100:0:0:1::/64)",
	// Of 2001::/23, the IETF protocol assignments, these are globally reachable.
	"2001:3::/32", "",
	"2001:4:112::/48", "",
	"2001:20::/28", "",
	"2001:30::/28", "",
	"2001::/23", "an IETF protocol assignment (2001::/23)",
	"2001:db8::/32", "a documentation address (2001:db8::/32)",
	"3fff::/20", "a documentation address (3fff::/20)",
	"2000::/3", "",
	"fc00::/7", "a private address",
	"fe80::/10", "a link-local address",
	"fec0::/10", "a site-local address (fec0::/10), deprecated",
	"ff00::/8", "a multicast address",
	"::/0", "not a global unicast address (outside 2000::/3)",
)

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
	teredo = netip.MustParsePrefix("2001::/32")
)

// class names what kind of address a is when it is not to be reached from
// the internet at large, or returns "" for a globally reachable address.
// An IPv4-mapped address is judged as the IPv4 address it is, and an
// address of NAT64 (64:ff9b::/96), 6to4 (2002::/16) or Teredo (2001::/32)
// by the IPv4 addresses it carries.
func class(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case !a.IsValid():
		return "not an address"
	case a.Is4():
		return lookup(special4, a)
	}
	if v4s := embedded(a); len(v4s) > 0 {
		for _, v4 := range v4s {
			if why := class(v4); why != "" {
				return fmt.Sprintf("%s of %s, %s", embeddedForm(a), v4, why)
			}
		}
		return ""
	}
	return lookup(special6, a)
}

// lookup returns what the first range of list holding a is called, "" when none does.
func lookup(list []special, a netip.Addr) string {
	for _, s := range list {
		if s.prefix.Contains(a) {
			return s.what
		}
	}
	return ""
}

// embedded returns the IPv4 addresses an IPv6 address of NAT64, 6to4 or
// Teredo carries: NAT64's in its last 32 bits (RFC 6052), 6to4's in bits
// 16 to 47 (RFC 3056), and Teredo's server in bits 32 to 63 and its client,
// each bit inverted, in the last 32 (RFC 4380). Other addresses carry none.
func embedded(a netip.Addr) []netip.Addr {
	if !a.Is6() || a.Is4In6() {
		return nil
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[12:16]))}
	case sixTo4.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(a):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{netip.AddrFrom4(client), netip.AddrFrom4([4]byte(b[4:8]))}
	}
	return nil
}

// embeddedForm names the form of an address embedded returns IPv4 addresses of.
func embeddedForm(a netip.Addr) string {
	switch {
	case nat64.Contains(a):
		return "the NAT64 form"
	case sixTo4.Contains(a):
		return "the 6to4 form"
	}
	return "a Teredo address"
}
