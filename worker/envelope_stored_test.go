package worker

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/store"
)

// storedHead is the head of the envelopes below.
var storedHead = envelopeHead{ID: "d1", Owner: "u1", Subscription: "s1", Secret: []byte("sealed"),
	Channel: envelopeChannel{ID: "c1", Kind: "email", Config: json.RawMessage(`{"to":"ops@example.com"}`)}}

// asStored encodes p as the store does: compact, HTML not escaped.
func asStored(t testing.TB, p store.Payload) store.RawPayload {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// checkAsStored fails t unless p travels as stored exactly when spliced says
// so, and then reads as the envelope seal writes field by field.
func checkAsStored(t testing.TB, p store.Payload, spliced bool) {
	t.Helper()
	data, ok := sealAsStored(storedHead, asStored(t, p), 1<<20)
	if ok != spliced {
		t.Fatalf("payload %+v travels as stored: %v, want %v", p, ok, spliced)
	}
	if !ok {
		return
	}
	var got envelope
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	want := envelope{envelopeHead: storedHead, Subject: p.Subject, Text: p.Text, HTML: p.HTML, Source: p.Source, Links: p.Links}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("envelope as stored\n%+v\nwant\n%+v", got, want)
	}
}

// TestPayloadTravelsAsStored: a payload without files travels in its envelope
// as the store holds it, and reads as the envelope sealed field by field; one
// with files to put first, one too large, and one that is not JSON do not.
func TestPayloadTravelsAsStored(t *testing.T) {
	t.Parallel()
	one := 1.5
	tests := []struct {
		name    string
		p       store.Payload
		spliced bool
	}{
		{"text and HTML", store.Payload{Subject: `Revenue <up> "3%"`, Text: "a & b\n\u2028é", HTML: "<p>a &amp; b</p>"}, true},
		{"source and links", store.Payload{Subject: "s", Text: "t",
			Source: channels.Source{Subscription: "/s/1", Run: "r1", Instant: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC),
				Values: map[string]*float64{"/m/1": &one, "/m/2": nil}},
			Links: channels.Links{Unsubscribe: "https://h/u", Files: []channels.FileLink{{Name: "r.csv", URL: "https://h/f"}}}}, true},
		{"a text that reads like a key", store.Payload{Subject: "s", Text: "attachments"}, false},
		{"a text that names a key inside", store.Payload{Subject: "s", Text: `see "attachments" below`}, true},
		{"attachments", store.Payload{Subject: "s", Text: "t", Attachments: []store.Attachment{{Name: "r.csv", Path: "/x/r.csv"}}}, false},
		{"an HTML file", store.Payload{Subject: "s", Text: "t", HTMLFile: "/runs/x.html"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkAsStored(t, tt.p, tt.spliced)
		})
	}
	p := asStored(t, store.Payload{Subject: "s", Text: "t"})
	if _, ok := sealAsStored(storedHead, p, len(p)); ok {
		t.Error("an envelope over maxBytes travels as stored")
	}
	for _, bad := range []string{`{"subject":"s",`, `{"subject":"s"}x`, `{}`, `[]`, ``} {
		if _, ok := sealAsStored(storedHead, store.RawPayload(bad), 1<<20); ok {
			t.Errorf("payload %q travels as stored", bad)
		}
	}
}

// FuzzPayloadTravelsAsStored: whatever the message, a payload without files
// that travels as stored reads as the envelope sealed field by field.
func FuzzPayloadTravelsAsStored(f *testing.F) {
	f.Add("Revenue", "up 3%", "<p>up</p>", "/s/1")
	f.Add(`"attachments"`, "htmlFile", "\u2028\x00", "")
	f.Fuzz(func(t *testing.T, subject, text, html, sub string) {
		p := store.Payload{Subject: subject, Text: text, HTML: html, Source: channels.Source{Subscription: sub}}
		data, ok := sealAsStored(storedHead, asStored(t, p), 1<<20)
		if !ok {
			return
		}
		var got envelope
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		// Invalid UTF-8 reads back as U+FFFD either way.
		var want envelope
		full, err := json.Marshal(envelope{envelopeHead: storedHead, Subject: p.Subject, Text: p.Text, HTML: p.HTML, Source: p.Source})
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(full, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("envelope as stored\n%+v\nwant\n%+v", got, want)
		}
	})
}
