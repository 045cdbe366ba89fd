package ldm

import (
	"fmt"
	"strings"

	"github.com/heraldhq/herald/analytics/maql"
)

// DateTemplate is the URN of the date dimension template.
const DateTemplate = "URN:GOODDATA:DATE"

// DatePart is an attribute of a date dimension: a part of a date, with fixed labels.
// Element ids are numbers derived from the date, so they are stable without a lookup:
// date: days since 1899-12-31 (1900-01-01 is 1); year: 2024; quarter: 20241; month:
// 202401; week: ISO year and week, 202405; day_of_week: 1 (Monday) to 7; month_of_year:
// 1 to 12; quarter_of_year: 1 to 4.
type DatePart struct {
	// Name is the part's name, also the last segment of its attribute's identifier.
	Name   string
	Title  string
	Labels []DateLabel
}

// DateLabel is a label of a date part: Format names how the warehouse prints the date.
type DateLabel struct {
	// Name is the last segment of the label's identifier.
	Name   string
	Title  string
	Format string
}

// Date parts, finest first. The date part is the dimension's connection point: date
// references are its keys.
var DateParts = []DatePart{
	{Name: "date", Title: "Date", Labels: []DateLabel{
		{Name: "yyyymmdd", Title: "yyyy-mm-dd", Format: "yyyy-mm-dd"},
		{Name: "mmddyyyy", Title: "mm/dd/yyyy", Format: "mm/dd/yyyy"},
	}},
	{Name: "week", Title: "Week/Year", Labels: []DateLabel{{Name: "wwyyyy", Title: "Wk/Year", Format: "Www/yyyy"}}},
	{Name: "month", Title: "Month/Year", Labels: []DateLabel{{Name: "mmmyyyy", Title: "Mon Year", Format: "Mon yyyy"}}},
	{Name: "quarter", Title: "Quarter/Year", Labels: []DateLabel{{Name: "qyyyy", Title: "Q/Year", Format: "Qq/yyyy"}}},
	{Name: "year", Title: "Year", Labels: []DateLabel{{Name: "yyyy", Title: "Year", Format: "yyyy"}}},
	{Name: "day_of_week", Title: "Day of Week", Labels: []DateLabel{{Name: "ddd", Title: "Mon-Sun", Format: "Ddd"}}},
	{Name: "month_of_year", Title: "Month of Year", Labels: []DateLabel{{Name: "mmm", Title: "Jan-Dec", Format: "Mon"}}},
	{Name: "quarter_of_year", Title: "Quarter of Year", Labels: []DateLabel{{Name: "q", Title: "Q1-Q4", Format: "Qq"}}},
}

// DatePartByName returns the date part called name.
func DatePartByName(name string) (DatePart, bool) {
	for _, p := range DateParts {
		if p.Name == name {
			return p, true
		}
	}
	return DatePart{}, false
}

// dateDataset returns the identifier of the dataset of the date dimension prefix.
func dateDataset(prefix string) string { return prefix + ".dataset.dt" }

// includeTemplate adds a date dimension with identifiers under s.Identifier ("date" when
// not given), titled s.Title ("Date" when not given).
func (a *applier) includeTemplate(s maql.IncludeTemplate) error {
	if !strings.EqualFold(s.URN, DateTemplate) {
		return fmt.Errorf("unknown template %q; the template is %s", s.URN, DateTemplate)
	}
	prefix, title := s.Identifier, s.Title
	if prefix == "" {
		prefix = "date"
	}
	if title == "" {
		title = "Date"
	}
	ids := []string{dateDataset(prefix)}
	for _, p := range DateParts {
		ids = append(ids, prefix+"."+p.Name)
		for _, l := range p.Labels {
			ids = append(ids, prefix+"."+p.Name+"."+l.Name)
		}
	}
	for _, id := range ids {
		if err := a.free(id); err != nil {
			return err
		}
	}
	ds := &Dataset{Meta: Meta{Title: title}, Date: prefix}
	a.m.Datasets[dateDataset(prefix)] = ds
	for _, p := range DateParts {
		attrID := prefix + "." + p.Name
		attr := &Attribute{Meta: Meta{Title: p.Title + " (" + title + ")"}, Dataset: dateDataset(prefix), DatePart: p.Name}
		for _, l := range p.Labels {
			labelID := attrID + "." + l.Name
			a.m.Labels[labelID] = &Label{Meta: Meta{Title: l.Title + " (" + title + ")"}, Attribute: attrID, DateFormat: l.Format}
			attr.Labels = append(attr.Labels, labelID)
		}
		attr.DefaultLabel = attr.Labels[0]
		a.m.Attributes[attrID] = attr
		ds.Attributes = append(ds.Attributes, attrID)
	}
	return nil
}
