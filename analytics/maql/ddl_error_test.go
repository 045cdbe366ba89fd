package maql

import (
	"errors"
	"testing"
)

func TestParseScriptErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		src       string
		line, col int
		token     string
		msg       string
	}{
		{"missing folder type", "CREATE DATASET {d};\n\nCREATE FOLDER {f} FOO ATTRIBUTE", 3, 19, "FOO",
			`unexpected "FOO", expected TYPE`},
		{"unknown statement", "SELECT 1", 1, 1, "SELECT",
			`unexpected "SELECT", expected CREATE, INCLUDE, ALTER, SYNCHRONIZE or DROP`},
		{"unknown object kind", "CREATE METRIC {m}", 1, 8, "METRIC",
			`unexpected "METRIC", expected FOLDER, DATASET, ATTRIBUTE or FACT`},
		{"missing separator", "DROP {a} DROP {b}", 1, 10, "DROP",
			`unexpected "DROP", expected ";"`},
		{"unexpected end", "CREATE FACT {f} VISUAL(TITLE \"F\")", 1, 34, "",
			`unexpected end of input, expected AS`},
		{"column without table", "CREATE FACT {f} AS {lines}", 1, 20, "{lines}",
			`unexpected "{lines}", expected {table.column}`},
		{"column with two dots", "ALTER DATATYPE {a.b.c} INT", 1, 16, "{a.b.c}",
			`unexpected "{a.b.c}", expected {table.column}`},
		{"column with empty part", "ALTER ATTRIBUTE {a} ADD KEYS {t.}", 1, 30, "{t.}",
			`unexpected "{t.}", expected {table.column}`},
		{"identifier expected", "CREATE DATASET dataset.devs", 1, 16, "dataset",
			`unexpected "dataset", expected {identifier}`},
		{"string expected", "CREATE DATASET {d} VISUAL(TITLE Devs)", 1, 33, "Devs",
			`unexpected "Devs", expected a quoted string`},
		{"string named in message", "CREATE DATASET {d} VISUAL(\"Devs\")", 1, 27, `"Devs"`,
			`unexpected string "Devs", expected TITLE, DESCRIPTION, FOLDER or TAGS`},
		{"empty visual", "CREATE DATASET {d} VISUAL()", 1, 27, ")",
			`unexpected ")", expected TITLE, DESCRIPTION, FOLDER or TAGS`},
		{"visual option twice", "CREATE DATASET {d} VISUAL(TITLE \"a\", title \"b\")", 1, 38, "title",
			`TITLE given twice in VISUAL`},
		{"modify option twice", `INCLUDE TEMPLATE "U" MODIFY (TITLE "a", TITLE "b")`, 1, 41, "TITLE",
			`TITLE given twice in MODIFY`},
		{"bad template identifier", `INCLUDE TEMPLATE "U" MODIFY (IDENTIFIER "a b")`, 1, 41, `"a b"`,
			`unexpected string "a b", expected an identifier of letters, digits, _ and .`},
		{"empty template", `INCLUDE TEMPLATE ""`, 1, 18, `""`,
			`unexpected string "", expected a template URN`},
		{"alter labels without visual", "ALTER ATTRIBUTE {a} ALTER LABELS {l} AS {t.c}", 1, 38, "AS",
			`unexpected "AS", expected VISUAL`},
		{"alter what", "ALTER FACT {f} VISUAL(TITLE \"F\")", 1, 7, "FACT",
			`unexpected "FACT", expected DATASET, ATTRIBUTE or DATATYPE`},
		{"alter dataset", "ALTER DATASET {d} REMOVE {a}", 1, 19, "REMOVE",
			`unexpected "REMOVE", expected ADD or DROP`},
		{"add what", "ALTER ATTRIBUTE {a} ADD {l}", 1, 25, "{l}",
			`unexpected "{l}", expected LABELS or KEYS`},
		{"alter attribute", "ALTER ATTRIBUTE {a} DROP LABELS {l}", 1, 21, "DROP",
			`unexpected "DROP", expected ADD, ALTER or DEFAULT`},
		{"unknown type", "ALTER DATATYPE {t.c} TEXT", 1, 22, "TEXT",
			`unexpected "TEXT", expected INT, BIGINT, DOUBLE, DATE, VARCHAR(n) or DECIMAL(p,s)`},
		{"scale above precision", "ALTER DATATYPE {t.c} DECIMAL(5,6)", 1, 32, "6",
			`unexpected "6", expected an integer from 0 to 5`},
		{"precision too big", "ALTER DATATYPE {t.c} DECIMAL(39,2)", 1, 30, "39",
			`unexpected "39", expected an integer from 1 to 38`},
		{"fractional length", "ALTER DATATYPE {t.c} VARCHAR(1.5)", 1, 30, "1.5",
			`unexpected "1.5", expected an integer from 1 to 65535`},
		{"preserve without data", "SYNCHRONIZE {d} PRESERVE", 1, 25, "",
			`unexpected end of input, expected DATA`},
		{"drop nothing", "DROP CASCADE", 1, 6, "CASCADE",
			`unexpected "CASCADE", expected ALL or {identifier}`},
		{"unterminated string", "CREATE DATASET {d}\n  VISUAL(TITLE \"Dev", 2, 16, `"Dev`,
			`unterminated string`},
		{"bad escape", `CREATE DATASET {d} VISUAL(TITLE "a\nb")`, 1, 35, `\n`,
			`invalid escape in string, expected \" or \\`},
		{"unterminated comment", "DROP {a};\n/* never closed", 2, 1, "/*",
			`unterminated comment`},
		{"bad identifier character", "DROP {a-b}", 1, 6, "{a-",
			`invalid character '-' in identifier`},
		{"unterminated identifier", "DROP {abc", 1, 6, "{abc",
			`unterminated identifier, expected }`},
		{"empty identifier", "DROP {}", 1, 6, "{}", `empty identifier`},
		{"unexpected character", "DROP {a} @", 1, 10, "@", `unexpected character '@'`},
		{"columns count characters", "CREATE DATASET {d} VISUAL(TITLE \"Vývojáři\") X", 1, 45, "X",
			`unexpected "X", expected ";"`},
		{"invalid utf-8", "DROP {a}; \xff", 1, 11, "\uFFFD", `invalid UTF-8 encoding`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScript(tc.src)
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("ParseScript(%q) error = %v, want *Error", tc.src, err)
			}
			want := Error{Line: tc.line, Col: tc.col, Token: tc.token, Msg: tc.msg}
			if *perr != want {
				t.Fatalf("error = %#v\nwant    %#v", *perr, want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := ParseScript("CREATE DATASET {d};\n\nCREATE FOLDER {f} FOO ATTRIBUTE")
	const want = `line 3, column 19: unexpected "FOO", expected TYPE`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestParseScriptReturnsNoStatementsOnError(t *testing.T) {
	t.Parallel()
	stmts, err := ParseScript("DROP {a}; DROP {b}; DROP")
	if err == nil || stmts != nil {
		t.Fatalf("ParseScript = %v, %v; want nil and an error", stmts, err)
	}
}
