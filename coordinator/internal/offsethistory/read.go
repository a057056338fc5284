package offsethistory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
)

// MaxScan bounds the records one read goes through: the newest MaxScan
// records of each partition of the topic (the topic Sluice creates has
// one), listed when the read starts. An entry takes two records, or more
// for one split into parts, so the bound holds some 50 000 entries of all
// connectors together. A read does not see an entry whose records all lie
// before the newest MaxScan: List, Get and Newest do not return it, nor
// one whose first parts lie before them, and Pending does not return it or
// returns it incomplete.
const MaxScan = 100_000

// The bounds of List's limit.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// List returns the applied entries of connector, newest first (by id): at
// most limit (DefaultLimit when 0 or less, MaxLimit at most), and with
// before set only those whose id is strictly lower. More reports that
// older applied entries exist among those MaxScan reaches: the next page
// is List with before set to the last entry's id. The connector need not
// exist any more.
func (l *Log) List(ctx context.Context, connector string, limit int, before string) (api.OffsetsHistory, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	keep := func(id string) bool { return before == "" || id < before }
	top := newest{max: limit + 1}
	if _, err := l.scan(ctx, connector, keep, top.add); err != nil {
		return api.OffsetsHistory{}, err
	}
	found := top.sorted()
	out := api.OffsetsHistory{Entries: []api.OffsetsHistoryEntry{}}
	if len(found) > limit {
		found, out.More = found[:limit], true
	}
	for _, a := range found {
		e, err := a.entry()
		if err != nil {
			return api.OffsetsHistory{}, fmt.Errorf("offsets history topic %s: %w", l.cfg.Topic, err)
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

// Newest returns the newest applied entry of connector; false when it has
// none that MaxScan reaches.
func (l *Log) Newest(ctx context.Context, connector string) (api.OffsetsHistoryEntry, bool, error) {
	h, err := l.List(ctx, connector, 1, "")
	if err != nil || len(h.Entries) == 0 {
		return api.OffsetsHistoryEntry{}, false, err
	}
	return h.Entries[0], true, nil
}

// Get returns the applied entry id of connector; false when there is
// none: no such entry, one of another connector, one pending or failed, or
// one older than MaxScan reaches.
func (l *Log) Get(ctx context.Context, connector, id string) (api.OffsetsHistoryEntry, bool, error) {
	var found *assembly
	keep := func(got string) bool { return got == id }
	if _, err := l.scan(ctx, connector, keep, func(a *assembly) { found = a }); err != nil {
		return api.OffsetsHistoryEntry{}, false, err
	}
	if found == nil {
		return api.OffsetsHistoryEntry{}, false, nil
	}
	e, err := found.entry()
	if err != nil {
		return api.OffsetsHistoryEntry{}, false, fmt.Errorf("offsets history topic %s: %w", l.cfg.Topic, err)
	}
	return e, true, nil
}

// Pending returns the entries of every connector whose pending records
// have no marker, oldest first (by id): the changes a crash may have left
// between Begin and Finish, for the leader to resolve and Finish. An entry
// not all of whose parts were read has the changes of those read and an
// Error starting with IncompletePrefix (IsIncomplete): Begin never
// returned for it, so its change was never made.
func (l *Log) Pending(ctx context.Context) ([]api.OffsetsHistoryEntry, error) {
	open, err := l.scan(ctx, "", nil, nil)
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(maps.Keys(open))
	out := make([]api.OffsetsHistoryEntry, 0, len(ids))
	for _, id := range ids {
		e, err := open[id].entry()
		if err != nil {
			return nil, fmt.Errorf("offsets history topic %s: %w", l.cfg.Topic, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// scan reads the topic up to the end offsets listed when it starts, at
// most MaxScan records of each partition, within topicscan.ReadTimeout.
// It keeps the records of connector (every connector's when empty) whose
// entry id keep accepts (every id when nil), and hands applied, when not
// nil, each complete applied entry as its marker is read. It returns the
// entries read without a marker, by id. The first marker of an entry
// settles it; records of the entry read after it are ignored.
func (l *Log) scan(ctx context.Context, connector string, keep func(id string) bool, applied func(*assembly)) (open map[string]*assembly, err error) {
	reading := map[string]*assembly{}
	settled := map[string]bool{}
	_, err = topicscan.Scan(ctx, kadm.NewClient(l.cl), l.cfg.KafkaOpts, l.cfg.Topic, time.Time{}, MaxScan, func(r *kgo.Record) {
		if connector != "" && string(r.Key) != connector || !l.cfg.Gate.Admit(r) {
			return
		}
		rec, ok := decode(r)
		if ok {
			observeID(rec.ID)
		}
		if !ok || (connector != "" && rec.Connector != connector) || (keep != nil && !keep(rec.ID)) || settled[rec.ID] {
			return
		}
		a := reading[rec.ID]
		if rec.State == api.HistoryPending {
			if a == nil {
				a = &assembly{}
				reading[rec.ID] = a
			}
			a.add(rec)
			return
		}
		settled[rec.ID] = true
		delete(reading, rec.ID)
		// A marker without parts read: its entry lies before MaxScan, or
		// retention removed it.
		if a == nil {
			return
		}
		a.settle(rec)
		if applied != nil && a.head.State == api.HistoryApplied && a.complete() {
			applied(a)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("offsets history topic %s: %w", l.cfg.Topic, err)
	}
	return reading, nil
}

// newest keeps the max entries with the highest ids of those added,
// whatever order they come in.
type newest struct {
	max  int
	kept []*assembly
}

func (n *newest) add(a *assembly) {
	n.kept = append(n.kept, a)
	// Trimming only once twice as many are kept makes each add cost
	// O(log max) on average.
	if len(n.kept) >= 2*n.max {
		n.trim()
	}
}

func (n *newest) trim() {
	slices.SortFunc(n.kept, func(a, b *assembly) int { return cmp.Compare(b.head.ID, a.head.ID) })
	if len(n.kept) > n.max {
		clear(n.kept[n.max:]) // let the dropped entries' changes go
		n.kept = n.kept[:n.max]
	}
}

// sorted is the entries kept, highest id first.
func (n *newest) sorted() []*assembly {
	n.trim()
	return n.kept
}
