package wire_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"testing"

	"github.com/heraldhq/herald/wire"
)

// Records as the API writes them, keys in the order it writes them.
const (
	fullSubscription = `{"subscription":{"attachments":[{"formats":["PDF","XLS"],"newRowsBy":"/svc/md/p1/obj/7","report":"/svc/md/p1/obj/40"},` +
		`{"formats":["CSV"],"report":"/svc/md/p1/obj/41"}],` +
		`"burst":{"address":"/svc/md/p1/obj/51","by":"/svc/md/p1/obj/52","report":"/svc/md/p1/obj/50","via":"email"},` +
		`"channels":["/svc/account/profile/u1/channelConfigurations/c1","/svc/account/profile/u1/channelConfigurations/c2"],` +
		`"condition":{"condition":{"expression":"f:executeMetric('/svc/md/p1/obj/12') \u003c 16"}},"enabled":true,"fireMode":"onChange",` +
		`"health":{"failuresInARow":3,"healthy":false},` +
		`"message":{"html":{"expression":"\u003cb\u003e${f:executeMetric('/svc/md/p1/obj/12')}\u003c/b\u003e"},"template":{"expression":"Revenue fell to ${f:executeMetric('/svc/md/p1/obj/12')}"}},` +
		`"meta":{"author":"/svc/account/profile/u1","category":"subscription","created":"2026-01-02 10:00:00","title":"Revenue \u003c\u0026\u003e watch","updated":"2026-01-02 11:00:00","uri":"/svc/projects/p1/users/u1/subscriptions/s1"},` +
		`"onEmpty":"skip","pausedChannels":[{"channel":"/svc/account/profile/u1/channelConfigurations/c2","by":"a@x.io","at":"2026-01-02 10:01:00"}],` +
		`"recipients":{"roles":["/svc/projects/p1/roles/5"],"users":["/svc/account/profile/u2"],"via":["email","/svc/account/profile/u1/channelConfigurations/c1"]},` +
		`"resolvedMessage":{"template":{"expression":"All clear"}},"sendWhen":"changed","subject":{"template":{"expression":"Revenue"}},` +
		`"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * MON-FRI","timezone":"Europe/Prague"}},{"timerEvent":{"cronExpression":"0 0/5 * * * *","timezone":"UTC"}}]}}`
	bareSubscription = `{"subscription":{"attachments":[],"channels":[],"condition":{"condition":{"expression":"true"}},"enabled":false,"fireMode":"always",` +
		`"health":{"failuresInARow":0,"healthy":true},"message":{"template":{"expression":"m"}},` +
		`"meta":{"author":"/svc/account/profile/u1","category":"subscription","created":"2026-01-02 10:00:00","title":"Bare","updated":"2026-01-02 10:00:00","uri":"/svc/projects/p1/users/u1/subscriptions/s2"},` +
		`"onEmpty":"send","sendWhen":"always","triggers":[{"timerEvent":{"cronExpression":"0 * * * * *","timezone":""}}]}}`
	channel = `{"channelConfiguration":{"configuration":{"emailConfiguration":{"to":"a@x.io"}},` +
		`"meta":{"author":"/svc/account/profile/u1","category":"channelConfiguration","created":"2026-01-02 10:00:00","title":"Mail","updated":"2026-01-02 10:00:00","uri":"/svc/account/profile/u1/channelConfigurations/c1"},` +
		`"verification":"verified"}}`
)

// TestAnswersRoundTripByteForByte: a record the API wrote decodes into the
// wire types and encodes back to the same bytes, and so do the listings.
func TestAnswersRoundTripByteForByte(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		doc string
		v   any
	}{
		"full subscription":     {fullSubscription, &wire.SubscriptionDoc{}},
		"bare subscription":     {bareSubscription, &wire.SubscriptionDoc{}},
		"channel":               {channel, &wire.ChannelDoc{}},
		"subscription listing":  {`{"subscriptions":{"items":[` + fullSubscription + `,` + bareSubscription + `]}}`, &wire.SubscriptionList{}},
		"channel listing":       {`{"channelConfigurations":{"items":[` + channel + `]}}`, &wire.ChannelList{}},
		"empty channel listing": {`{"channelConfigurations":{"items":[]}}`, &wire.ChannelList{}},
		"run listing": {`{"runs":{"items":[{"run":{"uri":"/svc/projects/p1/users/u1/subscriptions/s1/runs/r1","scheduledAt":"2026-01-02 10:00:00",` +
			`"state":"partially_failed","trigger":"manual","by":"/svc/account/profile/u1","condition":true,"values":{"/svc/md/p1/obj/12":15},` +
			`"subject":"Revenue","text":"Revenue fell","attachments":[{"name":"r.pdf","contentType":"application/pdf"},{"name":"c.png","contentType":"image/png","inline":true}],` +
			`"stage":"deliver","timingsMs":{"evaluate":3},"started":"2026-01-02 10:00:00","finished":"2026-01-02 10:00:01",` +
			`"deliveries":[{"channel":"/svc/account/profile/u1/channelConfigurations/c1","kind":"email","state":"sent","attempts":1,"providerId":"m1","sentAt":"2026-01-02 10:00:01"},` +
			`{"kind":"email","recipient":"/svc/account/profile/u2","address":"b@x.io","state":"failed","attempts":3,"lastError":"550"}],` +
			`"deliveryCounts":{"failed":1,"sent":1},"deliveriesTotal":2,"skipped":1,` +
			`"audience":{"recipients":2,"slices":1,"rows":3,"skips":[{"address":"bad","reason":"not an address","row":3}],` +
			`"sliceDetails":[{"filters":[],"recipients":2,"condition":true,"values":{"/svc/md/p1/obj/12":15},"subject":"Revenue"}]},` +
			`"pausedChannels":["/svc/account/profile/u1/channelConfigurations/c2"],` +
			`"events":[{"event":"unsubscribed","channel":"/svc/account/profile/u1/channelConfigurations/c2","by":"a@x.io","at":"2026-01-02T10:05:00Z"}]}}]}}`,
			&wire.RunList{}},
	} {
		if err := json.Unmarshal([]byte(c.doc), c.v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.doc {
			t.Errorf("%s:\n got %s\nwant %s", name, got, c.doc)
		}
	}
}

// TestRequestsKeepWhatTheySay: bodies as clients send them (keys in their
// own order, the platform's fields of the original shapes, extensions)
// decode and encode back to the same JSON value: no field is dropped and
// none is added.
func TestRequestsKeepWhatTheySay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		doc string
		v   any
	}{
		{`{"subscription":{"triggers":[{"timerEvent":{"cronExpression":"0 0/5 * * * *","timezone":"Europe/Prague"}}],` +
			`"condition":{"condition":{"expression":"f:executeMetric('/svc/md/p/obj/12') < 16"}},` +
			`"message":{"template":{"expression":"Revenue fell to ${f:executeMetric('/svc/md/p/obj/12')}"}},` +
			`"subject":{"template":{"expression":"Revenue"}},"channels":["/svc/account/profile/u/channelConfigurations/c"],` +
			`"meta":{"title":"Revenue watch","author":"","category":"","created":"","updated":"","uri":""}}}`, &wire.SubscriptionDoc{}},
		{`{"subscription":{"triggers":[{"timerEvent":{"cronExpression":"0 0 8 * * MON-FRI"}}],"condition":{"condition":{"expression":"true"}},` +
			`"message":{"template":{"expression":"hi"}},"channels":[],"attachments":[{"report":"/svc/md/p/obj/1","formats":["pdf"],"newRowsBy":"/svc/md/p/obj/2"}],` +
			`"recipients":{"users":["/svc/account/profile/u2"],"roles":[],"via":["email"]},"pausedChannels":[],"enabled":false,` +
			`"fireMode":"always","onEmpty":"notifyOwner","sendWhen":"changed","meta":{"title":"T","author":"","category":"","created":"","updated":"","uri":""}}}`,
			&wire.SubscriptionDoc{}},
		{`{"channelConfiguration":{"configuration":{"smsConfiguration":{"username":"AC1","password":"x","from":"+15005550006","to":"+420601234567"}},` +
			`"meta":{"title":"S","author":"","category":"","created":"","updated":"","uri":""}}}`, &wire.ChannelDoc{}},
		{`{"subscription":null}`, &wire.SubscriptionDoc{}},
	} {
		if err := json.Unmarshal([]byte(c.doc), c.v); err != nil {
			t.Fatalf("%s: %v", c.doc, err)
		}
		back, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal([]byte(c.doc), &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(back, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip changed the body:\n got %s\nwant %s", back, c.doc)
		}
	}
}

// TestEchoedHealthIsIgnored: whatever a client echoes back as a
// subscription's health decodes, as no health or the health it says.
func TestEchoedHealthIsIgnored(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]*wire.Health{
		`{"health":"fine"}`:                              {},
		`{"health":{"healthy":"yes"}}`:                   {},
		`{"health":{"healthy":true,"failuresInARow":2}}`: {Healthy: true, FailuresInARow: 2},
		`{"health":null}`:                                nil,
	} {
		var s wire.Subscription
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !reflect.DeepEqual(s.Health, want) {
			t.Errorf("%s: health %+v, want %+v", doc, s.Health, want)
		}
	}
}

// The forms the service has always matched its URIs with.
var (
	profileForm = regexp.MustCompile(`^/svc/account/profile/([A-Za-z0-9]+)$`)
	channelForm = regexp.MustCompile(`^/svc/account/profile/([A-Za-z0-9]+)/channelConfigurations/([A-Za-z0-9]+)$`)
	roleForm    = regexp.MustCompile(`^/svc/projects/([a-z0-9]+)/roles/([0-9]+)$`)
	objForm     = regexp.MustCompile(`^/svc/md/([a-z0-9]+)/obj/([A-Za-z0-9_.-]+)$`)
)

// uriSeeds are URIs that parse and URIs that nearly do.
var uriSeeds = []string{
	"/svc/account/profile/u1", "/svc/account/profile/", "/svc/account/profile/u1/", "/svc/account/profile/u-1",
	"/svc/account/profile/u1/channelConfigurations/c1", "/svc/account/profile/u1/channelConfigurations/",
	"/svc/account/profile//channelConfigurations/c1", "/svc/account/profile/u1/channelConfigurations/c1/channelConfigurations/c2",
	"/svc/projects/p1/roles/3", "/svc/projects/P1/roles/3", "/svc/projects/p1/roles/x", "/svc/projects/p1/roles/3/roles/4",
	"/svc/md/p1/obj/12", "/svc/md/p1/obj/a_b.c-d", "/svc/md/p1/obj/12\n", "/svc/md/p1/obj/", "/svc/md/p1/obj/1/obj/2",
	"/svc/md//obj/1", "svc/md/p1/obj/1", "/svc/md/p1/obj/1?x=1", "/svc/account/profile/ü",
}

// TestURIsParseAsTheyAlwaysDid: each parser takes exactly what the
// regular expression it replaces took, with the same ids, and takes back
// what its builder writes.
func TestURIsParseAsTheyAlwaysDid(t *testing.T) {
	t.Parallel()
	for _, u := range uriSeeds {
		checkURI(t, u)
	}
}

// FuzzURIs checks the parsers against the regular expressions they replace
// on any text, and against their builders.
func FuzzURIs(f *testing.F) {
	for _, u := range uriSeeds {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, u string) { checkURI(t, u) })
}

func checkURI(t *testing.T, u string) {
	t.Helper()
	two := func(name string, re *regexp.Regexp, a, b string, ok bool, build func(a, b string) string) {
		m := re.FindStringSubmatch(u)
		if (m != nil) != ok || ok && (m[1] != a || m[2] != b) {
			t.Fatalf("%s(%q) = %q, %q, %v; the form says %q", name, u, a, b, ok, m)
		}
		if ok && build(a, b) != u {
			t.Fatalf("%s(%q) = %q, %q, which build %q", name, u, a, b, build(a, b))
		}
	}
	uid, ok := wire.ParseProfileURI(u)
	m := profileForm.FindStringSubmatch(u)
	if (m != nil) != ok || ok && (m[1] != uid || wire.ProfileURI(uid) != u) {
		t.Fatalf("ParseProfileURI(%q) = %q, %v; the form says %q", u, uid, ok, m)
	}
	a, b, ok := wire.ParseChannelURI(u)
	two("ParseChannelURI", channelForm, a, b, ok, wire.ChannelURI)
	a, b, ok = wire.ParseRoleURI(u)
	two("ParseRoleURI", roleForm, a, b, ok, wire.RoleURI)
	a, b, ok = wire.ParseObjURI(u)
	two("ParseObjURI", objForm, a, b, ok, wire.ObjURI)
	if bytes.ContainsAny([]byte(u), "\n") && ok {
		t.Fatalf("ParseObjURI(%q) takes a line break", u)
	}
}
