package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/store"
)

// fileKey names one file of an attached report of a slice of the data at an instant.
type fileKey struct {
	report, format string
	f              Filters
}

// attached is one attached report as a run uses it: its files, and what the
// mail's body shows of it.
type attached struct {
	files  []store.Attachment // in the order of the formats
	inline inlineReport
	latest int64  // for newRowsBy: the latest day the files hold
	data   string // for sendWhen changed: the digest of the report's data (attachOpts.data)
}

// attachAll exports the attachments as p for a run at instant at, each with
// opt(a): their files in order, each report's followed by its inline chart
// (numbered as the body shows it), the reports the body shows, and what each
// attachment gave. On an error, files holds what was exported before it.
func (e *Engine) attachAll(ctx context.Context, p Principal, atts []store.ReportAttachment, at time.Time,
	opt func(store.ReportAttachment) attachOpts) (files []store.Attachment, reports []inlineReport, gots []attached, err error) {
	for _, a := range atts {
		got, err := e.attach(ctx, p, a, at, opt(a))
		if err != nil {
			return files, reports, gots, exportFailure(a, err)
		}
		gots = append(gots, got)
		files = append(files, got.files...)
		r := got.inline
		if r.html == "" {
			continue
		}
		if r.chart.Path != "" {
			r.chart.ContentID = fmt.Sprintf("chart-%d@herald", len(reports)+1)
			files = append(files, r.chart)
		}
		reports = append(reports, r)
	}
	return files, reports, gots, nil
}

// attach exports report a for a run at instant at, as principal p. Every
// run of that instant that attaches the report, as a principal of the same
// slice of the data, shares one execution, one file per format and one body
// fragment (the memos), and each file is
// written once, streamed into the engine's file store, which the runs
// reference. The files are asked for at once, so that the run waits for the
// slowest render, not for their sum. An attachment that keeps only new rows
// keeps those after day after.
func (e *Engine) attach(ctx context.Context, p Principal, a store.ReportAttachment, at time.Time, opt attachOpts) (attached, error) {
	after := opt.after
	key := reportKey(a, after)
	res, err := e.reports.do(ctx, sliceKey{key, p.Filters}, at, func(ctx context.Context) (ReportResult, error) {
		e.metrics.reportExecutions.Inc()
		return e.executeAttached(ctx, p, a, after)
	})
	if err != nil {
		return attached{}, err
	}
	formats := make([]string, 0, len(a.Formats)+2)
	for _, f := range a.Formats {
		if f = strings.ToUpper(f); f == "XLSX" {
			f = render.FormatXLS
		}
		formats = append(formats, f)
	}
	formats = append(formats, render.FormatHTML)
	if res.Chart {
		formats = append(formats, render.FormatPNG)
	}
	formats, csv := withData(formats, opt)
	files := make([]store.Attachment, len(formats))
	errs := make([]error, len(formats))
	var wg sync.WaitGroup
	for i, format := range formats {
		wg.Go(func() {
			files[i], errs[i] = e.files.do(ctx, fileKey{key, format, p.Filters}, at, func(ctx context.Context) (store.Attachment, error) {
				e.metrics.reportFiles.WithLabelValues(format).Inc()
				return e.export(ctx, p, res, format)
			})
		})
	}
	wg.Wait()
	n := len(a.Formats)
	html, png := n, n+1 // the body's files, after the attachments
	for i := range n {
		if errs[i] != nil {
			return attached{}, fmt.Errorf("as %s: %w", formats[i], errs[i])
		}
		if files[i].Path == "" {
			return attached{}, nil // a report without data has nothing to attach or show
		}
	}
	out := attached{files: files[:n], latest: res.latest}
	if out.data, err = dataDigest(files, errs, csv); err != nil {
		return out, err
	}
	if errs[html] != nil {
		return out, fmt.Errorf("as HTML: %w", errs[html])
	}
	if files[html].Path == "" {
		return out, nil
	}
	fragment, err := os.ReadFile(files[html].Path)
	if err != nil {
		return out, fmt.Errorf("as HTML: %w", err)
	}
	out.inline = inlineReport{html: string(fragment), title: res.Title}
	if res.Chart {
		if errs[png] != nil {
			return out, fmt.Errorf("as PNG: %w", errs[png])
		}
		out.inline.chart = files[png]
	}
	return out, nil
}

// export renders an executed report in format straight into the file store;
// a report without data gives an Attachment with no Path.
func (e *Engine) export(ctx context.Context, p Principal, res ReportResult, format string) (store.Attachment, error) {
	var x Export
	var rendered error // the export's own failure, not the store's
	path, err := e.runFiles.write(func(w io.Writer) error {
		sw := &storeWriter{w: w}
		x, rendered = e.analytics.ExportReport(ctx, p, res, format, sw)
		if rendered != nil && sw.err != nil {
			return sw.err
		}
		return rendered
	})
	if errors.Is(err, ErrNoData) {
		return store.Attachment{}, nil
	}
	if err == nil {
		rendered = checkFile(path, format)
		err = rendered
	}
	if err != nil && errors.Is(err, rendered) {
		return store.Attachment{}, &renderError{err}
	}
	if err != nil {
		return store.Attachment{}, err
	}
	return store.Attachment{Name: safeName(x.Name, format), ContentType: x.ContentType, Path: path}, nil
}

// safeName keeps a file name from the service to one path element.
func safeName(name, format string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		name = "report." + strings.ToLower(format)
	}
	return name
}

// folderInstant reads the instant back from a folder's name (see sharedFolder).
func folderInstant(name string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(name, "at")
	if !ok {
		return time.Time{}, false
	}
	unix, _, ok := strings.Cut(rest, "-")
	n, err := strconv.ParseInt(unix, 10, 64)
	if !ok || err != nil {
		return time.Time{}, false
	}
	return time.Unix(n, 0), true
}
