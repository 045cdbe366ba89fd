package engine

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/heraldhq/herald/analytics/grid"
	"github.com/heraldhq/herald/client"
	"github.com/heraldhq/herald/store"
)

// APIExecutor runs metrics and exports reports through the service's own
// HTTP API, as a client would, with the engine's service account.
type APIExecutor struct {
	Client *client.Client
}

// ExecuteMetric runs the metric as a one-number report.
func (x APIExecutor) ExecuteMetric(ctx context.Context, metricURI string) (Value, error) {
	v, format, ok, err := x.Client.ExecuteMetric(ctx, metricURI)
	if err != nil {
		return Value{}, err
	}
	return Value{Number: v, Null: !ok, Format: format}, nil
}

// ExecuteReport executes a report (or a report definition).
func (x APIExecutor) ExecuteReport(ctx context.Context, reportURI string) (ReportResult, error) {
	var obj map[string]any
	if err := x.Client.Do(ctx, http.MethodGet, reportURI, nil, &obj); err != nil {
		return ReportResult{}, err
	}
	var res client.ReportResult
	var err error
	switch {
	case obj["report"] != nil:
		res, err = x.Client.ExecuteReport(ctx, reportURI)
	case obj["reportDefinition"] != nil:
		res, err = x.Client.Execute(ctx, reportURI)
	default:
		return ReportResult{}, fmt.Errorf("%s is neither a report nor a report definition", reportURI)
	}
	return ReportResult{URI: res.Meta.URI, Title: res.Content.ReportView.ReportName,
		Chart: res.Content.ReportView.Format == grid.FormatChart}, err
}

// Export exports an executed report in format into a new file in dir.
func (x APIExecutor) Export(ctx context.Context, res ReportResult, format, dir string) (store.Attachment, error) {
	return x.file(ctx, res.URI, format, dir)
}

// file exports a result in format into a new file in dir; a result without
// data gives an Attachment with no Path.
func (x APIExecutor) file(ctx context.Context, resultURI, format, dir string) (store.Attachment, error) {
	f, err := x.Client.Export(ctx, resultURI, format)
	if err != nil || f.Data == nil {
		return store.Attachment{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return store.Attachment{}, fmt.Errorf("attachment folder: %w", err)
	}
	// The folder is the report's at one instant, and each format is exported
	// into it once (the engine's memo), so names do not collide.
	name := safeName(f.Name, format)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, f.Data, 0o600); err != nil {
		return store.Attachment{}, fmt.Errorf("write attachment: %w", err)
	}
	return store.Attachment{Name: name, ContentType: f.ContentType, Path: path}, nil
}

// safeName keeps a file name from the service to one path element.
func safeName(name, format string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		name = "report." + strings.ToLower(format)
	}
	return name
}
