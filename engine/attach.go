package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldhq/herald/analytics/render"
	"github.com/heraldhq/herald/store"
)

// fileKey names one file of an attached report at an instant.
type fileKey struct {
	report, format string
}

// attached is one attached report as a run uses it: its files, and what the
// mail's body shows of it.
type attached struct {
	files  []store.Attachment // in the order of the formats
	inline inlineReport
}

// attach exports report a for a run at instant at. Every run of that instant
// that attaches the report shares one execution, one file per format and one
// body fragment (the memos), and the files are written once, into a folder
// of the report and instant, which the runs reference. The files are asked
// for at once, so that the run waits for the slowest render, not for their
// sum.
func (e *Engine) attach(ctx context.Context, a store.ReportAttachment, at time.Time) (attached, error) {
	res, err := e.reports.do(ctx, a.Report, at, func(ctx context.Context) (ReportResult, error) {
		e.metrics.reportExecutions.Inc()
		return e.executor().ExecuteReport(ctx, a.Report)
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
	dir := filepath.Join(e.cfg.FilesDir, sharedFolder(a.Report, at))
	files := make([]store.Attachment, len(formats))
	errs := make([]error, len(formats))
	var wg sync.WaitGroup
	for i, format := range formats {
		wg.Go(func() {
			files[i], errs[i] = e.files.do(ctx, fileKey{a.Report, format}, at, func(ctx context.Context) (store.Attachment, error) {
				e.metrics.reportFiles.WithLabelValues(format).Inc()
				return e.executor().Export(ctx, res, format, dir)
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
	out := attached{files: files[:n]}
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

// sharedFolder is the folder of a report's files at an instant, under the
// engine's files folder: old folders are pruned after the retention period.
func sharedFolder(report string, at time.Time) string {
	sum := sha256.Sum256([]byte(report))
	return "at" + strconv.FormatInt(at.Unix(), 10) + "-" + hex.EncodeToString(sum[:6])
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
