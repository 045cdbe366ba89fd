package analytics

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/ldm"
	"github.com/heraldhq/herald/store"
)

// Validation checks.
const (
	CheckLDM = "LDM" // the logical data model and the objects that use it
	CheckPDM = "PDM" // the warehouse's tables against the model
	CheckIO  = "IO"  // the integrity of the data: keys and references
)

// Checks lists the validation checks, in the order they run.
var Checks = []string{CheckIO, CheckLDM, CheckPDM}

// platformChecks maps the names of the original platform's checks, which its SDKs send,
// to the check that covers what they checked.
var platformChecks = map[string]string{
	"ldm": CheckLDM, "metric_filter": CheckLDM, "invalid_objects": CheckLDM,
	"pdm": CheckPDM, "pdm::pdm_vs_dwh": CheckPDM, "pdm::transitivity": CheckPDM,
	"pdm::pk_fk_consistency": CheckIO, "pdm::elem_validation": CheckIO, "io": CheckIO,
}

// CheckOf returns the check that name asks for: one of Checks in any case, or a name of
// the platform's checks (ldm, pdm, metric_filter, invalid_objects, pdm::pdm_vs_dwh,
// pdm::transitivity, pdm::pk_fk_consistency, pdm::elem_validation).
func CheckOf(name string) (string, bool) {
	c, ok := platformChecks[strings.ToLower(name)]
	return c, ok
}

// CheckNames says which names CheckOf takes, for an error message.
const CheckNames = "IO, LDM, PDM (or the platform's ldm, pdm, metric_filter, invalid_objects, pdm::pdm_vs_dwh, " +
	"pdm::transitivity, pdm::pk_fk_consistency, pdm::elem_validation)"

// Levels of a validation finding. Errors and fatal errors are counted in the result;
// warnings are not.
const (
	LevelWarn  = "WARN"
	LevelError = "ERROR"
	LevelFatal = "FATAL" // the check itself could not run
)

// Categories (ecat) of validation findings.
const (
	CatMissing       = "MISSING"            // LDM: an object lacks what it needs: a key, its attribute, dataset or folder
	CatEmpty         = "EMPTY"              // LDM: a dataset with neither attributes nor facts
	CatDangling      = "DANGLING_REFERENCE" // LDM: a table keeps a reference to a dropped dataset
	CatInvalidObject = "INVALID_OBJECT"     // LDM: a metric, report definition or report uses a missing object
	CatMissingTable  = "MISSING_TABLE"      // PDM: the warehouse lacks a table of the model
	CatMissingColumn = "MISSING_COLUMN"     // PDM: a table lacks a column of the model
	CatType          = "TYPE_MISMATCH"      // PDM: a column's type is not the model's
	CatOrphanTable   = "ORPHAN_TABLE"       // PDM: the warehouse has a table no dataset has
	CatUnsynced      = "NOT_SYNCHRONIZED"   // PDM: a dataset changed since its table was synchronized
	CatForeignKey    = "FOREIGN_KEY"        // IO: references to keys the referenced table lacks
	CatDuplicateKey  = "DUPLICATE_KEY"      // IO: a primary key value in more than one row
	CatNullKey       = "NULL_KEY"           // IO: rows without a primary key
	CatCheckFailed   = "CHECK_FAILED"       // the check could not run
)

// Validation is the outcome of validating a project, in the platform's
// projectValidateResult shape.
type Validation struct {
	ErrorFound      int           `json:"error_found"`
	FatalErrorFound int           `json:"fatal_error_found"`
	Results         []CheckResult `json:"results"`
	Meta            struct {
		StartTime    int64 `json:"start_time"`
		FinishedTime int64 `json:"finished_time"`
	} `json:"meta"`
}

// CheckResult is what one check found.
type CheckResult struct {
	From string    `json:"from"` // the check, in lower case
	Body CheckBody `json:"body"`
}

// CheckBody counts a check's errors and lists its findings.
type CheckBody struct {
	Error int       `json:"error"`
	Log   []Finding `json:"log"`
}

// Finding is one problem: Msg is a printf template filled from Pars, in order.
type Finding struct {
	ECat  string `json:"ecat"`
	Level string `json:"level"`
	Msg   string `json:"msg"`
	Pars  []Par  `json:"pars"`
}

// Par is a parameter of a finding: an object, or a plain value.
type Par struct {
	Object *ParObject `json:"object,omitempty"`
	Common string     `json:"common,omitempty"`
}

// ParObject names an object of the project.
type ParObject struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	URI  string `json:"uri"`
}

// String is the parameter as a finding's text shows it.
func (p Par) String() string {
	if p.Object != nil {
		return p.Object.Name
	}
	return p.Common
}

// Text is the finding's message with its parameters filled in.
func (f Finding) Text() string {
	args := make([]any, len(f.Pars))
	for i, p := range f.Pars {
		args[i] = p.String()
	}
	return fmt.Sprintf(f.Msg, args...)
}

// Validate runs the checks (CheckLDM, CheckPDM, CheckIO, in any case, or the platform's
// names of them; see CheckOf) on the project, each once. A check that cannot run reports
// a FATAL finding; the error is only for an unknown check or a failing store.
func (s *Service) Validate(ctx context.Context, pid string, checks []string) (*Validation, error) {
	v := &Validation{Results: []CheckResult{}}
	v.Meta.StartTime = s.now().Unix()
	pm, err := s.model(ctx, pid)
	if err != nil {
		return nil, err
	}
	c := &checker{s: s, pid: pid, pm: pm, m: pm.model}
	seen := map[string]bool{}
	for _, asked := range checks {
		name, ok := CheckOf(asked)
		if !ok {
			return nil, invalid("validateProject", "%q is not one of %s", asked, CheckNames)
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		c.log = []Finding{}
		switch name {
		case CheckLDM:
			err = c.ldm(ctx)
		case CheckPDM:
			err = c.pdm(ctx)
		case CheckIO:
			err = c.io(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c.add(CatCheckFailed, LevelFatal, "the %s check could not run: %s", common(name), common(err.Error()))
		}
		body := CheckBody{Log: c.log}
		for _, f := range c.log {
			switch f.Level {
			case LevelError:
				body.Error++
				v.ErrorFound++
			case LevelFatal:
				v.FatalErrorFound++
			}
		}
		v.Results = append(v.Results, CheckResult{From: strings.ToLower(name), Body: body})
	}
	v.Meta.FinishedTime = s.now().Unix()
	return v, nil
}

// checker runs the checks of one project.
type checker struct {
	s   *Service
	pid string
	pm  *projectModel
	m   *ldm.Model
	log []Finding
}

func (c *checker) add(cat, level, msg string, pars ...Par) {
	c.log = append(c.log, Finding{ECat: cat, Level: level, Msg: msg, Pars: slices.Clip(append([]Par{}, pars...))})
}

func common(s string) Par { return Par{Common: s} }

// obj is the parameter of a model object by identifier; one the project does not have
// is named in braces.
func (c *checker) obj(ident string) Par {
	id, ok := c.pm.ids[ident]
	if !ok {
		return common("{" + ident + "}")
	}
	meta, _ := c.m.Meta(ident)
	name := meta.Title
	if name == "" {
		name = ident
	}
	return Par{Object: &ParObject{ID: strconv.FormatInt(id, 10), Name: name, URI: ObjectURI(c.pid, id)}}
}

func (c *checker) userObj(o store.Object) Par {
	return Par{Object: &ParObject{ID: strconv.FormatInt(o.ID, 10), Name: o.Title, URI: ObjectURI(c.pid, o.ID)}}
}

// ldm checks the model's objects and the objects that use them.
func (c *checker) ldm(ctx context.Context) error {
	m := c.m
	for _, id := range slices.Sorted(maps.Keys(m.Datasets)) {
		ds := m.Datasets[id]
		if ds != nil && ds.Date == "" && len(ds.Attributes)+len(ds.Facts) == 0 {
			c.add(CatEmpty, LevelWarn, "dataset '%s' has neither attributes nor facts", c.obj(id))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.Attributes)) {
		a := m.Attributes[id]
		if a == nil {
			continue
		}
		if a.DatePart == "" && len(a.Keys) == 0 {
			c.add(CatMissing, LevelError, "attribute '%s' has no key", c.obj(id))
		}
		if a.Dataset != "" && m.Datasets[a.Dataset] == nil {
			c.add(CatMissing, LevelError, "attribute '%s' belongs to dataset %s, which does not exist", c.obj(id), c.obj(a.Dataset))
		}
		if a.Folder != "" && m.Folders[a.Folder] == nil {
			c.add(CatMissing, LevelError, "attribute '%s' is in folder %s, which does not exist", c.obj(id), c.obj(a.Folder))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.Labels)) {
		if l := m.Labels[id]; l != nil && m.Attributes[l.Attribute] == nil {
			c.add(CatMissing, LevelError, "label '%s' belongs to attribute %s, which does not exist", c.obj(id), c.obj(l.Attribute))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.Facts)) {
		f := m.Facts[id]
		if f != nil && f.Dataset != "" && m.Datasets[f.Dataset] == nil {
			c.add(CatMissing, LevelError, "fact '%s' belongs to dataset %s, which does not exist", c.obj(id), c.obj(f.Dataset))
		}
	}
	c.danglingReferences()
	return c.invalidObjects(ctx)
}

// danglingReferences finds reference columns of synchronized tables whose attribute, or
// its dataset, was dropped.
func (c *checker) danglingReferences() {
	m := c.m
	for _, name := range sortedTables(m) {
		t := m.Tables[name]
		if t == nil {
			continue
		}
		for _, col := range t.Columns {
			if col.Role != ldm.RoleReference {
				continue
			}
			a := m.Attributes[col.Object]
			if a != nil && (a.Dataset == "" || m.Datasets[a.Dataset] != nil) {
				continue
			}
			c.add(CatDangling, LevelWarn, "dataset '%s' references %s, which was dropped; SYNCHRONIZE it to remove column %s",
				c.obj(t.Dataset), c.obj(col.Object), common(name+"."+col.Name))
		}
	}
}

// invalidObjects finds metrics, report definitions and reports that name objects the
// project does not have.
func (c *checker) invalidObjects(ctx context.Context) error {
	objs, _, err := c.s.store.ProjectObjects(ctx, c.pid)
	if err != nil {
		return err
	}
	have := make(map[int64]bool, len(objs))
	for _, o := range objs {
		have[o.ID] = true
	}
	for _, o := range objs {
		if o.InModel {
			continue
		}
		reported := map[string]bool{}
		for _, m := range objectURIPattern.FindAllSubmatch(o.Content, -1) {
			uri := string(m[0])
			id, err := strconv.ParseInt(string(m[2]), 10, 64)
			if (string(m[1]) == c.pid && err == nil && have[id]) || reported[uri] {
				continue
			}
			reported[uri] = true
			c.add(CatInvalidObject, LevelError, "%s '%s' uses %s, which does not exist", common(o.Category), c.userObj(o), common(uri))
		}
	}
	return nil
}
