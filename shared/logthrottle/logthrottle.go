// Package logthrottle says when a repeated warning is due, so that a cause
// that repeats — a peer retrying every few milliseconds, a forged command
// sent in a loop — is logged once per period rather than once per event.
package logthrottle

import (
	"sync"
	"time"
)

// maxKeys bounds a Limiter's memory: keys often come from the network.
const maxKeys = 1024

// Limiter says whether a warning about a key is due: at most one per key
// per period. It is safe for concurrent use; time is passed in.
type Limiter struct {
	every time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
}

// New returns a limiter that lets one warning per key through every period.
func New(every time.Duration) *Limiter {
	return &Limiter{every: every, last: map[string]time.Time{}}
}

// Due reports whether a warning about key may be logged at now, and if so
// counts it as logged.
func (l *Limiter) Due(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.last[key]; ok && now.Sub(t) < l.every {
		return false
	}
	if len(l.last) >= maxKeys {
		// Forgetting every key costs at most one extra warning each.
		clear(l.last)
	}
	l.last[key] = now
	return true
}
