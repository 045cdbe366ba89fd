package maql

import "strings"

// FormatScript writes statements as a script, one statement per line.
func FormatScript(stmts []Stmt) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString(s.String())
		b.WriteString(";\n")
	}
	return b.String()
}

func braced(id string) string { return "{" + id + "}" }

func bracedList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = braced(id)
	}
	return strings.Join(out, ", ")
}

func keyList(keys []Key) string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.Column.String()
		if k.Fullset {
			out[i] += " FULLSET"
		}
	}
	return strings.Join(out, ", ")
}

func keyword(on bool, word string) string {
	if on {
		return " " + word
	}
	return ""
}

func (s CreateFolder) String() string {
	return "CREATE FOLDER " + braced(s.ID) + s.Visual.suffix() + " TYPE " + string(s.Type)
}

func (s CreateDataset) String() string {
	return "CREATE DATASET " + braced(s.ID) + s.Visual.suffix()
}

func (s IncludeTemplate) String() string {
	var mods []string
	if s.Identifier != "" {
		mods = append(mods, "IDENTIFIER "+quote(s.Identifier))
	}
	if s.Title != "" {
		mods = append(mods, "TITLE "+quote(s.Title))
	}
	out := "INCLUDE TEMPLATE " + quote(s.URN)
	if len(mods) > 0 {
		out += " MODIFY (" + strings.Join(mods, ", ") + ")"
	}
	return out
}

func (s CreateAttribute) String() string {
	out := "CREATE ATTRIBUTE " + braced(s.ID) + s.Visual.suffix()
	if len(s.Keys) > 0 {
		out += " AS KEYS " + keyList(s.Keys)
	}
	return out
}

func (s CreateFact) String() string {
	return "CREATE FACT " + braced(s.ID) + s.Visual.suffix() + " AS " + s.Column.String()
}

func (s AlterDatasetAdd) String() string {
	return "ALTER DATASET " + braced(s.Dataset) + " ADD " + bracedList(s.Objects)
}

func (s AlterDatasetDrop) String() string {
	return "ALTER DATASET " + braced(s.Dataset) + " DROP " + bracedList(s.Objects)
}

func (s AddLabels) String() string {
	items := make([]string, len(s.Labels))
	for i, l := range s.Labels {
		items[i] = braced(l.ID) + l.Visual.suffix() + " AS " + l.Column.String()
	}
	return "ALTER ATTRIBUTE " + braced(s.Attribute) + " ADD LABELS " + strings.Join(items, ", ")
}

func (s AlterLabels) String() string {
	items := make([]string, len(s.Labels))
	for i, l := range s.Labels {
		items[i] = braced(l.ID) + " " + l.Visual.String()
	}
	return "ALTER ATTRIBUTE " + braced(s.Attribute) + " ALTER LABELS " + strings.Join(items, ", ")
}

func (s DefaultLabel) String() string {
	return "ALTER ATTRIBUTE " + braced(s.Attribute) + " DEFAULT LABEL " + braced(s.Label)
}

func (s AddKeys) String() string {
	return "ALTER ATTRIBUTE " + braced(s.Attribute) + " ADD KEYS " + keyList(s.Keys)
}

func (s AlterDatatype) String() string {
	return "ALTER DATATYPE " + s.Column.String() + " " + s.Type.String()
}

func (s Synchronize) String() string {
	return "SYNCHRONIZE " + bracedList(s.Datasets) + keyword(s.PreserveData, "PRESERVE DATA")
}

func (s Drop) String() string {
	return "DROP " + braced(s.ID) + keyword(s.Cascade, "CASCADE")
}

func (s DropAllIn) String() string {
	return "DROP ALL IN " + braced(s.Dataset) + keyword(s.Cascade, "CASCADE")
}
