package lag

import (
	"sync"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

// Reading is a sink's total lag as read at a time.
type Reading struct {
	Total int64
	At    time.Time
}

// Latest keeps the last total lag read of each sink, so that a listing of
// the whole fleet can show lag without reading Kafka once per connector
// per request. It is fed by the reads the coordinator makes anyway (the
// leader's lag-history rounds and a Prometheus scrape read every sink's
// lag, GET …/lag one sink's) and holds one Reading per sink: its size is bounded by the connectors.
// The zero value is ready to use.
type Latest struct {
	mu   sync.RWMutex
	last map[string]Reading
}

// Record keeps the lag of every sink of a scrape's reading, read at at.
func (l *Latest) Record(lags []metrics.SinkLag, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]Reading{}
	}
	for _, s := range lags {
		var total int64
		for _, p := range s.Partitions {
			total += p.Lag
		}
		l.last[s.Connector] = Reading{Total: total, At: at}
	}
}

// RecordOne keeps one sink's total lag, read at at.
func (l *Latest) RecordOne(connector string, total int64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]Reading{}
	}
	l.last[connector] = Reading{Total: total, At: at}
}

// Last is the last lag read of connector.
func (l *Latest) Last(connector string) (Reading, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r, ok := l.last[connector]
	return r, ok
}

// Forget drops the readings of every connector keep does not keep (the
// deleted ones), so that a name used again does not show a stale lag.
func (l *Latest) Forget(keep func(connector string) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.last {
		if !keep(c) {
			delete(l.last, c)
		}
	}
}
