package selection

import (
	"slices"
	"testing"
)

func TestSelect(t *testing.T) {
	existing := []string{"orders-sink", "orders-src", "users-src", "audit"}
	for _, tt := range []struct {
		c    Criteria
		want []string
	}{
		{Criteria{Names: []string{"b", "a"}}, []string{"b", "a"}},
		{Criteria{Glob: "orders-*"}, []string{"orders-sink", "orders-src"}},
		{Criteria{Glob: "*-src"}, []string{"orders-src", "users-src"}},
		{Criteria{Glob: "nothing*"}, nil},
		{Criteria{Regex: "src"}, []string{"orders-src", "users-src"}},
		{Criteria{Regex: "^(audit|users-.*)$"}, []string{"audit", "users-src"}},
	} {
		got, err := tt.c.Select(existing)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%+v: %q, %v; want %q", tt.c, got, err, tt.want)
		}
	}
	for _, bad := range []Criteria{{}, {Names: []string{"a"}, Glob: "*"}, {Glob: "["}, {Regex: "("}} {
		if _, err := bad.Select(existing); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
