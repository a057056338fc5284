// Package confighistory keeps the config history: one entry for every
// accepted change of a connector's config — create, PUT, PATCH, a
// rollout's patch or rollback, a move, a restore, a delete — with who made
// it, the configs before and after, and the keys it changed, in a topic of
// its own that outlives the connectors it names.
//
//	connectors service / rollout ─► Recorder.Apply ─► config topic (one transaction)
//	                                      └─ committed ─► Log.Append: one record per entry, keyed by connector
//	REST GET …/config/history[/{id}] ─► Log.List / Log.Get: the records appended since the last read (index.go),
//	                                     the newest MaxPerConnector entries; Get fetches its entry's one record
//	REST POST …/history/{id}/restore ─► Service.Restore ─► PUT …/config's path (validation, tenancy, leader)
//
// An entry is written once its change is committed, never before: the
// history never shows a change that was not made. A coordinator that dies
// between the two, or a history write that fails, loses that one entry
// (logged as an error); the change itself stands.
package confighistory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/offsethistory"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// The defaults of Config.
const (
	DefaultTopic     = "sluice-config-history"
	DefaultRetention = 90 * 24 * time.Hour
)

// MaxPerConnector is how many entries of one connector the history keeps
// visible: List, Get and a restore see the newest MaxPerConnector of its
// entries, and older ones are as if gone (the topic's retention removes
// them for good).
const MaxPerConnector = 100

// MaxScan bounds the records the history reaches: the newest MaxScan
// records of the topic (one entry is one record, of every connector). Each
// coordinator keeps a summary of each (index.go), and a read goes through
// only the records appended since the previous one.
const MaxScan = 100_000

// The bounds of List's limit.
const (
	DefaultLimit = 50
	MaxLimit     = MaxPerConnector
)

// maxRecordBytes bounds the value of one record, below the broker's
// default max.message.bytes with room for the key and the batch.
const maxRecordBytes = 900_000

// batchOverhead is more than a record batch of one record adds to its key
// and value.
const batchOverhead = 512

// defaultMaxMessage is the broker's default max.message.bytes, assumed
// until EnsureTopic reads the topic's.
const defaultMaxMessage = 1_048_588

// Config configures a Log.
type Config struct {
	// Topic is the config history topic (default DefaultTopic).
	Topic string
	// Retention is the topic's retention.ms when Sluice creates it
	// (default DefaultRetention).
	Retention time.Duration
	// KafkaOpts are the coordinator's Kafka client options.
	KafkaOpts []kgo.Opt
	// Logger is where a compacted topic is reported (default
	// slog.Default()).
	Logger *slog.Logger
	// Gate signs the records written and keeps reads from taking one no
	// coordinator wrote (nil: neither).
	Gate *recordsig.Gate
}

// Log writes config history entries to the topic and reads them back. Its
// methods may be called concurrently; Close once none is running.
type Log struct {
	cfg        Config
	cl         *kgo.Client
	maxMessage atomic.Int64
	// index is what this coordinator read of the topic (index.go).
	index index
}

// New makes a Log and its producer; it does not reach the broker yet.
func New(cfg Config) (*Log, error) {
	cfg.Topic = cmp.Or(cfg.Topic, DefaultTopic)
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Log{cfg: cfg}
	l.maxMessage.Store(defaultMaxMessage)
	opts := append(slices.Clone(cfg.KafkaOpts), kgo.DefaultProduceTopic(cfg.Topic), kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(time.Minute))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("config history topic %s: new client: %w", cfg.Topic, err)
	}
	l.cl = cl
	return l, nil
}

// Topic is the topic the log writes.
func (l *Log) Topic() string { return l.cfg.Topic }

// EnsureTopic creates the topic if it is missing (one partition,
// cleanup.policy=delete, retention.ms from Config.Retention) and reads its
// max.message.bytes, which bounds an entry.
func (l *Log) EnsureTopic(ctx context.Context) error {
	cfgs, err := topicscan.EnsureTopic(ctx, kadm.NewClient(l.cl), l.cfg.Topic, l.cfg.Retention, l.cfg.Logger, "config history")
	if err != nil {
		return fmt.Errorf("config history topic: %w", err)
	}
	if n, err := strconv.ParseInt(cfgs["max.message.bytes"], 10, 64); err == nil && n > 0 {
		l.maxMessage.Store(n)
	}
	return nil
}

// Close closes the producer; every write waited for its ack.
func (l *Log) Close() { l.cl.Close() }

// Append writes entries, each with a new ID and Time now unless set, and
// returns them as written. It returns once the broker acked them all. An
// entry larger than a record of the topic holds loses its Before config,
// then its After too (Omitted says so); its diff stays.
func (l *Log) Append(ctx context.Context, entries ...api.ConfigHistoryEntry) ([]api.ConfigHistoryEntry, error) {
	recs := make([]*kgo.Record, len(entries))
	out := make([]api.ConfigHistoryEntry, len(entries))
	for i, e := range entries {
		now := time.Now().UTC()
		e.ID = offsethistory.NewID(now)
		if e.Time.IsZero() {
			e.Time = now
		}
		value, err := l.encode(&e)
		if err != nil {
			return nil, err
		}
		r := &kgo.Record{Key: []byte(e.Connector), Value: value}
		l.cfg.Gate.Key().Sign(l.cfg.Topic, r)
		recs[i], out[i] = r, e
	}
	if err := l.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, fmt.Errorf("config history topic %s: write %d entries: %w", l.cfg.Topic, len(recs), err)
	}
	return out, nil
}

// encode is e's record value within the topic's bound, dropping its
// configs when they do not fit (and saying so in e).
func (l *Log) encode(e *api.ConfigHistoryEntry) ([]byte, error) {
	limit := int(min(maxRecordBytes, l.maxMessage.Load()-batchOverhead-int64(len(e.Connector))))
	for range 3 {
		value, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("config history entry of connector %s: encode: %w", e.Connector, err)
		}
		if len(value) <= limit {
			return value, nil
		}
		e.Omitted = true
		if e.Before != nil {
			e.Before = nil
		} else {
			e.After = nil
		}
	}
	return nil, fmt.Errorf("config history entry of connector %s: its diff alone takes more than a record of topic %s holds (%d bytes)", e.Connector, l.cfg.Topic, limit)
}

// observeTimeout bounds ObserveNewest's read.
const observeTimeout = 5 * time.Second

// ObserveNewest reads the newest record of the topic and moves the id
// clock past its entry's id, so that the entries this coordinator appends
// next sort after every one appended before, even by a coordinator whose
// clock ran ahead: the leader calls it as its term begins.
func (l *Log) ObserveNewest(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, observeTimeout)
	defer cancel()
	_, err := topicscan.Scan(ctx, kadm.NewClient(l.cl), l.cfg.KafkaOpts, l.cfg.Topic, time.Time{}, 1, func(r *kgo.Record) {
		var e struct {
			ID string `json:"id"`
		}
		if l.cfg.Gate.Admit(r) && json.Unmarshal(r.Value, &e) == nil && offsethistory.ValidID(e.ID) {
			offsethistory.ObserveID(e.ID)
		}
	})
	if err != nil {
		return fmt.Errorf("config history topic %s: read the newest entry: %w", l.cfg.Topic, err)
	}
	return nil
}

// List returns the entries of connector, newest first: at most limit
// (DefaultLimit when 0 or less, MaxLimit at most) of its newest
// MaxPerConnector, and with before set only those whose id is strictly
// lower. More reports that older ones remain among those. The connector
// need not exist any more.
func (l *Log) List(ctx context.Context, connector string, limit int, before string) (api.ConfigHistory, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	kept, err := l.newest(ctx, connector)
	if err != nil {
		return api.ConfigHistory{}, err
	}
	out := api.ConfigHistory{Entries: []api.ConfigHistorySummary{}}
	for _, e := range kept {
		if before != "" && e.ID >= before {
			continue
		}
		if len(out.Entries) == limit {
			out.More = true
			break
		}
		out.Entries = append(out.Entries, e.ConfigHistorySummary)
	}
	return out, nil
}

// Get returns entry id of connector; false when it is none of its newest
// MaxPerConnector.
func (l *Log) Get(ctx context.Context, connector, id string) (api.ConfigHistoryEntry, bool, error) {
	kept, err := l.newest(ctx, connector)
	if err != nil {
		return api.ConfigHistoryEntry{}, false, err
	}
	for _, e := range kept {
		if e.ID == id {
			return l.fetch(ctx, e)
		}
	}
	return api.ConfigHistoryEntry{}, false, nil
}
