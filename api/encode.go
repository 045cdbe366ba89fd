package api

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// wantsYAML reports whether the client asked for YAML before JSON.
func wantsYAML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/yaml", "application/x-yaml", "text/yaml":
			return true
		case "application/json":
			return false
		}
	}
	return false
}

// respond writes v as JSON, or as YAML with the same data when the client asks for it.
func respond(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":{"errorClass":"Internal","component":"api","message":"Response could not be encoded","parameters":[]}}`)
	}
	respondEncoded(w, r, status, body)
}

// jsonType is the Content-Type of JSON answers, written as the original platform wrote it:
// its Ruby SDK accepts a JSON answer only as exactly "application/json" or
// "application/json;charset=UTF-8", and every other client reads this one too.
const jsonType = "application/json;charset=UTF-8"

// respondEncoded writes body, a JSON document, or the same data as YAML when the client
// asks for it.
func respondEncoded(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	ctype := jsonType
	if wantsYAML(r) {
		if y, err := jsonToYAML(body); err == nil {
			body, ctype = y, "application/yaml; charset=utf-8"
		}
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	if bodyAllowed(status) {
		// Known ahead: the answer goes out whole rather than chunked, which
		// takes one write fewer and lets the client see its size.
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bodyAllowed reports whether an answer of this status may carry a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// jsonToYAML re-encodes a JSON document as YAML, keeping the order of keys.
func jsonToYAML(data []byte) ([]byte, error) {
	var n yaml.Node
	// JSON is YAML: decoding it as YAML keeps key order and scalar styles.
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, err
	}
	setBlockStyle(&n)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func setBlockStyle(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = 0
	}
	if n.Kind == yaml.ScalarNode && n.Style == yaml.DoubleQuotedStyle {
		n.Style = 0
		if n.Tag == "!!str" {
			// Keep strings that would read as another type quoted.
			var probe any
			if yaml.Unmarshal([]byte(n.Value), &probe) != nil || !isString(probe) || n.Value == "" {
				n.Style = yaml.DoubleQuotedStyle
			}
		}
	}
	for _, c := range n.Content {
		setBlockStyle(c)
	}
}

func isString(v any) bool { _, ok := v.(string); return ok }
