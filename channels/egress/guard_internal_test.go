package egress

import (
	"net"
	"net/netip"
	"testing"
)

// mustRefuse are ranges no address of which class may admit.
var mustRefuse = func() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/8", "64:ff9b:1::/48", "100::/64", "2001:2::/48", "2001:db8::/32", "3fff::/20", "fc00::/7", "fe80::/10",
		"fec0::/10", "ff00::/8",
	} {
		out = append(out, netip.MustParsePrefix(p))
	}
	return out
}()

// FuzzClass checks the classifier against the registries' ranges and
// against itself: an IPv4 address and its IPv4-mapped, NAT64, 6to4 and
// Teredo forms are judged alike, whatever netip calls internal is refused,
// and an IPv6 address admitted is global unicast or a NAT64 form.
func FuzzClass(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "8.8.8.8", "198.18.0.1", "::1", "64:ff9b::7f00:1", "2002:7f00:1::",
		"2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:4860:4860::8888", "fe80::1%eth0", "::ffff:0:7f00:1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		why := class(a)
		for _, p := range mustRefuse {
			// IPv4-mapped and NAT64 addresses lie in ::/8 and are judged by their IPv4 address.
			if p.Contains(a) && !a.Is4In6() && !nat64.Contains(a) && why == "" {
				t.Fatalf("class(%s) admits an address of %s", a, p)
			}
		}
		if (a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified()) && why == "" {
			t.Fatalf("class(%s) admits an address netip calls internal", a)
		}
		if a.Is4In6() && why != class(a.Unmap()) {
			t.Fatalf("class(%s) = %q, but class(%s) = %q", a, why, a.Unmap(), class(a.Unmap()))
		}
		if a.Is6() && !a.Is4In6() && why == "" && !netip.MustParsePrefix("2000::/3").Contains(a) && !nat64.Contains(a) {
			t.Fatalf("class(%s) admits an address outside global unicast", a)
		}
		if !a.Is4() {
			return
		}
		v4 := a.As4()
		forms := []netip.Addr{
			netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 12: v4[0], v4[1], v4[2], v4[3]}),
			netip.AddrFrom16([16]byte{0x20, 0x02, v4[0], v4[1], v4[2], v4[3], 15: 1}),
			// Teredo, a public server (65.54.227.120), a as its client.
			netip.AddrFrom16([16]byte{0x20, 0x01, 0, 0, 0x41, 0x36, 0xe3, 0x78, 0x80, 0, 0x63, 0xbf, ^v4[0], ^v4[1], ^v4[2], ^v4[3]}),
			// Teredo, a as its server, a public client (8.8.8.8).
			netip.AddrFrom16([16]byte{0x20, 0x01, 0, 0, v4[0], v4[1], v4[2], v4[3], 0x80, 0, 0x63, 0xbf, 0xf7, 0xf7, 0xf7, 0xf7}),
		}
		for _, form := range forms {
			if (class(form) == "") != (why == "") {
				t.Fatalf("class(%s) = %q, but class(%s) = %q", form, class(form), a, why)
			}
		}
	})
}

// TestThisHostHasItsInterfaceAddresses: the guard every sender and every
// save shares knows the addresses of the machine's interfaces, and refuses
// each, however class calls it.
func TestThisHostHasItsInterfaceAddresses(t *testing.T) {
	t.Parallel()
	list, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	g := New(Config{})
	seen := 0
	for _, n := range list {
		ipn, ok := n.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(ipn.IP)
		if !ok || a.Unmap().IsLoopback() {
			continue
		}
		seen++
		if !thisHost.has(a) {
			t.Errorf("this host's addresses lack %s", a)
		}
		if why := g.refusal(a); why == "" || class(a) == "" && why != "an address of this host" {
			t.Errorf("refusal(%s) = %q", a, why)
		}
	}
	if seen == 0 {
		t.Skip("this machine has no interface address but loopback ones")
	}
	t.Logf("%d interface addresses", seen)
}

// TestHostAddrsKeepTheLastReadOnAnError: a read of the interfaces that
// fails keeps the addresses read before.
func TestHostAddrsKeepTheLastReadOnAnError(t *testing.T) {
	t.Parallel()
	fail := false
	h := &hostAddrs{read: func() ([]net.Addr, error) {
		if fail {
			return nil, &net.OpError{Op: "route"}
		}
		return []net.Addr{&net.IPNet{IP: net.ParseIP("9.9.9.9"), Mask: net.CIDRMask(24, 32)}}, nil
	}}
	if !h.has(netip.MustParseAddr("9.9.9.9")) || h.has(netip.MustParseAddr("9.9.9.10")) {
		t.Fatal("has does not answer from the read")
	}
	fail = true
	h.at = h.at.Add(-2 * hostAddrsTTL)
	if !h.has(netip.MustParseAddr("::ffff:9.9.9.9")) {
		t.Fatal("a failed read dropped the addresses")
	}
}
