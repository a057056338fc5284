package suggest

import (
	"slices"
	"testing"
)

// A typo, a swap, a missing part and a case slip find the name; a name
// far from every known one finds nothing.
func TestClosest(t *testing.T) {
	known := []string{"orders-src", "orders-sink", "users-src", "pause", "resume"}
	for _, c := range []struct {
		typed string
		want  []string
	}{
		{"ordrs-src", []string{"orders-src"}},
		{"odrers-sink", []string{"orders-sink"}},
		{"paus", []string{"pause"}},
		{"Resume", nil}, // the same name, in other case
		{"orders", []string{"orders-sink", "orders-src"}},
		{"xyzzy", nil},
		{"a", nil},
	} {
		if got := Closest(c.typed, known); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
	if got := DidYouMean("orders", known); got != "; did you mean orders-sink or orders-src?" {
		t.Errorf("DidYouMean: %q", got)
	}
	if got := DidYouMean("xyzzy", known); got != "" {
		t.Errorf("DidYouMean far: %q", got)
	}
}
