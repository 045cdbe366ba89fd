package maql

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func mustParseMetric(t *testing.T, src string) *Metric {
	t.Helper()
	m, err := ParseMetric(src)
	if err != nil {
		t.Fatalf("ParseMetric(%q): %v", src, err)
	}
	return m
}

func TestMetricRefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []Ref
	}{
		{"one fact", "SELECT SUM([/svc/md/p1/obj/223])", []Ref{uri("223")}},
		{"no references", "SELECT 1 + 2", nil},
		{"every place, each once",
			`SELECT IFNULL(SUM({fact.a}), 0) / (SELECT COUNT({attr.x}, {attr.y}) BY ALL {attr.year} WHERE {attr.x} <> "z") - [/svc/md/p1/obj/266]
			 WHERE [/svc/md/p1/obj/123] IN ([/svc/md/p1/obj/124/elements?id=1], "s") AND NOT {label.e} = [/svc/md/p1/obj/125/elements?id=2]
			 BY {attr.q}, ALL {attr.year}, ALL OTHER`,
			[]Ref{ident("fact.a"), ident("attr.x"), ident("attr.y"), ident("attr.year"), uri("266"),
				uri("123"), uri("124"), ident("label.e"), uri("125"), ident("attr.q")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParseMetric(t, tc.src).Refs(); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Refs() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMetricRewrite(t *testing.T) {
	t.Parallel()
	uris := map[string]string{"fact.a": obj + "1", "attr.x": obj + "2", "attr.year": obj + "3"}
	toURI := func(r Ref) (Ref, error) {
		if r.URI != "" {
			return r, nil
		}
		u, ok := uris[r.Identifier]
		if !ok {
			return Ref{}, errors.New("unknown identifier " + r.Identifier)
		}
		return Ref{URI: u}, nil
	}
	tests := []struct {
		name    string
		src     string
		fn      func(Ref) (Ref, error)
		want    string // the metric after the rewrite
		wantErr string
	}{
		{
			name: "identifiers to URIs",
			src:  `SELECT SUM({fact.a}) / (SELECT SUM({fact.a}) BY ALL {attr.year}) WHERE {attr.x} IN ([/svc/md/p1/obj/2/elements?id=5]) BY {attr.x}`,
			fn:   toURI,
			want: `SELECT SUM([/svc/md/p1/obj/1]) / (SELECT SUM([/svc/md/p1/obj/1]) BY ALL [/svc/md/p1/obj/3]) ` +
				`WHERE [/svc/md/p1/obj/2] IN ([/svc/md/p1/obj/2/elements?id=5]) BY [/svc/md/p1/obj/2]`,
		},
		{
			name: "element attributes are moved too",
			src:  `SELECT SUM({fact.a}) WHERE {attr.x} = [/svc/md/p1/obj/2/elements?id=5]`,
			fn: func(r Ref) (Ref, error) {
				if r.URI != "" {
					return Ref{URI: strings.Replace(r.URI, "/p1/", "/p2/", 1)}, nil
				}
				return r, nil
			},
			want: `SELECT SUM({fact.a}) WHERE {attr.x} = [/svc/md/p2/obj/2/elements?id=5]`,
		},
		{
			name:    "the error of fn is returned and nothing changes",
			src:     `SELECT SUM({fact.a}) + SUM({fact.unknown})`,
			fn:      toURI,
			want:    `SELECT SUM({fact.a}) + SUM({fact.unknown})`,
			wantErr: "unknown identifier fact.unknown",
		},
		{
			name:    "an element cannot point at an identifier",
			src:     `SELECT SUM({fact.a}) WHERE {attr.x} = [/svc/md/p1/obj/2/elements?id=5]`,
			fn:      func(r Ref) (Ref, error) { return Ref{Identifier: "attr.x"}, nil },
			want:    `SELECT SUM({fact.a}) WHERE {attr.x} = [/svc/md/p1/obj/2/elements?id=5]`,
			wantErr: "rewrite [/svc/md/p1/obj/2/elements?id=5]: an element must refer to its attribute by URI, not {attr.x}",
		},
		{
			name:    "an unprintable reference is refused",
			src:     `SELECT SUM({fact.a})`,
			fn:      func(r Ref) (Ref, error) { return Ref{URI: "/has space"}, nil },
			want:    `SELECT SUM({fact.a})`,
			wantErr: "rewrite {fact.a}: invalid reference [/has space]",
		},
		{
			name:    "both URI and identifier is refused",
			src:     `SELECT SUM({fact.a})`,
			fn:      func(r Ref) (Ref, error) { return Ref{URI: "/o/1", Identifier: "x"}, nil },
			want:    `SELECT SUM({fact.a})`,
			wantErr: "rewrite {fact.a}: invalid reference [/o/1]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustParseMetric(t, tc.src)
			err := m.Rewrite(tc.fn)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("Rewrite error = %v, want %q", err, tc.wantErr)
			}
			if got := m.String(); got != tc.want {
				t.Fatalf("after Rewrite: %s\nwant          %s", got, tc.want)
			}
		})
	}
}

func TestMetricTree(t *testing.T) {
	t.Parallel()
	m := mustParseMetric(t, `SELECT IFNULL(SUM([/o/1]), 0) * -{m.x} `+
		`WHERE {a} = "Open" OR NOT [/o/2] NOT IN ([/o/2/elements?id=3], 4) BY {q}, ALL {y}, ALL OTHER`)
	got, err := json.Marshal(m.Tree())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"content":[{"content":[` +
		`{"content":[{"content":[{"content":[{"type":"object","value":"/o/1"}],"type":"function","value":"SUM"},{"type":"number","value":"0"}],"type":"function","value":"IFNULL"},` +
		`{"content":[{"type":"identifier","value":"m.x"}],"type":"negation"}],"type":"*"},` +
		`{"content":[{"content":[` +
		`{"content":[{"type":"identifier","value":"a"},{"type":"string","value":"Open"}],"type":"="},` +
		`{"content":[{"content":[{"type":"object","value":"/o/2"},{"content":[{"type":"element","value":"/o/2/elements?id=3"},{"type":"number","value":"4"}],"type":"list"}],"type":"NOT IN"}],"type":"NOT"}` +
		`],"type":"OR"}],"type":"WHERE"},` +
		`{"content":[{"type":"identifier","value":"q"},{"content":[{"type":"identifier","value":"y"}],"type":"ALL"},{"type":"ALL IN ALL OTHER DIMENSIONS"}],"type":"BY"}` +
		`],"type":"SELECT"}],"type":"metric"}`
	if string(got) != want {
		t.Fatalf("Tree() =\n%s\nwant\n%s", got, want)
	}
}

func TestMetricTreeEmptyString(t *testing.T) {
	t.Parallel()
	got, err := json.Marshal(mustParseMetric(t, `SELECT {f} WHERE {a} = ""`).Tree())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `{"type":"string","value":""}`) {
		t.Fatalf("Tree() = %s, want the empty string kept", got)
	}
}
