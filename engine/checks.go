package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/engine/jexl"
	"github.com/heraldhq/herald/store"
)

// checks are what a run's messages check before they go, channel by
// channel: that their reports are not empty (onEmpty), that they differ
// from what the channel was last sent (sendWhen changed), and the files
// each channel is sent when attachments keep only new rows (newRowsBy).
type checks struct {
	sub     store.Subscription
	groups  []*group
	marks   map[string]store.ChannelMark // by channel; nil when nothing is compared
	marking bool                         // deliveries leave marks
	files   []store.Attachment           // every file the run made, of every group

	empty     int       // channels not sent to: their reports were empty
	unchanged time.Time // the instant of the last message a channel was not sent again; zero: none
}

// newChecks reads the marks the last deliveries to sub's channels left,
// when sub compares with them or sends only new rows.
func (e *Engine) newChecks(ctx context.Context, sub store.Subscription, atts []store.ReportAttachment) (*checks, error) {
	c := &checks{sub: sub, marking: sub.Def.SendWhen == store.SendChanged}
	for _, a := range atts {
		c.marking = c.marking || a.NewRowsBy != ""
	}
	if c.marking {
		var err error
		if c.marks, err = e.st.ChannelMarks(ctx, sub.ID); err != nil {
			return nil, err
		}
	}
	c.groups = groups(sub, atts, c.marks)
	return c, nil
}

// shape gives the payload of channel cid its group's files and body, and
// reports whether it goes, with the marks it leaves.
func (c *checks) shape(cid string, p *store.Payload) (*store.Marks, bool) {
	g := groupOf(c.groups, cid)
	if g.empty && c.sub.Def.OnEmpty != "" && c.sub.Def.OnEmpty != store.OnEmptySend {
		c.empty++
		return nil, false
	}
	if len(c.groups) > 1 {
		p.HTML, p.Attachments = g.html, c.files[g.first:g.last]
		p.Links.Files = fileLinks(p.Links.Files, c.files, g.first, g.last)
	}
	if !c.marking {
		return nil, true
	}
	m := &store.Marks{Digest: digest(*p, g.data), HighWater: g.highWater}
	if last, ok := c.marks[cid]; ok && c.sub.Def.SendWhen == store.SendChanged && last.Digest == m.Digest {
		if last.At.After(c.unchanged) {
			c.unchanged = last.At
		}
		return nil, false
	}
	return m, true
}

// fileLinks picks, from the download links of every file of the run (one
// per file that is not an inline image, in order), those of files[first:last].
func fileLinks(links []channels.FileLink, files []store.Attachment, first, last int) []channels.FileLink {
	count := func(fs []store.Attachment) int {
		n := 0
		for _, f := range fs {
			if f.ContentID == "" {
				n++
			}
		}
		return n
	}
	from, to := count(files[:first]), count(files[:last])
	if to > len(links) {
		return nil
	}
	return links[from:to]
}

// finish adds to a run's deliveries the notice to the owner when channels
// were not sent empty reports and the subscription asks for it, and says
// why channels were not sent to.
func (c *checks) finish(ctx context.Context, e *Engine, run store.Run, ds []store.Delivery) ([]store.Delivery, string, error) {
	reason := ""
	switch {
	case c.empty > 0:
		reason = "empty report"
	case !c.unchanged.IsZero():
		reason = "unchanged since " + c.unchanged.UTC().Format(time.RFC3339)
	}
	if c.empty == 0 || c.sub.Def.OnEmpty != store.OnEmptyNotifyOwner {
		return ds, reason, nil
	}
	n, err := e.domain.EmptyNotice(ctx, c.sub, run)
	if err != nil {
		return nil, "", fmt.Errorf("notice to the owner: %w", err)
	}
	if slices.ContainsFunc(ds, func(d store.Delivery) bool { return d.ChannelID == n.ChannelID }) {
		return ds, reason, nil // the owner's own address is sent the message
	}
	return append(ds, n), reason + "; the owner was told", nil
}

// compares reports whether the run compares its messages with the last
// sent (sendWhen changed).
func (c *checks) compares() bool { return c.sub.Def.SendWhen == store.SendChanged }

// digest sums up what a message holds: its subject, text and HTML, each
// file's name and type, and its content (the store names a file by its
// content's digest) or, for a PDF or a workbook, which hold the time they
// were made, the data they show (data, a digest per attachment); not its
// links, which are new for every message.
func digest(p store.Payload, data []string) string {
	h := sha256.New()
	write := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	for _, s := range []string{p.Subject, p.Text, p.HTML} {
		write(s)
	}
	for _, a := range p.Attachments {
		write(a.Name)
		write(a.ContentType)
		write(a.ContentID)
		if !timestamped[a.ContentType] {
			write(filepath.Base(a.Path))
		}
	}
	for _, d := range data {
		write(d)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// timestamped are the types of files that hold the time they were made.
var timestamped = map[string]bool{
	render.ContentType(render.FormatPDF): true,
	render.ContentType(render.FormatXLS): true,
}

// renderError is a report file that could not be rendered or came out
// unreadable: the run fails at the render stage.
type renderError struct{ err error }

func (e *renderError) Error() string { return e.err.Error() }
func (e *renderError) Unwrap() error { return e.err }

// exportFailure is the run's failure when attachment a could not be
// attached: at the render stage when its file could not be rendered, at
// the export stage when its report could not be executed.
func exportFailure(a store.ReportAttachment, err error) error {
	stage := stageExport
	if re := (*renderError)(nil); errors.As(err, &re) {
		stage = stageRender
	}
	return &stageError{stage, fmt.Errorf("export %s: %w", a.Report, err)}
}

// signatures are how each format's files start.
var signatures = map[string][]byte{
	render.FormatPDF: []byte("%PDF-"),
	render.FormatPNG: []byte("\x89PNG\r\n\x1a\n"),
	render.FormatXLS: []byte("PK\x03\x04"), // an .xlsx workbook is a zip
}

// checkFile checks that a rendered file can be read as its format: not
// empty, starting as the format does, a CSV or HTML file in UTF-8.
func checkFile(path, format string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	head = head[:n]
	if n == 0 {
		return fmt.Errorf("the %s file came out empty", format)
	}
	if sig, ok := signatures[format]; ok && !bytes.HasPrefix(head, sig) {
		return fmt.Errorf("the %s file came out unreadable: it does not start as a %s file does", format, format)
	}
	if format == render.FormatCSV || format == render.FormatHTML {
		if trimmed := head[:len(head)-incompleteRune(head)]; !utf8.Valid(trimmed) {
			return fmt.Errorf("the %s file came out unreadable: it is not UTF-8", format)
		}
	}
	return nil
}

// incompleteRune is how many bytes at the end of b start a character that
// the rest of the file completes.
func incompleteRune(b []byte) int {
	for i := 1; i <= min(utf8.UTFMax-1, len(b)); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// storeWriter is the file store's writer as an export sees it: it keeps the
// first error of the store, so that a store that cannot write (a full disk)
// is not taken for a render that failed.
type storeWriter struct {
	w   io.Writer
	err error
}

func (s *storeWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

// inputs are the values the subscription's programs read: each metric's
// value, and under jexl.PreviousKey the previous value of those read with
// f:previous (NaN: none).
func (ev evaluation) inputs() map[string]float64 {
	out := maps.Clone(ev.values)
	if out == nil {
		out = map[string]float64{}
	}
	for _, uri := range ev.programs.previous {
		v := math.NaN()
		if p := ev.prev[uri]; p != nil {
			v = *p
		}
		out[jexl.PreviousKey(uri)] = v
	}
	return out
}

// previousValues are the values of the metrics read with f:previous, which
// the next run reads; nil when the subscription reads none.
func (ev evaluation) previousValues() map[string]*float64 {
	if len(ev.programs.previous) == 0 {
		return nil
	}
	out := make(map[string]*float64, len(ev.programs.previous))
	for _, uri := range ev.programs.previous {
		if v, ok := ev.values[uri]; ok && !ev.nulls[uri] {
			out[uri] = &v
		} else {
			out[uri] = nil
		}
	}
	return out
}

// attachOpts are what a run asks of an attachment beyond its files.
type attachOpts struct {
	after int64 // newRowsBy: the day its rows start after
	// data asks for the digest of the report's data: the name of its CSV
	// rendering in the file store, which holds no time of its making as a
	// PDF or a workbook does (sendWhen changed).
	data bool
}

// withData returns formats with the CSV the data digest is taken of, added
// when opt asks for the digest and the attachment has none, and its index;
// -1 when opt does not ask.
func withData(formats []string, opt attachOpts) ([]string, int) {
	if !opt.data {
		return formats, -1
	}
	if i := slices.Index(formats, render.FormatCSV); i >= 0 {
		return formats, i
	}
	return append(formats, render.FormatCSV), len(formats)
}

// dataDigest is the digest of the report's data: the name of its CSV file,
// files[csv]; "" when it is not asked for or the report has no data.
func dataDigest(files []store.Attachment, errs []error, csv int) (string, error) {
	if csv < 0 {
		return "", nil
	}
	if errs[csv] != nil {
		return "", fmt.Errorf("as CSV: %w", errs[csv])
	}
	if files[csv].Path == "" {
		return "", nil
	}
	return filepath.Base(files[csv].Path), nil
}

// previousRead are the previous values the run read: those of the metrics
// read with f:previous; nil when it reads none.
func (ev evaluation) previousRead() map[string]*float64 {
	if len(ev.programs.previous) == 0 {
		return nil
	}
	out := make(map[string]*float64, len(ev.programs.previous))
	for _, uri := range ev.programs.previous {
		out[uri] = ev.prev[uri]
	}
	return out
}
