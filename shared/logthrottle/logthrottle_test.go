package logthrottle

import (
	"fmt"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	w := New(time.Minute)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		key  string
		at   time.Duration
		want bool
	}{
		{"old-1", 0, true},
		{"old-1", time.Second, false},
		{"old-2", time.Second, true}, // another key is named on its own
		{"old-1", 59 * time.Second, false},
		{"old-1", time.Minute, true},
		{"old-2", 30 * time.Second, false},
	}
	for i, s := range steps {
		if got := w.Due(s.key, t0.Add(s.at)); got != s.want {
			t.Errorf("step %d: Due(%s, +%v) = %v, want %v", i, s.key, s.at, got, s.want)
		}
	}
	// Many distinct keys do not grow it without bound.
	for i := range 3 * maxKeys {
		w.Due(fmt.Sprint("k", i), t0)
	}
	if n := len(w.last); n > maxKeys {
		t.Errorf("limiter holds %d keys, want at most %d", n, maxKeys)
	}
}
