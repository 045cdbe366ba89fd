package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/clock"
)

// ReportResult is the answer of the execute endpoint (reportResult2).
type ReportResult struct {
	Content struct {
		DataResult       string `json:"dataResult"`
		ReportDefinition string `json:"reportDefinition"`
		ReportView       struct {
			ReportName string `json:"reportName"`
			Format     string `json:"format"`
			Metrics    []struct {
				MetricID string `json:"metricId"`
				Title    string `json:"title"`
				Format   string `json:"format"`
			} `json:"metrics"`
		} `json:"reportView"`
	} `json:"content"`
	Meta struct {
		URI   string `json:"uri"`
		Title string `json:"title"`
	} `json:"meta"`
}

// XTab is a data result (xtab_data); Data values are strings or nil.
type XTab struct {
	Data        [][]*string `json:"data"`
	OverallSize struct {
		Rows    int `json:"rows"`
		Columns int `json:"columns"`
	} `json:"overall_size"`
}

// Execute runs a report definition given by URI.
func (c *Client) Execute(ctx context.Context, definitionURI string) (ReportResult, error) {
	return c.execute(ctx, map[string]any{"reportDefinition": definitionURI})
}

// ExecuteReport runs the current definition of a report given by URI.
func (c *Client) ExecuteReport(ctx context.Context, reportURI string) (ReportResult, error) {
	return c.execute(ctx, map[string]any{"report": reportURI})
}

func (c *Client) execute(ctx context.Context, req map[string]any) (ReportResult, error) {
	var out struct {
		Result ReportResult `json:"reportResult2"`
	}
	err := c.Do(ctx, http.MethodPost, "/svc/xtab2/executor3", map[string]any{"report_req": req}, &out)
	return out.Result, err
}

// ExecuteMetric computes one metric over its whole project: a one-number
// report of just that metric. ok is false when the metric has no value.
func (c *Client) ExecuteMetric(ctx context.Context, metricURI string) (value float64, format string, ok bool, err error) {
	pid, found := projectOfObject(metricURI)
	if !found {
		return 0, "", false, fmt.Errorf("%s is not a metric URI", metricURI)
	}
	def := map[string]any{
		"format": "oneNumber",
		"grid": map[string]any{"rows": []any{}, "columns": []any{"metricGroup"},
			"metrics": []any{map[string]any{"uri": metricURI, "alias": ""}}},
	}
	res, err := c.execute(ctx, map[string]any{"definitionContent": map[string]any{
		"content": def, "projectMetadata": "/svc/md/" + pid}})
	if err != nil {
		return 0, "", false, err
	}
	if len(res.Content.ReportView.Metrics) > 0 {
		format = res.Content.ReportView.Metrics[0].Format
	}
	x, err := c.DataResult(ctx, res.Content.DataResult)
	if err != nil || x == nil || len(x.Data) == 0 || len(x.Data[0]) == 0 || x.Data[0][0] == nil {
		return 0, format, false, err
	}
	value, err = strconv.ParseFloat(*x.Data[0][0], 64)
	if err != nil {
		return 0, format, false, fmt.Errorf("metric %s: value %q is not a number", metricURI, *x.Data[0][0])
	}
	return value, format, true, nil
}

func projectOfObject(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "/svc/md/")
	if !ok {
		return "", false
	}
	pid, _, ok := strings.Cut(rest, "/")
	return pid, ok && pid != ""
}

// DataResult waits for a data result and returns it; nil when it is empty (204).
func (c *Client) DataResult(ctx context.Context, uri string) (*XTab, error) {
	var x *XTab
	err := c.poll(ctx, uri, func(resp *http.Response, body []byte) error {
		if resp.StatusCode == http.StatusNoContent {
			return nil
		}
		var out struct {
			XTab XTab `json:"xtab_data"`
		}
		if err := decodeJSON(body, &out); err != nil {
			return err
		}
		x = &out.XTab
		return nil
	})
	return x, err
}

// File is a downloaded export.
type File struct {
	Name        string // from Content-Disposition
	ContentType string
	Data        []byte // nil when the report has no data
}

// Export exports an executed report (its reportResult2 URI) in format (PDF,
// CSV, PNG, XLS) and downloads the file.
func (c *Client) Export(ctx context.Context, resultURI, format string) (File, error) {
	var out struct {
		URI string `json:"uri"`
	}
	body := map[string]any{"result_req": map[string]any{"report": resultURI, "format": format}}
	if err := c.Do(ctx, http.MethodPost, "/svc/exporter/executor", body, &out); err != nil {
		return File{}, err
	}
	var f File
	err := c.poll(ctx, out.URI, func(resp *http.Response, data []byte) error {
		f.ContentType = resp.Header.Get("Content-Type")
		if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
			f.Name = params["filename"]
		}
		if resp.StatusCode == http.StatusOK {
			f.Data = data
		}
		return nil
	})
	return f, err
}

// poll GETs uri until it answers something other than 202, waiting between
// attempts (starting short, never longer than the Refresh header asks), and
// hands the final answer to done. A TT challenge is answered as Do does.
func (c *Client) poll(ctx context.Context, uri string, done func(*http.Response, []byte) error) error {
	wait := 2 * time.Millisecond
	for {
		resp, body, err := c.get(ctx, uri)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusAccepted {
			return done(resp, body)
		}
		limit := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Refresh")); err == nil && s > 0 {
			limit = time.Duration(s) * time.Second
		}
		if !clock.Sleep(ctx, clock.Real(), min(wait, limit)) { // the server renders on its own time
			return ctx.Err()
		}
		wait *= 2
	}
}

// get is a GET that keeps the raw answer, with the token renewal of Do.
func (c *Client) get(ctx context.Context, uri string) (*http.Response, []byte, error) {
	for attempt := 0; ; attempt++ {
		c.mu.Lock()
		gen := c.gen
		c.mu.Unlock()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+uri, nil)
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", c.ua)
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, nil, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		if resp.StatusCode < 400 {
			return resp, body, nil
		}
		e := errorOf(resp, body)
		if attempt > 0 || e.Status != http.StatusUnauthorized || e.Challenge == "" {
			return nil, nil, e
		}
		if err := c.renew(ctx, gen, e.Challenge); err != nil {
			return nil, nil, err
		}
	}
}

func decodeJSON(data []byte, out any) error {
	if len(data) == 0 {
		return errors.New("empty answer")
	}
	return json.Unmarshal(data, out)
}
