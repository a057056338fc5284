package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
)

// MaxScan bounds the records one read goes through, per partition: the
// newest MaxScan records (of those since Query.Since, when set). Older
// records are reached with a narrower query.
const MaxScan = 100_000

// Read answers q from the topic, newest first. It seeks each partition to
// the first record at or after q.Since by timestamp (ListOffsets), so a
// query for the last hour reads only the last hour, and reads at most
// MaxScan records of each partition, within topicscan.ReadTimeout.
func (l *Log) Read(ctx context.Context, q Query) (api.AuditLog, error) {
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	out := api.AuditLog{Records: []api.AuditRecord{}, Unwritten: l.Unwritten()}
	matched, more, err := l.scan(ctx, q)
	if err != nil {
		return api.AuditLog{}, err
	}
	out.More = more
	slices.SortStableFunc(matched, func(a, b api.AuditRecord) int { return b.Time.Compare(a.Time) })
	if len(matched) > q.Limit {
		matched, out.More = matched[:q.Limit], true
	}
	if len(matched) > 0 {
		out.Records = matched
	}
	return out, nil
}

// scan reads the topic from q.Since (all of it when zero), at most
// MaxScan records of each partition, and keeps per partition the newest
// q.Limit records that match q; more reports that it left matching records
// out or that MaxScan cut the read.
func (l *Log) scan(ctx context.Context, q Query) ([]api.AuditRecord, bool, error) {
	kept := map[int32]*ring{}
	cut, err := topicscan.Scan(ctx, kadm.NewClient(l.cl), l.cfg.KafkaOpts, l.cfg.Topic, q.Since, MaxScan, func(r *kgo.Record) {
		if !l.cfg.Gate.Admit(r) {
			return
		}
		rec, ok := decode(r)
		if !ok || !q.matches(rec) {
			return
		}
		if kept[r.Partition] == nil {
			kept[r.Partition] = &ring{max: q.Limit}
		}
		kept[r.Partition].add(rec)
	})
	if err != nil {
		return nil, false, fmt.Errorf("audit topic %s: %w", l.cfg.Topic, err)
	}
	var all []api.AuditRecord
	more := cut
	for _, p := range slices.Sorted(maps.Keys(kept)) {
		all = append(all, kept[p].records()...)
		more = more || kept[p].dropped
	}
	return all, more, nil
}

// ring keeps the newest max records added, oldest first.
type ring struct {
	max     int
	recs    []api.AuditRecord
	next    int  // where the next record goes once recs is full
	dropped bool // a record was pushed out
}

func (r *ring) add(rec api.AuditRecord) {
	if len(r.recs) < r.max {
		r.recs = append(r.recs, rec)
		return
	}
	r.recs[r.next], r.dropped = rec, true
	r.next = (r.next + 1) % r.max
}

func (r *ring) records() []api.AuditRecord {
	return append(slices.Clone(r.recs[r.next:]), r.recs[:r.next]...)
}

// decode reads an audit record; ok is false for a record that is none.
func decode(r *kgo.Record) (api.AuditRecord, bool) {
	var rec api.AuditRecord
	if err := json.Unmarshal(r.Value, &rec); err != nil {
		return api.AuditRecord{}, false
	}
	return rec, true
}

// matches reports whether rec is one q selects.
func (q Query) matches(rec api.AuditRecord) bool {
	if q.Connector != "" && rec.Connector != q.Connector || q.Principal != "" && rec.Principal != q.Principal {
		return false
	}
	if q.Operation != "" {
		// ParseQuery checked the pattern, so an error cannot come back.
		if ok, _ := path.Match(q.Operation, rec.Operation); !ok {
			return false
		}
	}
	if q.Visible != nil && !q.Visible(rec.Connector) {
		return false
	}
	if !q.Until.IsZero() && !rec.Time.Before(q.Until) {
		return false
	}
	return q.Since.IsZero() || !rec.Time.Before(q.Since)
}
