package values

import (
	"errors"
	"fmt"
	"math"
)

// Kind is a type's category in pg_type.typtype terms, as far as conversion
// cares.
type Kind int

// The kinds of type a column can have.
const (
	// KindBase is a base (scalar) type, built in or from an extension.
	KindBase Kind = iota
	// KindArray is an array type; Type.Elem is its element type.
	KindArray
	// KindEnum is an enum type; Type.EnumLabels are its labels in sort
	// order (pg_enum.enumsortorder).
	KindEnum
	// KindDomain is a domain; Type.Base is the type it is over (itself
	// possibly a domain) and Type.Modifier the domain's typtypmod.
	KindDomain
)

// Type is what the catalog says of a column's type: OID, name
// (pg_type.typname, e.g. "int4", "_int4", "numeric", "my_enum"), the type
// modifier and the kind. For a column's own type Modifier is
// pg_attribute.atttypmod (-1 when none; for an array column it is the
// element's modifier, as PostgreSQL stores it); for a domain it is the
// domain's pg_type.typtypmod. Elem is set for arrays, Base for domains,
// EnumLabels for enums.
type Type struct {
	OID        uint32
	Name       string
	Modifier   int32
	Kind       Kind
	Elem       *Type
	Base       *Type
	EnumLabels []string
}

// Column is one captured column.
type Column struct {
	Name string
	Type Type
	// Optional is false for a NOT NULL column.
	Optional bool
	// Default is the column's default expression as PostgreSQL prints it
	// (pg_get_expr of pg_attrdef.adbin), nil when it has none.
	Default *string
}

// ErrUnsupported is wrapped by the error for a column whose type Debezium
// captures but Sluice does not (PostGIS types, vectors, ...).
var ErrUnsupported = errors.New("type not supported")

// ErrOmitted is wrapped by the error for a column Debezium leaves out of its
// records (with include.unknown.datatypes=false, its default): a type it has
// no converter for, such as money[], interval[], box or pg_lsn. A caller
// matching Debezium drops the column from the table's schema and values.
var ErrOmitted = errors.New("column left out of change events")

// errConverterNull marks a value Debezium's converter catches itself and
// turns into null (with a warning): in an array, that element is null
// rather than the whole array failing.
var errConverterNull = errors.New("Debezium converts it to null")

// resolved is a column's type as Debezium converts it: a domain is replaced
// by the type at the root of its chain, whose modifier is the nearest one set
// along the chain (pgjdbc's type registry resolves a domain's length and
// scale that way).
type resolved struct {
	t   Type
	mod int32
}

// resolve follows a domain chain to its root.
func resolve(t Type) (resolved, error) {
	mod := t.Modifier
	for depth := 0; t.Kind == KindDomain; depth++ {
		if t.Base == nil || depth > 64 {
			return resolved{}, fmt.Errorf("domain %s has no base type", t.Name)
		}
		t = *t.Base
		if mod == -1 {
			mod = t.Modifier
		}
	}
	return resolved{t: t, mod: mod}, nil
}

// The numeric "length" pgjdbc reports for an unconstrained numeric; Debezium
// treats it (and 0) as variable scale.
const variableScaleLength = 131089

// length is the column length Debezium reads for a type from pgjdbc: the
// precision of a numeric, the bit count of a bit string. Other types' lengths
// change nothing Sluice emits.
func (r resolved) length() int {
	switch r.t.Name {
	case "numeric":
		if r.mod == -1 {
			return variableScaleLength
		}
		return int((r.mod-4)>>16) & 0xFFFF
	case "bit":
		return int(r.mod)
	case "varbit":
		if r.mod == -1 {
			return math.MaxInt32
		}
		return int(r.mod)
	}
	return 0
}

// scale is the column scale Debezium reads from pgjdbc: a numeric's scale,
// the fractional-second digits of the time types (6 when unconstrained).
func (r resolved) scale() int {
	switch r.t.Name {
	case "numeric":
		if r.mod == -1 {
			return 0
		}
		return int(r.mod-4) & 0xFFFF
	case "time", "timetz", "timestamp", "timestamptz":
		if r.mod == -1 {
			return 6
		}
		return int(r.mod)
	case "interval":
		if r.mod == -1 {
			return 6
		}
		return int(r.mod) & 0xFFFF
	}
	return 0
}

// variableScale says a numeric has no declared precision, which Debezium
// emits as a VariableScaleDecimal in precise mode.
func (r resolved) variableScale() bool {
	l := r.length()
	return (l == 0 || l == variableScaleLength) && r.scale() == 0
}
