package engine

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

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

// ExportReport executes a report (or a report definition) and exports it in
// format into a file in dir. A report without data gives an Attachment with
// no Path: there is nothing to attach.
func (x APIExecutor) ExportReport(ctx context.Context, reportURI, format, dir string) (store.Attachment, error) {
	var obj map[string]any
	if err := x.Client.Do(ctx, http.MethodGet, reportURI, nil, &obj); err != nil {
		return store.Attachment{}, err
	}
	var res client.ReportResult
	var err error
	switch {
	case obj["report"] != nil:
		res, err = x.Client.ExecuteReport(ctx, reportURI)
	case obj["reportDefinition"] != nil:
		res, err = x.Client.Execute(ctx, reportURI)
	default:
		return store.Attachment{}, fmt.Errorf("%s is neither a report nor a report definition", reportURI)
	}
	if err != nil {
		return store.Attachment{}, err
	}
	f, err := x.Client.Export(ctx, res.Meta.URI, format)
	if err != nil || f.Data == nil {
		return store.Attachment{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return store.Attachment{}, fmt.Errorf("attachment folder: %w", err)
	}
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
