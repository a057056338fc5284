// Package selection picks the connectors a command acts on: the names the
// user typed, or those of the cluster's connectors that a glob (--match,
// path.Match syntax, as Sluice's REST selectors) or a regular expression
// (-e, as kcctl) matches.
package selection

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
)

// Criteria say which connectors to select; exactly one kind is given.
type Criteria struct {
	Names []string
	Glob  string
	Regex string
}

// Validate checks that exactly one kind of criterion is given and that
// it is well formed, before anything is asked of the server.
func (c Criteria) Validate() error {
	n := 0
	for _, set := range []bool{len(c.Names) > 0, c.Glob != "", c.Regex != ""} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return errors.New("name the connectors, or select them with --match GLOB or -e REGEX")
	case n > 1:
		return errors.New("give connector names, --match or -e: one of them")
	}
	if c.Glob != "" {
		if _, err := path.Match(c.Glob, ""); err != nil {
			return fmt.Errorf("--match %q: %w", c.Glob, err)
		}
	}
	if c.Regex != "" {
		if _, err := regexp.Compile(c.Regex); err != nil {
			return fmt.Errorf("-e %q: %w", c.Regex, err)
		}
	}
	return nil
}

// ByPattern reports whether the criteria need the list of connectors.
func (c Criteria) ByPattern() bool { return c.Glob != "" || c.Regex != "" }

// Select returns the connectors to act on, sorted: the names given, as
// given (a name that does not exist is the server's 404 to report), or the
// existing connectors the pattern matches. The regular expression matches
// anywhere in a name unless anchored, as kcctl's does.
func (c Criteria) Select(existing []string) ([]string, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !c.ByPattern() {
		return c.Names, nil
	}
	var re *regexp.Regexp
	if c.Regex != "" {
		re = regexp.MustCompile(c.Regex) // Validate compiled it
	}
	var out []string
	for _, name := range existing {
		ok := false
		if re != nil {
			ok = re.MatchString(name)
		} else {
			ok, _ = path.Match(c.Glob, name)
		}
		if ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}
