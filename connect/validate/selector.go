package validate

import (
	"errors"
	"strings"

	"github.com/sluice-io/sluice/connect"
)

// errSelectorShape is the reason a sluice.agent.selector value is rejected.
var errSelectorShape = errors.New("Expected comma-separated key=value pairs with non-empty keys, such as zone=a,host=web-1")

// ParseSelector parses a sluice.agent.selector value: comma-separated
// key=value pairs, with whitespace around each pair, key and value ignored.
// An empty value selects every agent (an empty map). A key may not be empty
// or repeated; a value may be empty and may contain '='. These are the rules
// of shared/labels.Parse, which the scheduler uses, so that a selector that
// validates is one the scheduler understands.
func ParseSelector(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, errSelectorShape
		}
		if _, dup := out[k]; dup {
			return nil, errors.New("Duplicate key " + k)
		}
		out[k] = v
	}
	return out, nil
}

type selectorValidator struct{}

// EnsureValid implements connect.Validator.
func (selectorValidator) EnsureValid(name string, v any) error {
	s, _ := v.(string)
	if _, err := ParseSelector(s); err != nil {
		return connect.InvalidValue(name, v, err.Error())
	}
	return nil
}
