package ldm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heraldhq/herald/analytics/maql"
)

// Type is the data type of a column. It encodes as its MAQL text, e.g. "DECIMAL(12,2)".
type Type struct {
	maql.DataType
}

// Default column types: keys and labels are text, facts are exact decimals, references
// have the type of the key they reference, and date references are dates.
var (
	DefaultKeyType   = Type{maql.DataType{Name: maql.TypeVarchar, Length: 128}}
	DefaultLabelType = Type{maql.DataType{Name: maql.TypeVarchar, Length: 128}}
	DefaultFactType  = Type{maql.DataType{Name: maql.TypeDecimal, Precision: 12, Scale: 2}}
	DateType         = Type{maql.DataType{Name: maql.TypeDate}}
)

// Numeric reports whether values of the type can be aggregated.
func (t Type) Numeric() bool {
	switch t.Name {
	case maql.TypeInt, maql.TypeBigint, maql.TypeDouble, maql.TypeDecimal:
		return true
	}
	return false
}

// MarshalText writes the type's MAQL text.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a type written by MarshalText.
func (t *Type) UnmarshalText(b []byte) error {
	p, err := ParseType(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// ParseType reads a type in its MAQL text: INT, BIGINT, DOUBLE, DATE, VARCHAR(n) or
// DECIMAL(p,s).
func ParseType(s string) (Type, error) {
	name, args, hasArgs := strings.Cut(s, "(")
	name = strings.ToUpper(strings.TrimSpace(name))
	var nums []int
	if hasArgs {
		inner, ok := strings.CutSuffix(strings.TrimSpace(args), ")")
		if !ok {
			return Type{}, fmt.Errorf("type %q: missing )", s)
		}
		for _, part := range strings.Split(inner, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				return Type{}, fmt.Errorf("type %q: %q is not a number", s, part)
			}
			nums = append(nums, n)
		}
	}
	t := Type{maql.DataType{Name: name}}
	switch {
	case (name == maql.TypeInt || name == maql.TypeBigint || name == maql.TypeDouble || name == maql.TypeDate) && len(nums) == 0:
	case name == maql.TypeVarchar && len(nums) == 1 && nums[0] > 0:
		t.Length = nums[0]
	case name == maql.TypeDecimal && len(nums) == 2 && nums[0] >= 1 && nums[0] <= 38 && nums[1] >= 0 && nums[1] <= nums[0]:
		t.Precision, t.Scale = nums[0], nums[1]
	default:
		return Type{}, fmt.Errorf("type %q is not INT, BIGINT, DOUBLE, DATE, VARCHAR(n) or DECIMAL(p,s)", s)
	}
	return t, nil
}
