package connect

import (
	"strconv"
	"strings"
	"unicode"
)

// The validators below are Kafka's ConfigDef validators with their exact
// messages; a validator sees the parsed value, or nil.

// Range checks that a number lies in [Min, Max]; a nil bound is open.
// Bounds are printed as given (an int 1 prints "1", a float64 1 "1.0"), as
// Java prints the Number it was built with.
type Range struct {
	Min, Max any
}

// IfSet runs V only on a value that is set and parsed: a bound Sluice adds
// to a key Kafka defines without a validator, so that a value that does not
// parse reports only its parse error, as Kafka does for such a key.
type IfSet struct{ V Validator }

// EnsureValid implements Validator.
func (v IfSet) EnsureValid(name string, value any) error {
	if value == nil {
		return nil
	}
	return v.V.EnsureValid(name, value)
}

// AtLeast is Kafka's Range.atLeast.
func AtLeast(min any) Range { return Range{Min: min} }

// Between is Kafka's Range.between.
func Between(min, max any) Range { return Range{Min: min, Max: max} }

// EnsureValid implements Validator.
func (r Range) EnsureValid(name string, value any) error {
	if value == nil {
		return InvalidValue(name, nil, "Value must be non-null")
	}
	n, ok := toFloat(value)
	if !ok {
		return InvalidValue(name, value, "Value must be a number")
	}
	if m, ok := toFloat(r.Min); ok && n < m {
		return InvalidValue(name, value, "Value must be at least "+JavaString(r.Min))
	}
	if m, ok := toFloat(r.Max); ok && n > m {
		return InvalidValue(name, value, "Value must be no more than "+JavaString(r.Max))
	}
	return nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// ValidString accepts exactly one of the listed strings (Kafka's
// ValidString.in).
type ValidString []string

// In is Kafka's ValidString.in.
func In(valid ...string) ValidString { return ValidString(valid) }

// EnsureValid implements Validator.
func (v ValidString) EnsureValid(name string, value any) error {
	if s, ok := value.(string); ok {
		for _, x := range v {
			if x == s {
				return nil
			}
		}
	}
	return InvalidValue(name, value, "String must be one of: "+strings.Join(v, ", "))
}

// CaseInsensitiveValidString accepts one of the listed strings in any case
// (Kafka's CaseInsensitiveValidString.in). Its message lists the upper-cased
// strings in java.util.HashSet order, as Kafka's does.
type CaseInsensitiveValidString []string

// InCaseInsensitive is Kafka's CaseInsensitiveValidString.in.
func InCaseInsensitive(valid ...string) CaseInsensitiveValidString {
	up := make([]string, len(valid))
	for i, s := range valid {
		up[i] = strings.ToUpper(s)
	}
	return CaseInsensitiveValidString(JavaHashSetOrder(up))
}

// EnsureValid implements Validator.
func (v CaseInsensitiveValidString) EnsureValid(name string, value any) error {
	if s, ok := value.(string); ok {
		for _, x := range v {
			if x == strings.ToUpper(s) {
				return nil
			}
		}
	}
	return InvalidValue(name, value, "String must be one of (case insensitive): "+strings.Join(v, ", "))
}

// NonEmptyString rejects "" but allows null (Kafka's NonEmptyString).
type NonEmptyString struct{}

// EnsureValid implements Validator.
func (NonEmptyString) EnsureValid(name string, value any) error {
	if s, ok := value.(string); ok && s == "" {
		return InvalidValue(name, value, "String must be non-empty")
	}
	return nil
}

// NonEmptyStringWithoutControlChars rejects "" and ISO control characters
// but allows null, which a missing required key reports on its own (Kafka's
// validator for connector names).
type NonEmptyStringWithoutControlChars struct{}

// EnsureValid implements Validator.
func (NonEmptyStringWithoutControlChars) EnsureValid(name string, value any) error {
	s, ok := value.(string)
	if !ok {
		return nil
	}
	if s == "" {
		return InvalidValue(name, value, "String may not be empty")
	}
	var bad []string
	for _, r := range s {
		if unicode.IsControl(r) {
			bad = append(bad, strconv.Itoa(int(r)))
		}
	}
	if len(bad) > 0 {
		return InvalidValue(name, value, "String may not contain control sequences but had the following ASCII chars: "+strings.Join(bad, ", "))
	}
	return nil
}

// NonNull rejects null (Kafka's NonNullValidator).
type NonNull struct{}

// EnsureValid implements Validator.
func (NonNull) EnsureValid(name string, value any) error {
	if value == nil {
		return InvalidValue(name, "null", "entry must be non null")
	}
	return nil
}

// Composite runs validators in order and stops at the first complaint
// (Kafka's CompositeValidator).
type Composite []Validator

// EnsureValid implements Validator.
func (c Composite) EnsureValid(name string, value any) error {
	for _, v := range c {
		if err := v.EnsureValid(name, value); err != nil {
			return err
		}
	}
	return nil
}

// UniqueList rejects a list with a repeated entry, with Kafka's message for
// duplicate transform, predicate and topic creation group aliases.
type UniqueList struct{}

// EnsureValid implements Validator.
func (UniqueList) EnsureValid(name string, value any) error {
	l, _ := value.([]string)
	seen := map[string]bool{}
	for _, s := range l {
		if seen[s] {
			return InvalidValue(name, value, "Duplicate alias provided.")
		}
		seen[s] = true
	}
	return nil
}

// DistinctList is Kafka 4's ValidList.anyNonDuplicateValues: a list with no
// repeated entry, and, unless allowed, neither null nor empty.
type DistinctList struct{ EmptyAllowed, NullAllowed bool }

// EnsureValid implements Validator.
func (v DistinctList) EnsureValid(name string, value any) error {
	if value == nil {
		if v.NullAllowed {
			return nil
		}
		return &ConfigError{Message: "Configuration '" + name + "' values must not be null."}
	}
	l, _ := value.([]string)
	if len(l) == 0 && !v.EmptyAllowed {
		return &ConfigError{Message: "Configuration '" + name + "' must not be empty. Valid values include: any non-empty value"}
	}
	seen := map[string]bool{}
	for _, s := range l {
		if seen[s] {
			return &ConfigError{Message: "Configuration '" + name + "' values must not be duplicated."}
		}
		seen[s] = true
	}
	return nil
}
