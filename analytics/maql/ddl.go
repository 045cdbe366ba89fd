package maql

import (
	"strconv"
	"strings"
)

// Stmt is one DDL statement. The concrete types are the structs of this file; a caller
// applies them with a type switch. String returns the canonical MAQL text of the statement,
// without the closing semicolon.
type Stmt interface {
	Position() Pos
	String() string
	stmt()
}

// Column is a data column written {table.column}.
type Column struct {
	Table, Name string
}

func (c Column) String() string { return "{" + c.Table + "." + c.Name + "}" }

// Visual holds the options of VISUAL(...). A nil field was not given, which matters when
// altering an object: only the given options change.
type Visual struct {
	Title       *string
	Description *string
	Folder      *string // identifier of a folder
	Tags        *string // space-separated
}

// IsZero reports whether no option is set.
func (v Visual) IsZero() bool {
	return v.Title == nil && v.Description == nil && v.Folder == nil && v.Tags == nil
}

func (v Visual) String() string {
	var opts []string
	if v.Title != nil {
		opts = append(opts, "TITLE "+quote(*v.Title))
	}
	if v.Description != nil {
		opts = append(opts, "DESCRIPTION "+quote(*v.Description))
	}
	if v.Folder != nil {
		opts = append(opts, "FOLDER {"+*v.Folder+"}")
	}
	if v.Tags != nil {
		opts = append(opts, "TAGS "+quote(*v.Tags))
	}
	return "VISUAL(" + strings.Join(opts, ", ") + ")"
}

// suffix returns " VISUAL(...)", or "" when no option is set.
func (v Visual) suffix() string {
	if v.IsZero() {
		return ""
	}
	return " " + v.String()
}

// FolderType says which objects a folder holds.
type FolderType string

// Folder types.
const (
	FolderAttribute FolderType = "ATTRIBUTE"
	FolderFact      FolderType = "FACT"
)

// CreateFolder is CREATE FOLDER {id} VISUAL(...) TYPE ATTRIBUTE|FACT.
type CreateFolder struct {
	Pos
	ID     string
	Visual Visual
	Type   FolderType
}

// CreateDataset is CREATE DATASET {id} VISUAL(...).
type CreateDataset struct {
	Pos
	ID     string
	Visual Visual
}

// IncludeTemplate is INCLUDE TEMPLATE "urn" MODIFY (IDENTIFIER "id", TITLE "title"). Empty
// Identifier or Title were not given.
type IncludeTemplate struct {
	Pos
	URN        string
	Identifier string
	Title      string
}

// Key is one key column of an attribute; Fullset marks the column that holds every element.
type Key struct {
	Column  Column
	Fullset bool
}

// CreateAttribute is CREATE ATTRIBUTE {id} VISUAL(...) AS KEYS {t.c} FULLSET, {t2.c}.
type CreateAttribute struct {
	Pos
	ID     string
	Visual Visual
	Keys   []Key
}

// CreateFact is CREATE FACT {id} VISUAL(...) AS {t.c}.
type CreateFact struct {
	Pos
	ID     string
	Visual Visual
	Column Column
}

// AlterDatasetAdd is ALTER DATASET {dataset} ADD {obj}, {obj2}.
type AlterDatasetAdd struct {
	Pos
	Dataset string
	Objects []string
}

// AlterDatasetDrop is ALTER DATASET {dataset} DROP {obj}, {obj2}.
type AlterDatasetDrop struct {
	Pos
	Dataset string
	Objects []string
}

// Label is one label of ADD LABELS: {id} VISUAL(...) AS {t.c}.
type Label struct {
	ID     string
	Visual Visual
	Column Column
}

// AddLabels is ALTER ATTRIBUTE {attr} ADD LABELS {label} VISUAL(...) AS {t.c}, ...
type AddLabels struct {
	Pos
	Attribute string
	Labels    []Label
}

// LabelVisual is one label of ALTER LABELS: {id} VISUAL(...).
type LabelVisual struct {
	ID     string
	Visual Visual
}

// AlterLabels is ALTER ATTRIBUTE {attr} ALTER LABELS {label} VISUAL(...), ...
type AlterLabels struct {
	Pos
	Attribute string
	Labels    []LabelVisual
}

// DefaultLabel is ALTER ATTRIBUTE {attr} DEFAULT LABEL {label}.
type DefaultLabel struct {
	Pos
	Attribute string
	Label     string
}

// AddKeys is ALTER ATTRIBUTE {attr} ADD KEYS {t.c}, ...; a key in another dataset's table
// makes that dataset reference the attribute's dataset.
type AddKeys struct {
	Pos
	Attribute string
	Keys      []Key
}

// Data type names of ALTER DATATYPE.
const (
	TypeInt     = "INT"
	TypeBigint  = "BIGINT"
	TypeDouble  = "DOUBLE"
	TypeDate    = "DATE"
	TypeVarchar = "VARCHAR"
	TypeDecimal = "DECIMAL"
)

// DataType is a column type: Length is set for VARCHAR, Precision and Scale for DECIMAL.
type DataType struct {
	Name      string
	Length    int
	Precision int
	Scale     int
}

func (d DataType) String() string {
	switch d.Name {
	case TypeVarchar:
		return d.Name + "(" + strconv.Itoa(d.Length) + ")"
	case TypeDecimal:
		return d.Name + "(" + strconv.Itoa(d.Precision) + "," + strconv.Itoa(d.Scale) + ")"
	}
	return d.Name
}

// AlterDatatype is ALTER DATATYPE {t.c} TYPE.
type AlterDatatype struct {
	Pos
	Column Column
	Type   DataType
}

// Synchronize is SYNCHRONIZE {dataset}, ... [PRESERVE DATA]. Without PreserveData the data of
// the datasets is emptied.
type Synchronize struct {
	Pos
	Datasets     []string
	PreserveData bool
}

// Drop is DROP {obj} [CASCADE].
type Drop struct {
	Pos
	ID      string
	Cascade bool
}

// DropAllIn is DROP ALL IN {dataset} [CASCADE].
type DropAllIn struct {
	Pos
	Dataset string
	Cascade bool
}

func (CreateFolder) stmt()     {}
func (CreateDataset) stmt()    {}
func (IncludeTemplate) stmt()  {}
func (CreateAttribute) stmt()  {}
func (CreateFact) stmt()       {}
func (AlterDatasetAdd) stmt()  {}
func (AlterDatasetDrop) stmt() {}
func (AddLabels) stmt()        {}
func (AlterLabels) stmt()      {}
func (DefaultLabel) stmt()     {}
func (AddKeys) stmt()          {}
func (AlterDatatype) stmt()    {}
func (Synchronize) stmt()      {}
func (Drop) stmt()             {}
func (DropAllIn) stmt()        {}
