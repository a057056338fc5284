package pluginversion

import (
	"errors"
	"strings"
)

// Latest is the keyword that asks for no particular version: the same as
// leaving the version unset.
const Latest = "latest"

// Bound is one interval of a Range: a missing version is unbounded on that
// side.
type Bound struct {
	Lower, Upper                   string
	HasLower, HasUpper             bool
	LowerInclusive, UpperInclusive bool
}

// contains reports whether v lies in the interval.
func (b Bound) contains(v string) bool {
	if b.HasLower {
		c := Compare(v, b.Lower)
		if c < 0 || (c == 0 && !b.LowerInclusive) {
			return false
		}
	}
	if b.HasUpper {
		c := Compare(v, b.Upper)
		if c > 0 || (c == 0 && !b.UpperInclusive) {
			return false
		}
	}
	return true
}

// String spells the interval as Maven does: [1.0,2.0), (,1.0], [1.2,1.2].
func (b Bound) String() string {
	var sb strings.Builder
	if b.LowerInclusive {
		sb.WriteByte('[')
	} else {
		sb.WriteByte('(')
	}
	sb.WriteString(b.Lower)
	sb.WriteByte(',')
	sb.WriteString(b.Upper)
	if b.UpperInclusive {
		sb.WriteByte(']')
	} else {
		sb.WriteByte(')')
	}
	return sb.String()
}

// Range is a version requirement in Maven's range syntax: a union of
// intervals, or a bare (recommended) version, which as Maven reads it
// restricts nothing.
type Range struct {
	// Recommended is the bare version of a spec without brackets.
	Recommended string
	// Bounds are the intervals, in the order written.
	Bounds []Bound
}

// HasRestrictions reports whether the range restricts versions, as
// Maven's VersionRange.hasRestrictions does: a bare version does not.
func (r Range) HasRestrictions() bool {
	return len(r.Bounds) > 0 && r.Recommended == ""
}

// Contains reports whether v satisfies the range: lies in one of its
// intervals.
func (r Range) Contains(v string) bool {
	for _, b := range r.Bounds {
		if b.contains(v) {
			return true
		}
	}
	return false
}

// Exact is the one version a range of a single closed interval [v,v]
// allows (what a bare version requires); ok is false for any other range.
func (r Range) Exact() (v string, ok bool) {
	if len(r.Bounds) != 1 || r.Recommended != "" {
		return "", false
	}
	b := r.Bounds[0]
	if !b.HasLower || !b.HasUpper || b.Lower != b.Upper || !b.LowerInclusive || !b.UpperInclusive {
		return "", false
	}
	return b.Lower, true
}

// String spells the range as Maven's VersionRange.toString does (which
// Kafka's messages quote): the bare version, else the intervals joined by
// commas.
func (r Range) String() string {
	if r.Recommended != "" {
		return r.Recommended
	}
	parts := make([]string, len(r.Bounds))
	for i, b := range r.Bounds {
		parts[i] = b.String()
	}
	return strings.Join(parts, ",")
}

// ParseRange reads a version spec in Maven's syntax: "1.0" (a bare
// version), "[1.0]" (exactly), "[1.0,2.0)", "(,1.0]", "[1.2,)", and unions
// of intervals "(,1.0],[1.2,)". Its errors are Maven's
// InvalidVersionSpecificationException messages, which Kafka Connect
// reports as they are.
func ParseRange(spec string) (Range, error) {
	var r Range
	rest := spec
	var upper *Bound // the previous interval, whose upper bound the next must clear
	for strings.HasPrefix(rest, "[") || strings.HasPrefix(rest, "(") {
		end := closing(rest)
		if end < 0 {
			return Range{}, errors.New("Unbounded range: " + spec)
		}
		b, err := parseBound(rest[:end+1])
		if err != nil {
			return Range{}, err
		}
		if upper != nil && upper.HasUpper && (!b.HasLower || Compare(b.Lower, upper.Upper) < 0) {
			return Range{}, errors.New("Ranges overlap: " + spec)
		}
		r.Bounds = append(r.Bounds, b)
		upper = &r.Bounds[len(r.Bounds)-1]
		rest = strings.TrimSpace(rest[end+1:])
		if after, ok := strings.CutPrefix(rest, ","); ok {
			rest = strings.TrimSpace(after)
		}
	}
	if rest != "" {
		if len(r.Bounds) > 0 {
			return Range{}, errors.New("Only fully-qualified sets allowed in multiple set scenario: " + spec)
		}
		r.Recommended = rest
		r.Bounds = []Bound{{}} // everything
	}
	return r, nil
}

// closing is the index of the bracket that closes the interval s starts
// with: the first ')' or ']', whichever comes first.
func closing(s string) int {
	paren, square := strings.IndexByte(s, ')'), strings.IndexByte(s, ']')
	switch {
	case paren < 0:
		return square
	case square < 0:
		return paren
	}
	return min(paren, square)
}

// parseBound reads one bracketed interval.
func parseBound(spec string) (Bound, error) {
	b := Bound{LowerInclusive: strings.HasPrefix(spec, "["), UpperInclusive: strings.HasSuffix(spec, "]")}
	inner := strings.TrimSpace(spec[1 : len(spec)-1])
	lower, upper, comma := strings.Cut(inner, ",")
	if !comma {
		if !b.LowerInclusive || !b.UpperInclusive {
			return Bound{}, errors.New("Single version must be surrounded by []: " + spec)
		}
		return Bound{Lower: inner, Upper: inner, HasLower: true, HasUpper: true, LowerInclusive: true, UpperInclusive: true}, nil
	}
	b.Lower, b.Upper = strings.TrimSpace(lower), strings.TrimSpace(upper)
	b.HasLower, b.HasUpper = b.Lower != "", b.Upper != ""
	// An empty interval is refused: upper below lower, or equal to it
	// with either end open.
	if b.HasLower && b.HasUpper {
		c := Compare(b.Upper, b.Lower)
		if c < 0 || (c == 0 && !(b.LowerInclusive && b.UpperInclusive)) {
			return Bound{}, errors.New("Range defies version ordering: " + spec)
		}
	}
	return b, nil
}

// Requirement reads a *.plugin.version value as Kafka Connect does
// (PluginUtils.connectorVersionRequirement): unset or "latest" is no
// requirement (ok false); a bare version means exactly that version
// ([v]); a range is taken as written. The value is trimmed, except that
// only an exact "latest" is the keyword.
func Requirement(spec string) (r Range, ok bool, err error) {
	if spec == "" || spec == Latest {
		return Range{}, false, nil
	}
	spec = strings.TrimSpace(spec)
	if r, err = ParseRange(spec); err != nil {
		return Range{}, false, err
	}
	if r.HasRestrictions() {
		return r, true, nil
	}
	r, err = ParseRange("[" + spec + "]")
	return r, err == nil, err
}

// Highest is the highest of versions that r contains; ok is false when
// none does.
func Highest(r Range, versions []string) (v string, ok bool) {
	for _, c := range versions {
		if r.Contains(c) && (!ok || Compare(c, v) > 0) {
			v, ok = c, true
		}
	}
	return v, ok
}
