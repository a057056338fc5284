package grants

import (
	"errors"
	"testing"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// TestAllRefusesWholeWithTheFirstRefusal: one refused connector refuses
// the operation with a 403 naming it; nil allows everything.
func TestAllRefusesWholeWithTheFirstRefusal(t *testing.T) {
	var none Allow
	if err := none.All([]string{"a", "b"}); err != nil {
		t.Fatalf("nil Allow refused: %v", err)
	}
	only := Allow(func(c string) error {
		if c != "a" {
			return errors.New("may not touch " + c)
		}
		return nil
	})
	if err := only.Check("a"); err != nil {
		t.Fatalf("Check(a): %v", err)
	}
	err := only.All([]string{"a", "b", "c"})
	e := v1.AsError(err)
	if e == nil || e.Code != v1.CodeForbidden || e.Message != "may not touch b" {
		t.Fatalf("All: %v", err)
	}
}
