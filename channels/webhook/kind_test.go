package webhook_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
)

func settings(allow ...string) *webhook.Settings {
	s := webhook.DefaultSettings()
	s.AllowNetworks = allow
	return s
}

func TestParse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		allow  []string
		config string
		want   string // error text, "" for a configuration kept
	}{
		{"https URL kept", nil, `{"url":"https://hooks.example.com/herald?token=abc"}`, ""},
		{"public literal address", nil, `{"url":"https://8.8.8.8:8443/herald"}`, ""},
		{"loopback", nil, `{"url":"https://127.0.0.1/herald"}`, "127.0.0.1 is a loopback address, refused unless webhook.allowNetworks admits it"},
		{"private", nil, `{"url":"https://10.1.2.3/herald"}`, "10.1.2.3 is a private address"},
		{"cloud metadata", nil, `{"url":"http://169.254.169.254/latest/meta-data/"}`, "169.254.169.254 is the cloud metadata address"},
		{"cloud metadata over IPv6", nil, `{"url":"https://[fd00:ec2::254]/"}`, "fd00:ec2::254 is the cloud metadata address"},
		{"link-local", nil, `{"url":"https://169.254.1.1/"}`, "a link-local address"},
		{"link-local IPv6 with a zone", nil, `{"url":"https://[fe80::1%25eth0]/"}`, "a link-local address"},
		{"IPv6 loopback", nil, `{"url":"https://[::1]:8443/herald"}`, "::1 is a loopback address"},
		{"IPv4-mapped loopback", nil, `{"url":"https://[::ffff:127.0.0.1]/herald"}`, "::ffff:127.0.0.1 is a loopback address"},
		{"IPv6 unique local", nil, `{"url":"https://[fd12:3456::1]/"}`, "a private address"},
		{"unspecified", nil, `{"url":"https://0.0.0.0/"}`, "an unspecified address"},
		{"IPv6 unspecified", nil, `{"url":"https://[::]/"}`, "an unspecified address"},
		{"this network", nil, `{"url":"https://0.1.2.3/"}`, "0.0.0.0/8"},
		{"carrier-grade NAT", nil, `{"url":"https://100.64.0.1/"}`, "carrier-grade NAT"},
		{"multicast", nil, `{"url":"https://224.0.0.1/"}`, "a multicast address"},
		{"broadcast", nil, `{"url":"https://255.255.255.255/"}`, "the broadcast address"},
		{"allowed loopback", []string{"127.0.0.0/8"}, `{"url":"https://127.0.0.1:8443/herald"}`, ""},
		{"allowed IPv4-mapped loopback", []string{"127.0.0.0/8"}, `{"url":"https://[::ffff:127.0.0.1]/herald"}`, ""},
		{"allowed private", []string{"10.0.0.0/8"}, `{"url":"https://10.1.2.3/herald"}`, ""},
		{"allowed through a mapped network", []string{"::ffff:10.0.0.0/104"}, `{"url":"https://10.1.2.3/herald"}`, ""},
		{"private outside the allowed network", []string{"10.0.0.0/8"}, `{"url":"https://192.168.1.1/herald"}`, "192.168.1.1 is a private address"},
		{"http without allowed networks", nil, `{"url":"http://hooks.example.com/herald"}`, "url: must be https; plain http only to networks in webhook.allowNetworks"},
		{"http to a name with allowed networks", []string{"10.0.0.0/8"}, `{"url":"http://hooks.internal/herald"}`, ""},
		{"http to an allowed address", []string{"10.0.0.0/8"}, `{"url":"http://10.1.2.3:8080/herald"}`, ""},
		{"http to an address outside the allowed networks", []string{"10.0.0.0/8"}, `{"url":"http://8.8.8.8/herald"}`, "url: must be https; plain http only"},
		{"user info", nil, `{"url":"https://user:pass@hooks.example.com/herald"}`, "must not hold credentials (user:password@): requests are authenticated by their signature"},
		{"user name only", nil, `{"url":"https://user@hooks.example.com/herald"}`, "must not hold credentials"},
		{"unknown field", nil, `{"url":"https://hooks.example.com/","token":"x"}`, "token: is not a field of this kind"},
		{"missing URL", nil, `{}`, "url: is required"},
		{"relative URL", nil, `{"url":"/herald"}`, "must be an absolute https URL"},
		{"not a URL", nil, `{"url":"https://hooks example.com/"}`, "must be an absolute https URL"},
		{"other scheme", nil, `{"url":"ftp://hooks.example.com/"}`, `"ftp:" is not supported`},
		{"no host", nil, `{"url":"https:///herald"}`, "url: must name a host"},
		{"port out of range", nil, `{"url":"https://hooks.example.com:70000/"}`, "port 70000 is not a port number"},
		{"too long", nil, `{"url":"https://hooks.example.com/` + strings.Repeat("a", 2048) + `"}`, "must be at most 2048 characters"},
		{"not a string", nil, `{"url":42}`, "url: must be a string"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := webhook.Descriptor.Parse(settings(tc.allow...), json.RawMessage(tc.config))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if string(out) != tc.config {
					t.Fatalf("Parse kept %s, want %s", out, tc.config)
				}
				return
			}
			var fe *channels.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want a *channels.FieldError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %q, want it to say %q", err, tc.want)
			}
			if want := strings.SplitN(tc.want, ":", 2)[0]; want == "token" && fe.Field != "token" || want != "token" && fe.Field != "url" {
				t.Fatalf("error on field %q", fe.Field)
			}
		})
	}
}

// refused are addresses of every special-purpose range of IANA's IPv4 and
// IPv6 registries that is not globally reachable, and IPv6 forms that carry
// such an IPv4 address, each with what the refusal calls it.
var refused = []struct{ addr, what string }{
	{"0.0.0.0", "an unspecified address"},
	{"0.1.2.3", `a "this network" address (0.0.0.0/8)`},
	{"10.1.2.3", "a private address"},
	{"100.64.0.1", "a carrier-grade NAT address"},
	{"100.127.255.254", "a carrier-grade NAT address"},
	{"127.0.0.1", "a loopback address"},
	{"127.255.255.254", "a loopback address"},
	{"169.254.1.1", "a link-local address"},
	{"169.254.169.254", "the cloud metadata address"},
	{"172.16.0.1", "a private address"},
	{"172.31.255.254", "a private address"},
	{"192.0.0.1", "an IETF protocol assignment (192.0.0.0/24)"},
	{"192.0.0.9", "an IETF protocol assignment"},
	{"192.0.0.170", "an IETF protocol assignment"},
	{"192.0.2.1", "a documentation address (192.0.2.0/24)"},
	{"192.88.99.1", "a 6to4 relay anycast address"},
	{"192.168.1.1", "a private address"},
	{"198.18.0.1", "a benchmarking address (198.18.0.0/15)"},
	{"198.19.255.254", "a benchmarking address"},
	{"198.51.100.1", "a documentation address (198.51.100.0/24)"},
	{"203.0.113.7", "a documentation address (203.0.113.0/24)"},
	{"224.0.0.1", "a multicast address"},
	{"239.255.255.250", "a multicast address"},
	{"240.0.0.1", "a reserved address (240.0.0.0/4)"},
	{"250.1.2.3", "a reserved address (240.0.0.0/4)"},
	{"255.255.255.254", "a reserved address"},
	{"255.255.255.255", "the broadcast address"},
	{"::", "an unspecified address"},
	{"::1", "a loopback address"},
	{"::127.0.0.1", "an IPv4-compatible address (::/96)"},
	{"::8.8.8.8", "an IPv4-compatible address (::/96)"},
	{"::ffff:127.0.0.1", "a loopback address"},
	{"::ffff:10.0.0.1", "a private address"},
	{"::ffff:198.18.0.1", "a benchmarking address"},
	{"::ffff:0:7f00:1", "an IPv4-translated address (::ffff:0:0:0/96)"},
	{"64:ff9b::7f00:1", "the NAT64 form of 127.0.0.1, a loopback address"},
	{"64:ff9b::a00:1", "the NAT64 form of 10.0.0.1, a private address"},
	{"64:ff9b::a9fe:a9fe", "the NAT64 form of 169.254.169.254, the cloud metadata address"},
	{"64:ff9b:1::1", "a local-use NAT64 address (64:ff9b:1::/48)"},
	{"64:ff9b:1::808:808", "a local-use NAT64 address"},
	{"100::1", "a discard-only address (100::/64)"},
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", "a Teredo address of 127.0.0.1, a loopback address"},
	{"2001:0:a00:1:8000:63bf:f7f7:f7f7", "a Teredo address of 10.0.0.1, a private address"},
	{"2001:2::1", "an IETF protocol assignment (2001::/23)"},
	{"2001:10::1", "an IETF protocol assignment (2001::/23)"},
	{"2001:db8::1", "a documentation address (2001:db8::/32)"},
	{"2002:7f00:1::", "the 6to4 form of 127.0.0.1, a loopback address"},
	{"2002:a00:1::1", "the 6to4 form of 10.0.0.1, a private address"},
	{"2002:c612:1::1", "the 6to4 form of 198.18.0.1, a benchmarking address"},
	{"3fff::1", "a documentation address (3fff::/20)"},
	{"fc00::1", "a private address"},
	{"fd12:3456::1", "a private address"},
	{"fd00:ec2::254", "the cloud metadata address"},
	{"fe80::1", "a link-local address"},
	{"fec0::1", "a site-local address"},
	{"ff02::1", "a multicast address"},
	{"ff0e::1", "a multicast address"},
	{"4000::1", "not a global unicast address (outside 2000::/3)"},
	{"5f00::1", "not a global unicast address"},
}

func TestParseRefusesSpecialPurposeAddresses(t *testing.T) {
	t.Parallel()
	for _, tc := range refused {
		host := tc.addr
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		_, err := webhook.Descriptor.Parse(settings(), json.RawMessage(`{"url":"https://`+host+`/herald"}`))
		var fe *channels.FieldError
		if !errors.As(err, &fe) || fe.Field != "url" {
			t.Errorf("%s: Parse = %v, want an error on url", tc.addr, err)
			continue
		}
		if want := netip.MustParseAddr(tc.addr).String() + " is " + tc.what; !strings.Contains(fe.Message, want) {
			t.Errorf("%s: Parse = %q, want it to say %q", tc.addr, fe.Message, want)
		}
	}
}

// TestParseAdmitsGlobalAddresses: addresses of the internet at large are
// kept, the IPv6 forms that carry a public IPv4 address and the
// special-purpose ranges the registries call globally reachable included.
func TestParseAdmitsGlobalAddresses(t *testing.T) {
	t.Parallel()
	for _, a := range []string{
		"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.32.0.1", "192.0.1.255", "192.0.3.1",
		"192.31.196.1", "192.52.193.1", "192.175.48.1", "198.17.255.255", "198.20.0.1", "223.255.255.255",
		"::ffff:8.8.8.8", "2001:4860:4860::8888", "2606:4700:4700::1111", "2620:4f:8000::1",
		"64:ff9b::808:808", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
		"2001:3::1", "2001:4:112::1", "2001:20::1", "2001:30::1", "2001:200::1", "3fff:1000::1",
	} {
		host := a
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if _, err := webhook.Descriptor.Parse(settings(), json.RawMessage(`{"url":"https://`+host+`/herald"}`)); err != nil {
			t.Errorf("%s: Parse = %v, want it kept", a, err)
		}
	}
}

// TestParseRefusesAddressesInOtherForms: a host that is a number, or ends in
// one, is an address some resolvers read (127.1, 2130706433 and 0x7f000001
// are 127.0.0.1 to glibc) and no name; localhost names this host.
func TestParseRefusesAddressesInOtherForms(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"127.1":           "127.1 is not a host name",
		"2130706433":      "2130706433 is not a host name",
		"0x7f000001":      "0x7f000001 is not a host name",
		"0x7f.1":          "is not a host name",
		"017700000001":    "is not a host name",
		"127.000.000.001": "is not a host name",
		"127.0.0.1.":      "is not a host name",
		"1.2.3.4.5":       "is not a host name",
		"localhost":       "localhost names this host",
		"LOCALHOST.":      "names this host",
		"api.localhost":   "names this host",
	} {
		_, err := webhook.Descriptor.Parse(settings(), json.RawMessage(`{"url":"https://`+host+`/herald"}`))
		var fe *channels.FieldError
		if !errors.As(err, &fe) || fe.Field != "url" || !strings.Contains(fe.Message, want) {
			t.Errorf("%s: Parse = %v, want an error on url saying %q", host, err, want)
		}
	}
	for _, host := range []string{"hooks.example.com", "1password.example.com", "x1.example.com", "hooks.example.com."} {
		if _, err := webhook.Descriptor.Parse(settings(), json.RawMessage(`{"url":"https://`+host+`/herald"}`)); err != nil {
			t.Errorf("%s: Parse = %v, want it kept", host, err)
		}
	}
}

// interfaces is an InterfaceAddrs that lists the given addresses.
func interfaces(list ...string) func() ([]net.Addr, error) {
	return func() ([]net.Addr, error) {
		out := make([]net.Addr, len(list))
		for i, a := range list {
			p := netip.MustParsePrefix(a)
			out[i] = &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
		}
		return out, nil
	}
}

// TestParseRefusesTheHostsOwnAddresses: an address of one of this host's
// interfaces is refused, public or not, in its IPv6 forms too, unless an
// allowed network holds it.
func TestParseRefusesTheHostsOwnAddresses(t *testing.T) {
	t.Parallel()
	set := settings()
	set.InterfaceAddrs = interfaces("127.0.0.1/8", "9.9.9.9/24", "2a00:1450:4001::5/64")
	for url, want := range map[string]string{
		"https://9.9.9.9/hook":              "9.9.9.9 is an address of this host",
		"https://[::ffff:9.9.9.9]/hook":     "9.9.9.9 is an address of this host",
		"https://[2002:909:909::1]/hook":    "the 6to4 form of 9.9.9.9, an address of this host",
		"https://[64:ff9b::909:909]/hook":   "the NAT64 form of 9.9.9.9, an address of this host",
		"https://[2a00:1450:4001::5]:8443/": "2a00:1450:4001::5 is an address of this host",
	} {
		_, err := webhook.Descriptor.Parse(set, channels.Encode(webhook.Endpoint{URL: url}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Parse = %v, want it to say %q", url, err, want)
		}
	}
	for _, url := range []string{"https://9.9.9.10/hook", "https://[2a00:1450:4001::6]/"} {
		if _, err := webhook.Descriptor.Parse(set, channels.Encode(webhook.Endpoint{URL: url})); err != nil {
			t.Errorf("%s, a neighbour of the host: Parse = %v", url, err)
		}
	}
	set.AllowNetworks = []string{"9.9.9.9/32"}
	if _, err := webhook.Descriptor.Parse(set, channels.Encode(webhook.Endpoint{URL: "https://9.9.9.9/hook"})); err != nil {
		t.Errorf("an own address in an allowed network: Parse = %v", err)
	}
}

func TestParseWithoutSettingsUsesDefaults(t *testing.T) {
	t.Parallel()
	if _, err := webhook.Descriptor.Parse(nil, json.RawMessage(`{"url":"https://127.0.0.1/"}`)); err == nil {
		t.Fatal("Parse without settings admitted a loopback address")
	}
}

func TestSettingsValidate(t *testing.T) {
	t.Parallel()
	if err := webhook.DefaultSettings().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	d := webhook.DefaultSettings()
	if d.MaxInlineBytes != 4<<20 || d.Concurrency != 32 || d.PerDestination != 4 || d.PerOwner != 16 || len(d.AllowNetworks) != 0 {
		t.Fatalf("defaults = %+v", d)
	}
	s := webhook.DefaultSettings()
	s.AllowNetworks = []string{"10.0.0.0/8", "x", "fd00::/8", "10.0.0.0"}
	s.MaxInlineBytes = -1
	s.Concurrency = 0
	err := s.Validate()
	if err == nil {
		t.Fatal("Validate accepted bad settings")
	}
	for _, want := range []string{
		`allowNetworks[1]: "x" is not a network in CIDR form, such as 10.0.0.0/8`,
		`allowNetworks[3]: "10.0.0.0" is not a network in CIDR form`,
		"maxInlineBytes: must be 0",
		"concurrency: must be at least 1",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %q, which lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "allowNetworks[0]") || strings.Contains(err.Error(), "allowNetworks[2]") {
		t.Errorf("Validate refused a good network: %v", err)
	}
}

func TestRecipientIsTheHost(t *testing.T) {
	t.Parallel()
	got := webhook.Descriptor.Recipient(json.RawMessage(`{"url":"https://hooks.example.com:8443/herald/T0K3N?sig=abc"}`))
	if got != "hooks.example.com:8443" {
		t.Fatalf("Recipient = %q", got)
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := channels.NewRegistry(webhook.Descriptor)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	d, ok := r.ByWire("webhookConfiguration")
	if !ok || d.Kind != webhook.Kind || d.Secret != "secret" || d.Section != "webhook" {
		t.Fatalf("ByWire = %+v, %v", d, ok)
	}
	snd, closer, err := d.NewSender(d.Settings(), channels.Env{})
	if err != nil {
		t.Fatalf("NewSender: %v", err)
	}
	if snd.Kind() != webhook.Kind || closer == nil {
		t.Fatalf("NewSender = %v, closer nil: %v", snd, closer == nil)
	}
	if err := closer(); err != nil {
		t.Fatalf("close: %v", err)
	}
	bad := webhook.DefaultSettings()
	bad.AllowNetworks = []string{"nope"}
	if _, _, err := d.NewSender(bad, channels.Env{}); err == nil {
		t.Fatal("NewSender accepted settings that do not validate")
	}
}
