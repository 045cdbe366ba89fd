package sms

import (
	"strings"
	"unicode/utf8"
)

// Segment capacities. A message that fits in one segment gets the whole
// payload; a longer one is split into parts whose user data header takes
// room: 153 GSM-7 septets or 67 UCS-2 code units each.
const (
	gsmSingle  = 160
	gsmPart    = 153
	ucs2Single = 70
	ucs2Part   = 67
)

// gsmBasic is the GSM 03.38 default alphabet; each costs one septet.
const gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsmExtension is the default alphabet's extension table; each costs two
// septets (an escape and the character).
const gsmExtension = "\f^{}\\[~]|€"

var gsmCost = func() map[rune]int {
	m := make(map[rune]int, 140)
	for _, r := range gsmBasic {
		m[r] = 1
	}
	for _, r := range gsmExtension {
		m[r] = 2
	}
	return m
}()

// counter packs characters into segments of one encoding. A character never
// straddles two parts: an escaped GSM character or a UTF-16 surrogate pair
// that does not fit in what is left of a part starts the next one.
type counter struct {
	units int // total septets or UTF-16 code units
	parts int // parts when the message is split
	used  int // units in the last part
}

func (c *counter) add(cost, part int) {
	c.units += cost
	if c.parts == 0 || c.used+cost > part {
		c.parts++
		c.used = 0
	}
	c.used += cost
}

func (c counter) segments(single int) int {
	if c.units == 0 {
		return 0
	}
	if c.units <= single {
		return 1
	}
	return c.parts
}

// message tracks a text's segments under both encodings at once; the GSM-7
// count holds while every character is in the GSM alphabet.
type message struct {
	gsmOnly bool
	gsm     counter
	ucs2    counter
}

func newMessage() message { return message{gsmOnly: true} }

func (m *message) add(r rune) {
	if cost, ok := gsmCost[r]; ok && m.gsmOnly {
		m.gsm.add(cost, gsmPart)
	} else {
		m.gsmOnly = false
	}
	m.ucs2.add(utf16Len(r), ucs2Part)
}

func (m *message) addString(s string) {
	for _, r := range s {
		m.add(r)
	}
}

func (m message) segments() int {
	if m.gsmOnly {
		return m.gsm.segments(gsmSingle)
	}
	return m.ucs2.segments(ucs2Single)
}

func utf16Len(r rune) int {
	if r >= 0x10000 && r <= utf8.MaxRune {
		return 2
	}
	return 1
}

// Segments is how many SMS segments body takes: GSM-7 (160 septets alone,
// 153 per part, extension characters count twice) when every character is
// in the GSM alphabet, UCS-2 (70 alone, 67 per part) otherwise.
func Segments(body string) int {
	m := newMessage()
	m.addString(body)
	return m.segments()
}

// Ellipses that end a trimmed text: "..." keeps a GSM-7 text in GSM-7, where
// "…" would turn the whole message into UCS-2.
const (
	gsmEllipsis  = "..."
	ucs2Ellipsis = "…"
)

// Trim returns body unchanged when it fits in maxSegments segments, and
// otherwise the longest prefix of it that fits together with an ellipsis.
// A maxSegments below one is taken as one.
func Trim(body string, maxSegments int) string {
	return TrimBefore(body, "", maxSegments)
}

// TrimBefore is Trim for body followed by tail (the links of a message), which
// is kept whole: body is cut to make room for it. A tail that does not fit
// alone is cut like the rest.
func TrimBefore(body, tail string, maxSegments int) string {
	maxSegments = max(maxSegments, 1)
	if Segments(body+tail) <= maxSegments {
		return body + tail
	}
	if tail != "" && Segments(tail) > maxSegments {
		return TrimBefore(body+tail, "", maxSegments)
	}
	prefix := newMessage()
	best := strings.TrimLeftFunc(tail, isSpace)
	for end := 0; end < len(body); {
		r, size := utf8.DecodeRuneInString(body[end:])
		end += size
		prefix.add(r)
		withEllipsis := prefix
		ellipsis := ucs2Ellipsis
		if prefix.gsmOnly {
			ellipsis = gsmEllipsis
		}
		withEllipsis.addString(ellipsis + tail)
		if withEllipsis.segments() > maxSegments {
			break // adding characters never lowers the count
		}
		best = strings.TrimRightFunc(body[:end], isSpace) + ellipsis + tail
	}
	return best
}

func isSpace(r rune) bool { return r == ' ' || r == '\n' || r == '\r' || r == '\t' }
