package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// MaxScan bounds the records one read goes through, per partition: the
// newest MaxScan records (of those since Query.Since, when set). Older
// records are reached with a narrower query.
const MaxScan = 100_000

// readTimeout bounds one read, however slow the broker.
const readTimeout = 30 * time.Second

// span is the part of one partition a read goes through: [from, to).
type span struct{ from, to int64 }

// Read answers q from the topic, newest first. It seeks each partition to
// the first record at or after q.Since by timestamp (ListOffsets), so a
// query for the last hour reads only the last hour, and reads at most
// MaxScan records of each partition.
func (l *Log) Read(ctx context.Context, q Query) (v1.AuditLog, error) {
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	out := v1.AuditLog{Records: []v1.AuditRecord{}, Unwritten: l.Unwritten()}
	spans, more, err := l.spans(ctx, q.Since)
	if err != nil {
		return v1.AuditLog{}, err
	}
	out.More = more
	if len(spans) == 0 {
		return out, nil
	}
	matched, more, err := l.scan(ctx, spans, q)
	if err != nil {
		return v1.AuditLog{}, err
	}
	out.More = out.More || more
	slices.SortStableFunc(matched, func(a, b v1.AuditRecord) int { return b.Time.Compare(a.Time) })
	if len(matched) > q.Limit {
		matched, out.More = matched[:q.Limit], true
	}
	if len(matched) > 0 {
		out.Records = matched
	}
	return out, nil
}

// spans are the parts of the partitions to read, and whether the MaxScan
// bound cut any of them.
func (l *Log) spans(ctx context.Context, since time.Time) (map[int32]span, bool, error) {
	adm := kadm.NewClient(l.cl)
	ends, err := adm.ListEndOffsets(ctx, l.cfg.Topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, false, fmt.Errorf("audit topic %s: list end offsets: %w", l.cfg.Topic, err)
	}
	var starts kadm.ListedOffsets
	if since.IsZero() {
		starts, err = adm.ListStartOffsets(ctx, l.cfg.Topic)
	} else {
		// The first offset whose timestamp is at or after since; the end
		// when there is none.
		starts, err = adm.ListOffsetsAfterMilli(ctx, since.UnixMilli(), l.cfg.Topic)
	}
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, false, fmt.Errorf("audit topic %s: list start offsets: %w", l.cfg.Topic, err)
	}
	spans, cut := map[int32]span{}, false
	ends.Each(func(e kadm.ListedOffset) {
		s, ok := starts.Lookup(e.Topic, e.Partition)
		from := s.Offset
		if !ok || from < 0 || from > e.Offset {
			from = e.Offset
		}
		if e.Offset-from > MaxScan {
			from, cut = e.Offset-MaxScan, true
		}
		if from < e.Offset {
			spans[e.Partition] = span{from: from, to: e.Offset}
		}
	})
	return spans, cut, nil
}

// scan reads spans and keeps, per partition, the newest q.Limit records
// that match q; more reports that it left matching records out.
func (l *Log) scan(ctx context.Context, spans map[int32]span, q Query) ([]v1.AuditRecord, bool, error) {
	at := map[int32]kgo.Offset{}
	for p, s := range spans {
		at[p] = kgo.NewOffset().At(s.from)
	}
	opts := append([]kgo.Opt{}, l.cfg.KafkaOpts...)
	opts = append(opts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{l.cfg.Topic: at}),
		// A control record (of a transaction someone else wrote) still
		// moves the position, so the read ends.
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, false, fmt.Errorf("audit topic %s: new reader: %w", l.cfg.Topic, err)
	}
	defer cl.Close()
	kept := map[int32]*ring{}
	for p := range spans {
		kept[p] = &ring{max: q.Limit}
	}
	left := len(spans)
	for left > 0 {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("audit topic %s: read: %w", l.cfg.Topic, err)
		}
		var ferr error
		fetches.EachError(func(_ string, p int32, err error) { ferr = fmt.Errorf("partition %d: %w", p, err) })
		if ferr != nil {
			return nil, false, fmt.Errorf("audit topic %s: read: %w", l.cfg.Topic, ferr)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			s, ok := spans[r.Partition]
			if !ok || r.Offset < s.from || r.Offset >= s.to {
				return
			}
			if r.Offset == s.to-1 {
				left--
			}
			rec, ok := decode(r)
			if r.Attrs.IsControl() || !ok || !q.matches(rec) {
				return
			}
			kept[r.Partition].add(rec)
		})
	}
	var all []v1.AuditRecord
	more := false
	for _, p := range slices.Sorted(maps.Keys(kept)) {
		all = append(all, kept[p].records()...)
		more = more || kept[p].dropped
	}
	return all, more, nil
}

// ring keeps the newest max records added, oldest first.
type ring struct {
	max     int
	recs    []v1.AuditRecord
	next    int  // where the next record goes once recs is full
	dropped bool // a record was pushed out
}

func (r *ring) add(rec v1.AuditRecord) {
	if len(r.recs) < r.max {
		r.recs = append(r.recs, rec)
		return
	}
	r.recs[r.next], r.dropped = rec, true
	r.next = (r.next + 1) % r.max
}

func (r *ring) records() []v1.AuditRecord {
	return append(slices.Clone(r.recs[r.next:]), r.recs[:r.next]...)
}

// decode reads an audit record; ok is false for a record that is none.
func decode(r *kgo.Record) (v1.AuditRecord, bool) {
	var rec v1.AuditRecord
	if err := json.Unmarshal(r.Value, &rec); err != nil {
		return v1.AuditRecord{}, false
	}
	return rec, true
}

// matches reports whether rec is one q selects.
func (q Query) matches(rec v1.AuditRecord) bool {
	if q.Connector != "" && rec.Connector != q.Connector {
		return false
	}
	return q.Since.IsZero() || !rec.Time.Before(q.Since)
}
