package slack

import (
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Slack's limits, in characters.
const (
	maxText    = 40000 // a message's text; longer is msg_too_long
	maxHeader  = 150   // a header block's text
	maxSection = 3000  // a section block's text
	maxBlocks  = 50    // blocks in one message
	maxSubject = 1000  // the subject's part of a message's text (Herald's own bound)
)

const ellipsis = "…"

// Escape makes s safe as Slack mrkdwn: &, < and > become &amp;, &lt; and
// &gt;, so that nothing in s is read as a mention, a link or a command.
// Other characters are left alone, as Slack asks.
func Escape(s string) string { return escaper.Replace(s) }

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escapedLen is the length, in characters, of r escaped.
func escapedLen(r rune) int {
	switch r {
	case '&':
		return len("&amp;")
	case '<', '>':
		return len("&lt;")
	}
	return 1
}

// escapeCut escapes s and cuts the result at max characters, ending it with
// an ellipsis when cut; an entity is never cut in two.
func escapeCut(s string, max int) string {
	n := 0
	for _, r := range s {
		n += escapedLen(r)
	}
	if n <= max {
		return Escape(s)
	}
	var b strings.Builder
	n = 0
	for i, r := range s {
		if n+escapedLen(r) > max-1 {
			b.WriteString(Escape(s[:i]))
			break
		}
		n += escapedLen(r)
	}
	b.WriteString(ellipsis)
	return b.String()
}

// clean makes s valid UTF-8 and trims it; line makes it one line too.
func clean(s string) string { return strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD")) }

func line(s string) string { return strings.Join(strings.Fields(clean(s)), " ") }

// Text is a message's text in Slack mrkdwn, escaped: the subject in bold on
// the first line and the text below it, or either alone, cut at Slack's
// 40,000 characters. It is the whole message where blocks are not shown,
// and what notifications show.
func Text(subject, text string) string {
	subject, text = line(subject), clean(text)
	switch {
	case subject == "":
		return escapeCut(text, maxText)
	case text == "":
		return "*" + escapeCut(subject, maxSubject) + "*"
	}
	head := "*" + escapeCut(subject, maxSubject) + "*\n"
	return head + escapeCut(text, maxText-utf8.RuneCountInString(head))
}

// Blocks lays a message out: a header block with the subject (plain text,
// which Slack does not parse, cut at 150 characters) and section blocks with
// the text as escaped mrkdwn, split at line breaks into Slack's 3,000
// characters a section, at most 50 blocks in all.
func Blocks(subject, text string) []slack.Block {
	subject, text = line(subject), clean(text)
	var blocks []slack.Block
	if subject != "" {
		blocks = append(blocks, slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, cut(subject, maxHeader), true, false)))
	}
	for _, part := range sections(text, maxBlocks-len(blocks)) {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, part, false, false), nil, nil))
	}
	return blocks
}

// cut cuts s at max characters, ending it with an ellipsis when cut.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)
	return string(runes[:max-1]) + ellipsis
}

// sections splits text into at most n escaped parts of at most maxSection
// characters, breaking after the last line break that fits in the second half
// of a part, else after the last space, else anywhere; text that does not fit
// in n parts is cut with an ellipsis.
func sections(text string, n int) []string {
	var parts []string
	for text != "" && len(parts) < n {
		size, end, nl, sp := 0, len(text), -1, -1
		for i, r := range text {
			if size+escapedLen(r) > maxSection {
				end = i
				break
			}
			size += escapedLen(r)
			switch r {
			case '\n':
				nl = i + 1
			case ' ':
				sp = i + 1
			}
		}
		if end < len(text) {
			if len(parts) == n-1 {
				parts = append(parts, escapeCut(strings.TrimRight(text, " \n"), maxSection))
				break
			}
			switch {
			case nl > end/2:
				end = nl
			case sp > 0:
				end = sp
			case nl > 0:
				end = nl
			}
		}
		if part := strings.TrimRight(text[:end], " \n"); strings.TrimSpace(part) != "" {
			parts = append(parts, Escape(part))
		}
		text = strings.TrimLeft(text[end:], "\n")
	}
	return parts
}
