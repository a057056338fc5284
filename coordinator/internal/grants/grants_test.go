package grants

import (
	"errors"
	"testing"

	"github.com/sluice-io/sluice/api"
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
	e := api.AsError(err)
	if e == nil || e.Code != api.CodeForbidden || e.Message != "may not touch b" {
		t.Fatalf("All: %v", err)
	}
}
