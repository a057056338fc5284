package steptimer

import (
	"testing"
	"time"
)

func TestSteps(t *testing.T) {
	tm := New()
	time.Sleep(2 * time.Millisecond)
	tm.Done("a")
	tm.Done("b")
	attrs := tm.Attrs()
	if len(attrs) != 6 || attrs[0] != "a" || attrs[2] != "b" || attrs[4] != "total" {
		t.Fatalf("attrs %v", attrs)
	}
	a, total := attrs[1].(time.Duration), attrs[5].(time.Duration)
	if a < 2*time.Millisecond || total < a {
		t.Fatalf("step a %v, total %v", a, total)
	}
}
