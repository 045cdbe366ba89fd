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
// of the report and instant, which the runs reference.
func (e *Engine) attach(ctx context.Context, a store.ReportAttachment, at time.Time) (attached, error) {
	var out attached
	res, err := e.reports.do(ctx, a.Report, at, func(ctx context.Context) (ReportResult, error) {
		e.metrics.reportExecutions.Inc()
		return e.executor().ExecuteReport(ctx, a.Report)
	})
	if err != nil {
		return out, err
	}
	dir := filepath.Join(e.cfg.FilesDir, sharedFolder(a.Report, at))
	file := func(format string) (store.Attachment, error) {
		format = strings.ToUpper(format)
		if format == "XLSX" {
			format = render.FormatXLS
		}
		return e.files.do(ctx, fileKey{a.Report, format}, at, func(ctx context.Context) (store.Attachment, error) {
			e.metrics.reportFiles.WithLabelValues(format).Inc()
			return e.executor().Export(ctx, res, format, dir)
		})
	}
	for _, format := range a.Formats {
		f, err := file(format)
		if err != nil {
			return out, fmt.Errorf("as %s: %w", format, err)
		}
		if f.Path == "" {
			return out, nil // a report without data has nothing to attach or show
		}
		out.files = append(out.files, f)
	}
	html, err := file(render.FormatHTML)
	if err != nil || html.Path == "" {
		return out, err
	}
	fragment, err := os.ReadFile(html.Path)
	if err != nil {
		return out, fmt.Errorf("as HTML: %w", err)
	}
	out.inline = inlineReport{html: string(fragment), title: res.Title}
	if res.Chart {
		if out.inline.chart, err = file(render.FormatPNG); err != nil {
			return out, fmt.Errorf("as PNG: %w", err)
		}
	}
	return out, nil
}

// sharedFolder is the folder of a report's files at an instant, under the
// engine's files folder: old folders are pruned after the retention period.
func sharedFolder(report string, at time.Time) string {
	sum := sha256.Sum256([]byte(report))
	return "at" + strconv.FormatInt(at.Unix(), 10) + "-" + hex.EncodeToString(sum[:6])
}
