// Package pluginversion reads plugin versions and version requirements as
// Kafka Connect does since KIP-891 (Kafka 4.1): versions ordered as Maven
// orders artifact versions, requirements in Maven's version range syntax,
// a bare version meaning exactly that version and "latest" (or nothing)
// meaning no requirement.
package pluginversion

import (
	"strconv"
	"strings"
	"unicode"
)

// Compare orders two versions as Maven's ComparableVersion does: -1 when a
// sorts before b, 0 when they are equal (1.0 and 1.0.0, 1.0-ga and 1.0), 1
// when after. Numbers compare as numbers; qualifiers order alpha < beta <
// milestone < rc = cr < snapshot < (release, ga, final) < sp, and any other
// qualifier sorts after those, alphabetically; a qualified version sorts
// before its release (1.0-rc1 < 1.0) and a number after a qualifier
// (1.0-sp < 1.0.1).
func Compare(a, b string) int {
	return parse(a).compare(parse(b))
}

// item is one part of a parsed version: a number, a qualifier, or a
// sublist (what follows a '-' or a change between digits and letters).
type item interface {
	// compare orders the item against another, nil standing for a part
	// the other version lacks.
	compare(other item) int
	// null reports whether the item equals a missing part (0, a release
	// qualifier, an empty list): such trailing parts are dropped.
	null() bool
}

// intItem is a number, kept as its decimal digits without leading zeros so
// that numbers of any size compare.
type intItem string

func (i intItem) null() bool { return i == "" }

func (i intItem) compare(other item) int {
	switch o := other.(type) {
	case nil:
		if i.null() {
			return 0
		}
		return 1
	case intItem:
		if len(i) != len(o) {
			return sign(len(i) - len(o))
		}
		return strings.Compare(string(i), string(o))
	default: // a number sorts after a qualifier and a sublist
		return 1
	}
}

// qualifiers are the known qualifiers in order; "" is a release.
var qualifiers = []string{"alpha", "beta", "milestone", "rc", "snapshot", "", "sp"}

// aliases are the other spellings of known qualifiers.
var aliases = map[string]string{"ga": "", "final": "", "release": "", "cr": "rc"}

// releaseRank is the rank of a release ("").
var releaseRank = rank("")

// stringItem is a qualifier.
type stringItem string

// newStringItem reads a qualifier; a, b and m directly followed by a
// digit (1.0-a1) are alpha, beta and milestone.
func newStringItem(s string, followedByDigit bool) stringItem {
	if followedByDigit && len(s) == 1 {
		switch s {
		case "a":
			s = "alpha"
		case "b":
			s = "beta"
		case "m":
			s = "milestone"
		}
	}
	if a, ok := aliases[s]; ok {
		s = a
	}
	return stringItem(s)
}

// rank is a qualifier's sort key: its place among the known ones, or,
// for any other, a key after all of them that orders such qualifiers
// alphabetically.
func rank(q string) string {
	for i, k := range qualifiers {
		if k == q {
			return strconv.Itoa(i)
		}
	}
	return strconv.Itoa(len(qualifiers)) + "-" + q
}

func (s stringItem) null() bool { return s == "" }

func (s stringItem) compare(other item) int {
	switch o := other.(type) {
	case nil:
		return strings.Compare(rank(string(s)), releaseRank)
	case stringItem:
		return strings.Compare(rank(string(s)), rank(string(o)))
	default: // a qualifier sorts before a number and a sublist
		return -1
	}
}

// listItem is a sublist.
type listItem []item

func (l listItem) null() bool { return len(l) == 0 }

func (l listItem) compare(other item) int {
	switch o := other.(type) {
	case nil:
		for _, it := range l {
			if c := it.compare(nil); c != 0 {
				return c
			}
		}
		return 0
	case intItem:
		return -1
	case stringItem:
		return 1
	case listItem:
		for i := 0; i < max(len(l), len(o)); i++ {
			var a, b item
			if i < len(l) {
				a = l[i]
			}
			if i < len(o) {
				b = o[i]
			}
			var c int
			switch {
			case a == nil && b == nil:
			case a == nil:
				c = -b.compare(nil)
			default:
				c = a.compare(b)
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
	return 0
}

// normalize drops the list's trailing null parts (1.0.0 → 1, 1-ga → 1),
// stopping at the first part from the end that is neither null nor a list.
func (l listItem) normalize() listItem {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].null() {
			l = append(l[:i], l[i+1:]...)
		} else if _, ok := l[i].(listItem); !ok {
			break
		}
	}
	return l
}

// parser builds a version's items: the lists still open, each a sublist
// of the one before it.
type parser struct {
	lists []*listItem // the open lists, the root first
}

func (p *parser) cur() *listItem { return p.lists[len(p.lists)-1] }

func (p *parser) add(it item) { *p.cur() = append(*p.cur(), it) }

// open starts a sublist inside the current list.
func (p *parser) open() {
	sub := &listItem{}
	p.lists = append(p.lists, sub)
}

// parse reads a version as Maven 3.9's ComparableVersion does (the
// maven-artifact Kafka Connect ships): case-insensitive, '.' separating
// parts, '-' and each change between digits and letters starting a
// sublist.
func parse(v string) listItem {
	v = strings.ToLower(v)
	p := &parser{lists: []*listItem{{}}}
	start, digit := 0, false
	part := func(end int) item {
		s := v[start:end]
		if digit {
			return newIntItem(s)
		}
		return newStringItem(s, false)
	}
	for i, r := range v {
		switch {
		case r == '.':
			if i == start {
				p.add(intItem(""))
			} else {
				p.add(part(i))
			}
			start = i + 1
		case r == '-':
			if i == start {
				p.add(intItem(""))
			} else {
				p.add(part(i))
			}
			start = i + 1
			p.open()
		case unicode.IsDigit(r):
			if !digit && i > start {
				// A qualifier followed by a number (rc1) is a sublist of
				// its own unless it starts the list.
				if len(*p.cur()) > 0 {
					p.open()
				}
				p.add(newStringItem(v[start:i], true))
				start = i
				p.open()
			}
			digit = true
		default:
			if digit && i > start {
				p.add(newIntItem(v[start:i]))
				start = i
				p.open()
			}
			digit = false
		}
	}
	if len(v) > start {
		// A trailing qualifier after a dot counts as after a hyphen:
		// 1.0.Final is 1.0-Final.
		if !digit && len(*p.cur()) > 0 {
			p.open()
		}
		p.add(part(len(v)))
	}
	// Close the sublists from the innermost: each, normalized, ends its
	// parent (a list gets no part after its sublist opened).
	for len(p.lists) > 1 {
		sub := p.cur().normalize()
		p.lists = p.lists[:len(p.lists)-1]
		p.add(sub)
	}
	return p.cur().normalize()
}

// newIntItem reads a number, without its leading zeros.
func newIntItem(s string) intItem {
	return intItem(strings.TrimLeft(s, "0"))
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}
