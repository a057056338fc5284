package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readTopic answers a step that names a Topic: every committed record of
// the topic (read_committed, up to its end when the step runs), grouped by
// key, each key's values numbered in the order it was written:
// {"records": {"<key>": {"000": <value>, "001": …}}}, values as JSON (null
// for a tombstone; a text that is no JSON as a string). A record with
// headers is {"value": <value>, "headers": [[<key>, <value as text>], …]},
// its headers in their order. Answers have their
// arrays sorted before they are compared, so the order a key's values were
// written in is kept in object keys; the order of different keys depends
// on the topic's partitions, which are the systems' own, and is not kept.
func (s System) readTopic(ctx context.Context, st Step) Record {
	topic := s.expand(st.Topic)
	rec := Record{Step: st, Request: "READ " + topic}
	recs, err := readAll(ctx, s.Brokers, topic)
	if err != nil {
		rec.Err = err.Error()
		return rec
	}
	byKey := map[string]map[string]any{}
	for _, r := range recs {
		k := string(r.Key)
		if v, ok := decode(r.Key); ok {
			k = canonical(v)
		}
		if byKey[k] == nil {
			byKey[k] = map[string]any{}
		}
		byKey[k][fmt.Sprintf("%03d", len(byKey[k]))] = withHeaders(r)
	}
	rec.Status = 200
	rec.Body, _ = json.Marshal(map[string]any{"records": byKey})
	return rec
}

// freeText are the dead letter headers whose text is each runtime's own:
// the converter's parse error (Jackson's words in Kafka Connect) and the
// stack trace. That they are there, and not null, is compared.
var freeText = map[string]bool{"__connect.errors.exception.message": true, "__connect.errors.exception.stacktrace": true}

// withHeaders is a record's value, with its headers when it has some.
func withHeaders(r *kgo.Record) any {
	if len(r.Headers) == 0 {
		return jsonOf(r.Value)
	}
	hs := make([]any, len(r.Headers))
	for i, h := range r.Headers {
		var v any
		if h.Value != nil {
			v = string(h.Value)
			if freeText[h.Key] {
				v = "<text>"
			}
		}
		hs[i] = []any{h.Key, v}
	}
	return map[string]any{"value": jsonOf(r.Value), "headers": hs}
}

func jsonOf(b []byte) any {
	if b == nil {
		return nil
	}
	if v, ok := decode(b); ok {
		return v
	}
	return string(b)
}

// readAll reads topic from its start to the end it has now.
func readAll(ctx context.Context, brokers, topic string) ([]*kgo.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumeTopics(topic), kgo.KeepControlRecords(),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	// The last stable offsets: what read_committed readers can reach.
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("list end offsets of %s: %w", topic, err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	var out []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %w", topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			// Control records (transaction markers) only move the
			// position.
			if !r.Attrs.IsControl() {
				out = append(out, r)
			}
			if end, ok := want[r.Partition]; ok && r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Partition < b.Partition || a.Partition == b.Partition && a.Offset < b.Offset
	})
	return out, nil
}
