package store

import (
	"sort"
	"sync"

	"github.com/sluice-io/sluice/shared/records"
)

// LoggerLevel is one cluster-wide log level read from the config topic.
type LoggerLevel struct {
	// Namespace is the logger namespace, as the request named it.
	Namespace string
	// Level is the level as written (a log4j name; Kafka Connect writes it
	// in the case it was sent).
	Level string
}

// LoggerLevels is the coordinator's view of the cluster-wide log levels in
// the config topic (logger-cluster-<namespace> records, KIP-976): the
// latest level of each namespace, in the order they were last set, which is
// the order they must be applied in (a level set on a namespace also resets
// the ones below it). Kafka Connect applies only the records written while a
// worker runs; Sluice keeps them all, so a coordinator or an agent that
// starts later gets the cluster's levels too. A tombstone removes a
// namespace from the list without changing any level now.
type LoggerLevels struct {
	mu      sync.RWMutex
	levels  map[string]loggerEntry
	seq     int64
	version int64
	changed chan struct{}
}

type loggerEntry struct {
	level string
	seq   int64
}

// NewLoggerLevels returns an empty list.
func NewLoggerLevels() *LoggerLevels {
	return &LoggerLevels{levels: map[string]loggerEntry{}, changed: make(chan struct{})}
}

// Apply feeds one decoded logger level record into the list.
func (l *LoggerLevels) Apply(rec records.ConfigRecord) {
	if rec.Kind != records.KindLoggerLevel {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if rec.Tombstone {
		if _, ok := l.levels[rec.Logger]; !ok {
			return
		}
		delete(l.levels, rec.Logger)
	} else {
		l.seq++
		l.levels[rec.Logger] = loggerEntry{level: rec.Level, seq: l.seq}
	}
	l.version++
	close(l.changed)
	l.changed = make(chan struct{})
}

// All returns the levels in the order they were last set, and the version
// of the list, which grows with every change.
func (l *LoggerLevels) All() ([]LoggerLevel, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	type ordered struct {
		LoggerLevel
		seq int64
	}
	all := make([]ordered, 0, len(l.levels))
	for ns, e := range l.levels {
		all = append(all, ordered{LoggerLevel{Namespace: ns, Level: e.level}, e.seq})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	out := make([]LoggerLevel, len(all))
	for i, o := range all {
		out[i] = o.LoggerLevel
	}
	return out, l.version
}

// Changed returns a channel closed at the next change.
func (l *LoggerLevels) Changed() <-chan struct{} {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.changed
}
