// Package yamlfile reads the coordinator's YAML files (the auth file, the
// tenants file) strictly: an unknown or repeated field, a value of the
// wrong shape or a bad document is an error naming its line.
package yamlfile

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Root parses data and returns its top node; what names the file's
// required contents for the error of an empty file ("a principals list").
func Root(data []byte, what string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		// yaml.v3's messages start "yaml: line N: …".
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("the file is empty: it must have %s", what)
	}
	return doc.Content[0], nil
}

// LineError is an error at n's line of the file.
func LineError(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", n.Line, fmt.Sprintf(format, args...))
}

// Mapping checks that n is a mapping with no key but allowed, and returns
// its values by key.
func Mapping(n *yaml.Node, allowed ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, LineError(n, "expected a mapping with the fields %s", strings.Join(allowed, ", "))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		known := false
		for _, a := range allowed {
			known = known || k.Value == a
		}
		if !known {
			return nil, LineError(k, "unknown field %q (the fields are %s)", k.Value, strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, LineError(k, "field %q given twice", k.Value)
		}
		out[k.Value] = v
	}
	return out, nil
}

// Scalar decodes a scalar field into dst.
func Scalar(n *yaml.Node, field string, dst any) error {
	if n.Kind != yaml.ScalarNode {
		return LineError(n, "%s must be a single value", field)
	}
	if err := n.Decode(dst); err != nil {
		return LineError(n, "%s: %v", field, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return nil
}

// Strings decodes a list of strings, each checked by check (nil: none);
// what names an item in errors ("a connector pattern"). An empty list is
// an error unless allowEmpty.
func Strings(n *yaml.Node, field, what string, allowEmpty bool, check func(string) error) ([]string, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 && !allowEmpty {
		return nil, LineError(n, "%s must be a non-empty list of %ss", field, strings.TrimPrefix(what, "a "))
	}
	out := []string{}
	for _, item := range n.Content {
		var s string
		if err := Scalar(item, what, &s); err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(s); err != nil {
				return nil, LineError(item, "%v", err)
			}
		}
		out = append(out, s)
	}
	return out, nil
}
