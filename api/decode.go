package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/internal/httpguard"
)

// decodeBody reads a JSON body into dst (a pointer to a struct) strictly: the
// body is capped, unknown fields and values of the wrong type are 400 errors
// that name the field's full path. Its media type was checked by the route
// (mediaTypes.check).
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, dst any) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return newError(http.StatusRequestEntityTooLarge, classUser, "api",
				"Request body is larger than %s bytes", strconv.FormatInt(tooBig.Limit, 10))
		}
		return badRequest("api", "Request body could not be read")
	}
	return decodeJSON(data, dst)
}

// mediaTypes are the media types a route takes a body in; the first is the one
// its errors ask for.
type mediaTypes []string

var (
	// jsonBody is what almost every route takes: application/json, or a type
	// with the +json suffix.
	jsonBody = mediaTypes{"application/json"}
	// csvBody is what a data load takes.
	csvBody = mediaTypes{"text/csv", "application/csv", "text/plain"}
	// formBody is what an unsubscribe link's page and a mail client's
	// one-click request (RFC 8058) post.
	formBody = mediaTypes{"application/x-www-form-urlencoded", "multipart/form-data"}
)

// check refuses with 415 a request that has a body without naming its media
// type, or naming one the route does not take: a browser sends a body of
// another site's form or script without asking only as a form or text, so a
// JSON route takes nothing another site can send. A request without a body
// needs no type.
func (m mediaTypes) check(r *http.Request) error {
	if r.ContentLength == 0 {
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return newError(http.StatusUnsupportedMediaType, classUser, "api",
			"The request has a body but no %s header; send %s", "Content-Type", m[0])
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && m.takes(mt) {
		return nil
	}
	return newError(http.StatusUnsupportedMediaType, classUser, "api",
		"%s %s is not accepted here; send %s", "Content-Type", httpguard.Clip(ct), m[0])
}

func (m mediaTypes) takes(mt string) bool {
	if m[0] == "application/json" && strings.HasSuffix(mt, "+json") {
		return true
	}
	return slices.Contains(m, mt)
}

func decodeJSON(data []byte, dst any) error { return decodeJSONAt(data, dst, "") }

// decodeJSONAt is decodeJSON for a part of a body that sits at path, which the
// errors name.
func decodeJSONAt(data []byte, dst any, path string) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return badRequest("api", "Request body is empty; a JSON object is expected")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("api", "Malformed JSON: unexpected data after the JSON value")
	}
	if err := checkValue(tree, reflect.TypeOf(dst).Elem(), path); err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		return malformed(err)
	}
	return nil
}

func malformed(err error) *Error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return badRequest("api", "Malformed JSON at offset %s: %s", strconv.FormatInt(se.Offset, 10), se.Error())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return badRequest("api", "Malformed JSON: %s", "unexpected end of input")
	}
	return badRequest("api", "Malformed JSON: %s", err.Error())
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkValue walks a decoded JSON value beside the Go type it will be decoded
// into, reporting the first unknown field or mismatched type with its path.
func checkValue(v any, t reflect.Type, path string) error {
	if v == nil {
		return nil // null leaves the zero value; required fields are checked by the handler
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		raw, _ := json.Marshal(v)
		if err := reflect.New(t).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return badField(pathOrBody(path), err.Error())
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkValue(v, t.Elem(), path)
	case reflect.Interface:
		return nil
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return badField(pathOrBody(path), "must be an object")
		}
		for key, val := range obj {
			f, ok := jsonField(t, key)
			if !ok {
				return newError(http.StatusBadRequest, classUser, "api", "Unknown field %s", joinPath(path, key))
			}
			if err := checkValue(val, f.Type, joinPath(path, key)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return badField(pathOrBody(path), "must be an object")
		}
		for key, val := range obj {
			if err := checkValue(val, t.Elem(), joinPath(path, key)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return badField(pathOrBody(path), "must be an array")
		}
		for i, val := range arr {
			if err := checkValue(val, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return badField(pathOrBody(path), "must be a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return badField(pathOrBody(path), "must be true or false")
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return badField(pathOrBody(path), "must be a whole number")
		}
		if _, err := n.Int64(); err != nil {
			return badField(pathOrBody(path), "must be a whole number")
		}
	case reflect.Float64:
		if _, ok := v.(json.Number); !ok {
			return badField(pathOrBody(path), "must be a number")
		}
	}
	return nil
}

func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if name == key && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func pathOrBody(path string) string {
	if path == "" {
		return "(request body)"
	}
	return path
}

// flag is a boolean that clients send as true, 1 or "1" (and false, 0, "0").
type flag bool

// UnmarshalJSON reads true, false, 1, 0 and their strings; null, as the json
// package's convention asks, leaves the value as it is.
func (f *flag) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	switch strings.Trim(string(b), `"`) {
	case "true", "1":
		*f = true
	case "false", "0", "":
		*f = false
	default:
		return errors.New("must be true, false, 1 or 0")
	}
	return nil
}

// looseString is a string that some clients send as a number (remember: 0).
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		*s = looseString(str)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("must be a string or a number")
	}
	*s = looseString(n.String())
	return nil
}
