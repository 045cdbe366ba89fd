package console

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// exportWait bounds how long a preview waits for a report's file.
const exportWait = 2 * time.Minute

// previewFile executes an attached report now and downloads it in one of its
// formats, as the next fire would attach it: POST executor3, POST exporter,
// then the file once it is rendered.
func (c *Console) previewFile(w http.ResponseWriter, q *req) error {
	pid, sid := q.r.PathValue("pid"), q.r.PathValue("sid")
	s, err := c.load(q, pid, sid)
	if err != nil {
		return err
	}
	i, err := strconv.Atoi(q.r.PathValue("i"))
	format := strings.ToUpper(q.r.PathValue("format"))
	if err != nil || i < 0 || i >= len(s.Attachments) || !hasFormat(s.Attachments[i].Formats, format) {
		return &apiError{Status: http.StatusNotFound, Message: "The subscription has no such attachment."}
	}
	uri := s.Attachments[i].Report
	var obj map[string]json.RawMessage
	if _, err := q.do(q.ctx, http.MethodGet, uri, nil, &obj); err != nil {
		return err
	}
	key := "report"
	if obj["reportDefinition"] != nil {
		key = "reportDefinition"
	}
	var res struct {
		Result struct {
			Meta struct{ URI string } `json:"meta"`
		} `json:"reportResult2"`
	}
	if _, err := q.do(q.ctx, http.MethodPost, "/svc/xtab2/executor3", map[string]any{"report_req": map[string]any{key: uri}}, &res); err != nil {
		return err
	}
	var started struct{ URI string }
	body := map[string]any{"result_req": map[string]any{"report": res.Result.Meta.URI, "format": format}}
	if _, err := q.do(q.ctx, http.MethodPost, "/svc/exporter/executor", body, &started); err != nil {
		return err
	}
	deadline := c.opt.Clock.NewTimer(exportWait)
	defer deadline.Stop()
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		rec, err := q.do(q.ctx, http.MethodGet, started.URI, nil, nil)
		if err != nil {
			return err
		}
		switch rec.status {
		case http.StatusNoContent:
			return &apiError{Status: http.StatusNotFound, Message: "The report has no data now: the next fire would attach nothing."}
		case http.StatusOK:
			for _, h := range []string{"Content-Type", "Content-Disposition"} {
				w.Header().Set(h, rec.header.Get(h))
			}
			_, err := w.Write(rec.body.Bytes())
			return err
		}
		t := c.opt.Clock.NewTimer(wait)
		select {
		case <-q.ctx.Done():
			t.Stop()
			return q.ctx.Err()
		case <-deadline.C():
			t.Stop()
			return &apiError{Status: http.StatusGatewayTimeout, Message: "The report took too long to render; try again."}
		case <-t.C():
		}
	}
}

func hasFormat(formats []string, f string) bool {
	for _, x := range formats {
		if strings.EqualFold(x, f) || (f == "XLS" && strings.EqualFold(x, "XLSX")) {
			return true
		}
	}
	return false
}
