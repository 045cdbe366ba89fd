package console

import (
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"path"
	"strings"
	"time"

	"github.com/heraldhq/herald/analytics/numfmt"
)

// funcs are the helpers the templates use.
var funcs = template.FuncMap{
	// when shows an instant in a zone, with the zone named; the script shows it
	// in the viewer's own zone.
	"when": func(t time.Time) template.HTML {
		if t.IsZero() {
			return ""
		}
		return template.HTML(fmt.Sprintf(`<time datetime="%s">%s</time>`, t.UTC().Format(time.RFC3339),
			template.HTMLEscapeString(t.Format("Mon 2 Jan 2006 15:04 MST"))))
	},
	// whenThere shows an instant in its own zone (a subscription's), named,
	// and the script leaves it there.
	"whenThere": func(t time.Time) template.HTML {
		return template.HTML(fmt.Sprintf(`<time datetime="%s" data-zone="keep">%s</time>`, t.UTC().Format(time.RFC3339),
			template.HTMLEscapeString(t.Format("Mon 2 Jan 2006 15:04 MST"))))
	},
	"apiWhen": func(s string) template.HTML {
		t := apiTime(s)
		if t.IsZero() {
			return template.HTML(template.HTMLEscapeString(s))
		}
		return template.HTML(fmt.Sprintf(`<time datetime="%s">%s</time>`, t.Format(time.RFC3339),
			template.HTMLEscapeString(t.Format("Mon 2 Jan 2006 15:04 MST"))))
	},
	"value": func(v *float64) string {
		if v == nil {
			return "no value"
		}
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			return fmt.Sprint(*v)
		}
		return numfmt.Format(*v, "#,##0.######")
	},
	"name": func(names map[string]string, uri string) string {
		if n, ok := names[uri]; ok && n != "" {
			return n
		}
		return uri
	},
	"last":       last,
	"str":        str,
	"isOn":       isOn,
	"titled":     titled,
	"metric":     metric,
	"previewKey": previewKey,
	// dict hands a field's name and the form's errors to the field-error template.
	"dict": func(errs map[string]string, name string) map[string]any {
		return map[string]any{"Errors": errs, "Name": name}
	},
	"add":  func(a, b int) int { return a + b },
	"join": strings.Join,
	"stateClass": func(s string) string {
		switch s {
		case "delivered", "sent":
			return "ok"
		case "failed":
			return "bad"
		case "partially_failed", "skipped":
			return "warn"
		case "not_triggered":
			return "quiet"
		}
		return "busy"
	},
	"words": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("console page %s: %w", base, err)
		}
		pages[base] = t
	}
	return pages, nil
}
