// Package offsethistory keeps the offsets history: one entry for every
// change of a connector's positions (PATCH, DELETE, a reset by rule,
// initial_offsets at create, an undo, a restore, a move), in a topic of its
// own that outlives the connectors it names.
//
// A sink's consumer group cannot be changed in the Kafka transaction of a
// topic write, so every kind of change follows one protocol:
//
//	Begin: pending record(s), acked ─► the caller makes the change ─► Finish: applied | failed marker
//	Begin fails: nothing may be changed; the caller refuses the operation
//	crash before Finish: Pending lists the entry; the leader resolves it at start-up and Finishes it
//	List, Get, Newest: applied entries only; Pending: entries without a marker
//
// A pending entry larger than one record is split into parts (same id,
// part i of n); readers put an entry together only from all its parts.
// Every read goes over the topic between offsets listed when it starts,
// bounded by MaxScan.
package offsethistory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// The defaults of Config.
const (
	DefaultTopic     = "sluice-offsets-history"
	DefaultRetention = 90 * 24 * time.Hour
)

// finishAttempts is how often Finish tries to write a marker, within its
// context, before it gives up: an entry left pending is resolved at the
// next leader's start, but a marker written now saves that comparison.
const finishAttempts = 4

// abandonTimeout bounds the failed marker Begin writes after a failed
// write: its own context may be the one that ended.
const abandonTimeout = 5 * time.Second

// deliveryTimeout bounds how long the producer retries one record when
// the caller's context allows longer: a broker gone for good fails the
// write instead of holding the operation up.
const deliveryTimeout = time.Minute

// defaultMaxMessage is the broker's default max.message.bytes, assumed
// until EnsureTopic reads the topic's.
const defaultMaxMessage = 1_048_588

// defaultBatchBytes is the producer's default bound of a record batch,
// kept for topics that take more.
const defaultBatchBytes = 1_000_012

// batchOverhead is more than what a record batch of one record adds to
// its key and value: the batch header (61 bytes) and the record's own
// lengths and offsets.
const batchOverhead = 512

// maxErrorBytes bounds the error text a failed marker keeps.
const maxErrorBytes = 4096

// Config configures a Log.
type Config struct {
	// Topic is the offsets history topic (default DefaultTopic).
	Topic string
	// Retention is the topic's retention.ms when Sluice creates it
	// (default DefaultRetention); entries older than that are gone.
	Retention time.Duration
	// KafkaOpts are the coordinator's Kafka client options.
	KafkaOpts []kgo.Opt
	// Logger is where a compacted topic and unwritten markers are reported
	// (default slog.Default()).
	Logger *slog.Logger
	// Gate signs the records written and keeps reads from taking one no
	// coordinator wrote (nil: neither).
	Gate *recordsig.Gate
}

// Log writes offsets history entries to the topic and reads them back.
// Its methods may be called concurrently; Close once none is running.
type Log struct {
	cfg Config
	cl  *kgo.Client
	// abandons are the failed markers Begin still writes.
	abandons sync.WaitGroup
	// maxMessage is the topic's max.message.bytes as EnsureTopic read it.
	maxMessage atomic.Int64
}

// New makes a Log and its producer; it does not reach the broker yet.
func New(cfg Config) (*Log, error) {
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Log{cfg: cfg}
	l.maxMessage.Store(defaultMaxMessage)
	opts := append([]kgo.Opt{}, cfg.KafkaOpts...)
	opts = append(opts,
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(deliveryTimeout),
		// Concurrent Begins share batches: no batch may exceed what the
		// topic takes either. The client asks once, when it first
		// produces to the topic, after EnsureTopic.
		kgo.ProducerBatchMaxBytesFn(func(string) int32 {
			return int32(min(l.maxMessage.Load(), defaultBatchBytes))
		}),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("offsets history topic %s: new client: %w", cfg.Topic, err)
	}
	l.cl = cl
	return l, nil
}

// EnsureTopic creates the offsets history topic if it is missing: one
// partition, cleanup.policy=delete, retention.ms from Config.Retention.
// An existing topic is left as it is, with a warning if it is compacted:
// compaction would keep only the newest record of each connector, its last
// marker, and lose the entries themselves. The topic's max.message.bytes,
// when lower than the broker default, makes Begin split entries into
// smaller parts: call EnsureTopic before the first Begin.
func (l *Log) EnsureTopic(ctx context.Context) error {
	cfgs, err := topicscan.EnsureTopic(ctx, kadm.NewClient(l.cl), l.cfg.Topic, l.cfg.Retention, l.cfg.Logger, "offsets history")
	if err != nil {
		return fmt.Errorf("offsets history topic: %w", err)
	}
	if n, err := strconv.ParseInt(cfgs["max.message.bytes"], 10, 64); err == nil && n > 0 {
		l.maxMessage.Store(n)
	}
	return nil
}

// valueLimit is the most bytes the value of a record with key may take:
// maxRecordBytes, or less when the topic's max.message.bytes, less the
// key and a batch's own bytes, is lower.
func (l *Log) valueLimit(key string) int {
	return int(min(maxRecordBytes, l.maxMessage.Load()-batchOverhead-int64(len(key))))
}

// record is a record of the topic, signed when the coordinators sign
// their records (Config.Gate), so that readers take it.
func (l *Log) record(key string, value []byte) *kgo.Record {
	r := &kgo.Record{Key: []byte(key), Value: value}
	l.cfg.Gate.Key().Sign(l.cfg.Topic, r)
	return r
}

// Close closes the producer, once the failed markers of failed Begins are
// written or given up (abandonTimeout at most). Every other write waited
// for its ack, so nothing else is left queued.
func (l *Log) Close() {
	l.abandons.Wait()
	l.cl.Close()
}

// Begin writes e as a pending entry and returns it as written: with a new
// ID (any ID in e is replaced), Time now unless set, State
// api.HistoryPending, Error empty. It returns once the broker acked every
// record of the entry (one, or several parts for an entry larger than a
// record holds). An error means the entry may be missing or incomplete
// and the caller must not change anything: it refuses the operation. Begin
// then writes a failed marker itself, in the background and when it can,
// so that the entry is not left for the next leader to resolve.
func (l *Log) Begin(ctx context.Context, e api.OffsetsHistoryEntry) (api.OffsetsHistoryEntry, error) {
	if e.Connector == "" {
		return api.OffsetsHistoryEntry{}, errors.New("offsets history: an entry needs a connector")
	}
	now := time.Now().UTC()
	e.ID = newID(now)
	if e.Time.IsZero() {
		e.Time = now
	}
	e.State, e.Error = api.HistoryPending, ""
	if e.Changes == nil {
		e.Changes = []api.OffsetChange{}
	}
	values, err := encodeParts(e, l.valueLimit(e.Connector))
	if err != nil {
		return api.OffsetsHistoryEntry{}, fmt.Errorf("offsets history entry of connector %s: %w", e.Connector, err)
	}
	recs := make([]*kgo.Record, len(values))
	for i, v := range values {
		recs[i] = l.record(e.Connector, v)
	}
	if err := l.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		l.abandons.Add(1)
		go l.abandon(ctx, e, err)
		return api.OffsetsHistoryEntry{}, fmt.Errorf("offsets history topic %s: write pending entry %s of connector %s: %w", l.cfg.Topic, e.ID, e.Connector, err)
	}
	return e, nil
}

// abandon marks e failed after its pending records could not all be
// written. Some may have been: without the marker they would read as
// pending until the next leader resolves them.
func (l *Log) abandon(ctx context.Context, e api.OffsetsHistoryEntry, cause error) {
	defer l.abandons.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abandonTimeout)
	defer cancel()
	value, err := encodeMarker(e, fmt.Errorf("not begun: %w", cause))
	if err == nil {
		err = l.cl.ProduceSync(ctx, l.record(e.Connector, value)).FirstErr()
	}
	if err != nil {
		l.cfg.Logger.Warn("offsets history entry left pending: the next leader resolves it at start-up",
			"topic", l.cfg.Topic, "connector", e.Connector, "entry", e.ID, "error", err)
	}
}

// Finish writes the marker of e, an entry Begin returned: applied when
// cause is nil, failed with cause's text otherwise. The marker is small
// (id, connector, state, time, error), never a copy of the changes. It
// tries finishAttempts times within ctx; an error means the entry stays
// pending until the leader resolves it at its next start.
func (l *Log) Finish(ctx context.Context, e api.OffsetsHistoryEntry, cause error) error {
	if e.ID == "" || e.Connector == "" {
		return errors.New("offsets history: Finish needs the entry Begin returned (its id and connector)")
	}
	value, err := encodeMarker(e, cause)
	if err != nil {
		return fmt.Errorf("offsets history entry %s: %w", e.ID, err)
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err = l.cl.ProduceSync(ctx, l.record(e.Connector, value)).FirstErr()
		if err == nil {
			return nil
		}
		if attempt == finishAttempts || ctx.Err() != nil {
			return fmt.Errorf("offsets history topic %s: write marker of entry %s of connector %s (%d attempts): %w", l.cfg.Topic, e.ID, e.Connector, attempt, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// marker is the value of the record that settles an entry.
type marker struct {
	ID        string    `json:"id"`
	Connector string    `json:"connector"`
	State     string    `json:"state"`
	Time      time.Time `json:"time"`
	Error     string    `json:"error,omitempty"`
}

// encodeMarker is the marker of e: applied when cause is nil, failed with
// its text (cut to maxErrorBytes) otherwise.
func encodeMarker(e api.OffsetsHistoryEntry, cause error) ([]byte, error) {
	m := marker{ID: e.ID, Connector: e.Connector, State: api.HistoryApplied, Time: time.Now().UTC()}
	if cause != nil {
		m.State, m.Error = api.HistoryFailed, cause.Error()
		if len(m.Error) > maxErrorBytes {
			m.Error = strings.ToValidUTF8(m.Error[:maxErrorBytes], "") + "…"
		}
	}
	return json.Marshal(m)
}

// idClock is the newest millisecond an id of this process used.
var idClock struct {
	sync.Mutex
	last int64
}

// newID is an entry id: the Unix time in milliseconds, zero-padded to 13
// digits so that ids sort as text by time, '-', and 16 random hex digits
// that keep the ids of different coordinators apart. Within one process
// every id's millisecond is after the previous one's (moved forward by one
// when several are made in the same millisecond, or the clock steps
// back), so ids sort in the order they were made.
func newID(now time.Time) string {
	ms := now.UnixMilli()
	idClock.Lock()
	if ms <= idClock.last {
		ms = idClock.last + 1
	}
	idClock.last = ms
	idClock.Unlock()
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return fmt.Sprintf("%013d-%s", ms, hex.EncodeToString(b[:]))
}

// observeID moves the id clock past id's millisecond, so that the ids this
// process makes next sort after it: a coordinator that takes over from one
// whose clock ran ahead still appends entries that sort as the newest.
func observeID(id string) {
	if len(id) < 13 {
		return
	}
	ms, err := strconv.ParseInt(id[:13], 10, 64)
	if err != nil {
		return
	}
	idClock.Lock()
	idClock.last = max(idClock.last, ms)
	idClock.Unlock()
}

// ValidID reports whether id has the form of an entry id (newID): 13
// digits, '-', 16 lower-case hex digits. The REST layer can refuse a
// malformed before or entry id with a 400 before reading the topic.
func ValidID(id string) bool {
	ms, random, ok := strings.Cut(id, "-")
	if !ok || len(ms) != 13 || len(random) != 16 {
		return false
	}
	for _, c := range ms {
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, c := range random {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// NewID is an entry id as Begin makes them, for the coordinator's other
// histories (the config history) whose ids sort with these by time.
func NewID(now time.Time) string { return newID(now) }

// ObserveID moves the id clock past id, an id read from a topic: the ids
// made next sort after it (observeID).
func ObserveID(id string) { observeID(id) }
