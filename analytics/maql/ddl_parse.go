package maql

import (
	"math"
	"strings"
)

// ParseScript parses a DDL script: statements separated by semicolons, the last one optional,
// with -- line comments and /* block */ comments. Keywords are case-insensitive. An error is
// an *Error naming the line, column and token where parsing stopped.
func ParseScript(src string) ([]Stmt, error) {
	p := newParser(src, true)
	var stmts []Stmt
	err := p.run(func() {
		for p.tok.kind != tokEOF {
			if p.acceptPunct(";") {
				continue
			}
			stmts = append(stmts, p.statement())
			if p.tok.kind != tokEOF {
				p.expectPunct(";")
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

func (p *parser) statement() Stmt {
	at := p.tok.pos
	switch {
	case p.acceptWord("CREATE"):
		return p.create(at)
	case p.acceptWord("INCLUDE"):
		return p.includeTemplate(at)
	case p.acceptWord("ALTER"):
		return p.alter(at)
	case p.acceptWord("SYNCHRONIZE"):
		s := Synchronize{Pos: at, Datasets: p.identList()}
		if p.acceptWord("PRESERVE") {
			p.expectWord("DATA")
			s.PreserveData = true
		}
		return s
	case p.acceptWord("DROP"):
		return p.drop(at)
	}
	p.unexpected("CREATE, INCLUDE, ALTER, SYNCHRONIZE or DROP")
	return nil
}

func (p *parser) create(at Pos) Stmt {
	switch {
	case p.acceptWord("FOLDER"):
		s := CreateFolder{Pos: at, ID: p.expectIdent(), Visual: p.optVisual()}
		p.expectWord("TYPE")
		switch {
		case p.acceptWord("ATTRIBUTE"):
			s.Type = FolderAttribute
		case p.acceptWord("FACT"):
			s.Type = FolderFact
		default:
			p.unexpected("ATTRIBUTE or FACT")
		}
		return s
	case p.acceptWord("DATASET"):
		return CreateDataset{Pos: at, ID: p.expectIdent(), Visual: p.optVisual()}
	case p.acceptWord("ATTRIBUTE"):
		s := CreateAttribute{Pos: at, ID: p.expectIdent(), Visual: p.optVisual()}
		if p.acceptWord("AS") {
			p.expectWord("KEYS")
			s.Keys = p.keyList()
		}
		return s
	case p.acceptWord("FACT"):
		s := CreateFact{Pos: at, ID: p.expectIdent(), Visual: p.optVisual()}
		p.expectWord("AS")
		s.Column = p.expectColumn()
		return s
	}
	p.unexpected("FOLDER, DATASET, ATTRIBUTE or FACT")
	return nil
}

func (p *parser) includeTemplate(at Pos) Stmt {
	p.expectWord("TEMPLATE")
	t := p.tok
	s := IncludeTemplate{Pos: at, URN: p.expectString()}
	if s.URN == "" {
		p.unexpectedAt(t, "a template URN")
	}
	if !p.acceptWord("MODIFY") {
		return s
	}
	p.expectPunct("(")
	seen := map[string]bool{}
	for {
		t := p.tok
		switch {
		case p.acceptWord("IDENTIFIER"):
			id := p.tok
			s.Identifier = p.expectString()
			if !validIdent(s.Identifier) {
				p.unexpectedAt(id, "an identifier of letters, digits, _ and .")
			}
		case p.acceptWord("TITLE"):
			s.Title = p.expectString()
		default:
			p.unexpected("IDENTIFIER or TITLE")
		}
		p.once(seen, t, "MODIFY")
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(")")
	return s
}

// once fails when the option named by token t was already given in the same list.
func (p *parser) once(seen map[string]bool, t token, list string) {
	name := strings.ToUpper(t.text)
	if seen[name] {
		p.failAt(t, "%s given twice in %s", name, list)
	}
	seen[name] = true
}

func (p *parser) alter(at Pos) Stmt {
	switch {
	case p.acceptWord("DATASET"):
		dataset := p.expectIdent()
		switch {
		case p.acceptWord("ADD"):
			return AlterDatasetAdd{Pos: at, Dataset: dataset, Objects: p.identList()}
		case p.acceptWord("DROP"):
			return AlterDatasetDrop{Pos: at, Dataset: dataset, Objects: p.identList()}
		}
		p.unexpected("ADD or DROP")
	case p.acceptWord("ATTRIBUTE"):
		return p.alterAttribute(at, p.expectIdent())
	case p.acceptWord("DATATYPE"):
		return AlterDatatype{Pos: at, Column: p.expectColumn(), Type: p.dataType()}
	}
	p.unexpected("DATASET, ATTRIBUTE or DATATYPE")
	return nil
}

func (p *parser) alterAttribute(at Pos, attr string) Stmt {
	switch {
	case p.acceptWord("ADD"):
		switch {
		case p.acceptWord("LABELS"):
			return AddLabels{Pos: at, Attribute: attr, Labels: p.labelList()}
		case p.acceptWord("KEYS"):
			return AddKeys{Pos: at, Attribute: attr, Keys: p.keyList()}
		}
		p.unexpected("LABELS or KEYS")
	case p.acceptWord("ALTER"):
		p.expectWord("LABELS")
		s := AlterLabels{Pos: at, Attribute: attr}
		for {
			l := LabelVisual{ID: p.expectIdent()}
			if !p.isWord("VISUAL") {
				p.unexpected("VISUAL")
			}
			l.Visual = p.optVisual()
			s.Labels = append(s.Labels, l)
			if !p.acceptPunct(",") {
				return s
			}
		}
	case p.acceptWord("DEFAULT"):
		p.expectWord("LABEL")
		return DefaultLabel{Pos: at, Attribute: attr, Label: p.expectIdent()}
	}
	p.unexpected("ADD, ALTER or DEFAULT")
	return nil
}

func (p *parser) labelList() []Label {
	var labels []Label
	for {
		l := Label{ID: p.expectIdent(), Visual: p.optVisual()}
		p.expectWord("AS")
		l.Column = p.expectColumn()
		labels = append(labels, l)
		if !p.acceptPunct(",") {
			return labels
		}
	}
}

func (p *parser) drop(at Pos) Stmt {
	if p.acceptWord("ALL") {
		p.expectWord("IN")
		s := DropAllIn{Pos: at, Dataset: p.expectIdent()}
		s.Cascade = p.acceptWord("CASCADE")
		return s
	}
	if p.tok.kind != tokIdent {
		p.unexpected("ALL or {identifier}")
	}
	s := Drop{Pos: at, ID: p.expectIdent()}
	s.Cascade = p.acceptWord("CASCADE")
	return s
}

// optVisual parses VISUAL(...) when present: TITLE, DESCRIPTION, FOLDER and TAGS in any
// order, each at most once, at least one.
func (p *parser) optVisual() Visual {
	var v Visual
	if !p.acceptWord("VISUAL") {
		return v
	}
	p.expectPunct("(")
	seen := map[string]bool{}
	for {
		t := p.tok
		switch {
		case p.acceptWord("TITLE"):
			v.Title = ptr(p.expectString())
		case p.acceptWord("DESCRIPTION"):
			v.Description = ptr(p.expectString())
		case p.acceptWord("FOLDER"):
			v.Folder = ptr(p.expectIdent())
		case p.acceptWord("TAGS"):
			v.Tags = ptr(p.expectString())
		default:
			p.unexpected("TITLE, DESCRIPTION, FOLDER or TAGS")
		}
		p.once(seen, t, "VISUAL")
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectPunct(")")
	return v
}

func ptr(s string) *string { return &s }

func (p *parser) identList() []string {
	ids := []string{p.expectIdent()}
	for p.acceptPunct(",") {
		ids = append(ids, p.expectIdent())
	}
	return ids
}

func (p *parser) keyList() []Key {
	var keys []Key
	for {
		k := Key{Column: p.expectColumn()}
		k.Fullset = p.acceptWord("FULLSET")
		keys = append(keys, k)
		if !p.acceptPunct(",") {
			return keys
		}
	}
}

// expectColumn consumes a {table.column}: exactly one dot with a name on each side.
func (p *parser) expectColumn() Column {
	t := p.tok
	if t.kind == tokIdent {
		table, name, ok := strings.Cut(t.text, ".")
		if ok && table != "" && name != "" && !strings.Contains(name, ".") {
			p.next()
			return Column{Table: table, Name: name}
		}
	}
	p.unexpected("{table.column}")
	return Column{}
}

func (p *parser) dataType() DataType {
	t := p.tok
	if t.kind == tokWord {
		name := strings.ToUpper(t.text)
		switch name {
		case TypeInt, TypeBigint, TypeDouble, TypeDate:
			p.next()
			return DataType{Name: name}
		case TypeVarchar:
			p.next()
			p.expectPunct("(")
			d := DataType{Name: name, Length: p.expectInt(1, math.MaxUint16)}
			p.expectPunct(")")
			return d
		case TypeDecimal:
			p.next()
			p.expectPunct("(")
			d := DataType{Name: name, Precision: p.expectInt(1, 38)}
			p.expectPunct(",")
			d.Scale = p.expectInt(0, d.Precision)
			p.expectPunct(")")
			return d
		}
	}
	p.unexpected("INT, BIGINT, DOUBLE, DATE, VARCHAR(n) or DECIMAL(p,s)")
	return DataType{}
}
