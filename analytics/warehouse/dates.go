package warehouse

import "strings"

// dateIDs are the SQL expressions of the element ids of the date parts (see
// ldm.DateParts), over a DATE expression written as "{d}".
var dateIDs = map[string]string{
	"date":            "({d} - DATE '1899-12-31')",
	"week":            "(isoyear({d}) * 100 + week({d}))",
	"month":           "(year({d}) * 100 + month({d}))",
	"quarter":         "(year({d}) * 10 + quarter({d}))",
	"year":            "year({d})",
	"day_of_week":     "isodow({d})",
	"month_of_year":   "month({d})",
	"quarter_of_year": "quarter({d})",
}

// dateLabels are the SQL expressions of the date label formats, over "{d}".
var dateLabels = map[string]string{
	"yyyy-mm-dd": "strftime({d}, '%Y-%m-%d')",
	"mm/dd/yyyy": "strftime({d}, '%m/%d/%Y')",
	"Www/yyyy":   "('W' || lpad(CAST(week({d}) AS VARCHAR), 2, '0') || '/' || CAST(isoyear({d}) AS VARCHAR))",
	"Mon yyyy":   "strftime({d}, '%b %Y')",
	"Qq/yyyy":    "('Q' || CAST(quarter({d}) AS VARCHAR) || '/' || CAST(year({d}) AS VARCHAR))",
	"yyyy":       "CAST(year({d}) AS VARCHAR)",
	"Ddd":        "strftime({d}, '%a')",
	"Mon":        "strftime({d}, '%b')",
	"Qq":         "('Q' || CAST(quarter({d}) AS VARCHAR))",
}

// over writes a date expression template over the SQL expression date.
func over(template, date string) string {
	return strings.ReplaceAll(template, "{d}", date)
}

// DateID returns the SQL expression of the element id of a date part over a DATE
// expression, e.g. DateID("year", `t."dt_id"`) is year(t."dt_id").
func DateID(part, date string) (string, bool) {
	t, ok := dateIDs[part]
	return over(t, date), ok
}

// DateLabel returns the SQL expression of a date label format over a DATE expression.
func DateLabel(format, date string) (string, bool) {
	t, ok := dateLabels[format]
	return over(t, date), ok
}
