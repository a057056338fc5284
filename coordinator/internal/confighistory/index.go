package confighistory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
)

// index is what this coordinator has read of the topic, so that a read
// goes only through the records appended since the last one: each
// connector's newest MaxPerConnector entries as summaries (no configs),
// with where each record is, and how far each partition was read. A
// summary is a few hundred bytes; the index holds at most one per record
// of the newest MaxScan.
//
//	read ─► catch up: list each partition's [start, end), newest MaxScan at most
//	        ├─ forget what lies before start (retention, or the MaxScan bound)
//	        └─ read [max(start, next), end) ─► add each entry, trim its connector to MaxPerConnector
//	Get ─► the entry's summary here ─► fetch its one record for the configs
type index struct {
	mu sync.Mutex
	// next is the offset each partition is read up to.
	next map[int32]int64
	// entries are each connector's, lowest id first.
	entries map[string][]located
}

// located is an entry's summary and where its record is.
type located struct {
	api.ConfigHistorySummary
	partition int32
	offset    int64
}

// catchUp reads what was appended since the last read, and forgets what
// the topic no longer holds or MaxScan no longer reaches.
func (l *Log) catchUp(ctx context.Context) error {
	ix := &l.index
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, topicscan.ReadTimeout)
	defer cancel()
	spans, _, err := topicscan.Spans(ctx, kadm.NewClient(l.cl), l.cfg.Topic, time.Time{}, MaxScan)
	if err != nil {
		return fmt.Errorf("config history topic %s: %w", l.cfg.Topic, err)
	}
	if ix.next == nil {
		ix.next, ix.entries = map[int32]int64{}, map[string][]located{}
	}
	for name, es := range ix.entries {
		kept := slices.DeleteFunc(es, func(e located) bool {
			s, ok := spans[e.partition]
			return !ok || e.offset < s.From
		})
		if len(kept) == 0 {
			delete(ix.entries, name)
		} else {
			ix.entries[name] = kept
		}
	}
	unread := map[int32]topicscan.Span{}
	for p, s := range spans {
		if from := max(s.From, ix.next[p]); from < s.To {
			unread[p] = topicscan.Span{From: from, To: s.To}
		}
	}
	touched := map[string]bool{}
	err = topicscan.Read(ctx, l.cfg.KafkaOpts, l.cfg.Topic, unread, func(r *kgo.Record) {
		e, ok := l.decode(r)
		if !ok {
			return
		}
		ix.entries[e.Connector] = append(ix.entries[e.Connector], located{ConfigHistorySummary: e.ConfigHistorySummary, partition: r.Partition, offset: r.Offset})
		touched[e.Connector] = true
	})
	if err != nil {
		return fmt.Errorf("config history topic %s: %w", l.cfg.Topic, err)
	}
	for p, s := range unread {
		ix.next[p] = s.To
	}
	for name := range touched {
		es := ix.entries[name]
		slices.SortFunc(es, func(a, b located) int { return cmp.Compare(a.ID, b.ID) })
		if len(es) > MaxPerConnector {
			es = slices.Clone(es[len(es)-MaxPerConnector:]) // let the older ones go
		}
		ix.entries[name] = es
	}
	return nil
}

// decode reads a record of the topic as an entry, if it is one a
// coordinator wrote.
func (l *Log) decode(r *kgo.Record) (api.ConfigHistoryEntry, bool) {
	var e api.ConfigHistoryEntry
	if !l.cfg.Gate.Admit(r) || json.Unmarshal(r.Value, &e) != nil || e.ID == "" || e.Connector == "" || string(r.Key) != e.Connector {
		return api.ConfigHistoryEntry{}, false
	}
	offsethistory.ObserveID(e.ID)
	return e, true
}

// newest are connector's entries as the index has them after a catch-up,
// highest id first.
func (l *Log) newest(ctx context.Context, connector string) ([]located, error) {
	if err := l.catchUp(ctx); err != nil {
		return nil, err
	}
	l.index.mu.Lock()
	defer l.index.mu.Unlock()
	out := slices.Clone(l.index.entries[connector])
	slices.Reverse(out)
	return out, nil
}

// fetch reads the whole entry at e's record.
func (l *Log) fetch(ctx context.Context, e located) (api.ConfigHistoryEntry, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, topicscan.ReadTimeout)
	defer cancel()
	var found api.ConfigHistoryEntry
	var ok bool
	err := topicscan.Read(ctx, l.cfg.KafkaOpts, l.cfg.Topic, map[int32]topicscan.Span{e.partition: {From: e.offset, To: e.offset + 1}}, func(r *kgo.Record) {
		if r.Offset == e.offset {
			found, ok = l.decode(r)
		}
	})
	if err != nil {
		return api.ConfigHistoryEntry{}, false, fmt.Errorf("config history topic %s: read entry %s: %w", l.cfg.Topic, e.ID, err)
	}
	return found, ok && found.ID == e.ID, nil
}
