package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkalog"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// ErrNotLeader is returned by a write when this coordinator holds no
// leader writer (it is a follower, or was deposed).
var ErrNotLeader = errors.New("this coordinator is not the leader")

// Writer is the leader's transactional writer, shared by the config and
// status stores: a new leader's writer fences a deposed leader's, so a
// deposed leader can write neither configs nor statuses.
type Writer struct {
	w *kafkautil.TxnWriter
	// logs are the followed topics' readers, by topic: a commit is visible
	// once they have read past it (see follow).
	mu   sync.Mutex
	logs map[string]*kafkalog.Log
	// renew, when set, is asked for a usable writer once this one is
	// fenced (see SetRenew).
	renew func(ctx context.Context) *Writer
}

// SetRenew installs what a write that finds this writer fenced asks for a
// replacement: the herder re-fences and reopens the leader writer while the
// lease is still its own, and returns the writer then installed (nil when it
// no longer leads). A fenced transaction wrote nothing, so the write is
// tried once more on the replacement instead of failing a request because
// of a stray epoch bump. Call it before the writer is installed.
func (w *Writer) SetRenew(renew func(ctx context.Context) *Writer) { w.renew = renew }

// NewWriter opens the leader writer under txnID (<group.id>-leader) and
// takes the id's producer epoch at once. franz-go would otherwise take it at
// the first write, and a leader paused before that write would, once
// resumed, take an epoch above its successor's and fence the rightful leader.
func NewWriter(ctx context.Context, txnID string, opts ...kgo.Opt) (*Writer, error) {
	w, err := kafkautil.NewTxnWriter(txnID, opts...)
	if err != nil {
		return nil, err
	}
	// Bursts of config and status changes commit back to back: each
	// waits for its markers rather than having the next one refused. The
	// stores' own readers see them land (Followed).
	w.AwaitVisible = true
	lw := &Writer{w: w, logs: map[string]*kafkalog.Log{}}
	w.Followed = lw.reader
	if err := w.Init(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("initialise transactional id %s: %w", txnID, err)
	}
	return lw, nil
}

// follow makes log the reader that shows when the writer's records of
// topic are visible.
func (w *Writer) follow(topic string, log *kafkalog.Log) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs[topic] = log
}

// reader returns the wait of topic's reader, or nil when the topic has none.
func (w *Writer) reader(topic string) func(ctx context.Context, partition int32, offset int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if log := w.logs[topic]; log != nil {
		return log.WaitPast
	}
	return nil
}

// Close closes the writer.
func (w *Writer) Close() { w.w.Close() }

// Usable reports whether the writer can still write: not fenced by a newer
// producer of its id, nor interrupted mid-transaction.
func (w *Writer) Usable() bool { return w.w.Usable() }

// follower is a followed topic whose writes go through the leader writer.
type follower struct {
	topic  string
	log    *kafkalog.Log
	writer atomic.Pointer[Writer]
	// gate signs the records written and keeps the reader from applying
	// one no coordinator wrote (nil: neither).
	gate *recordsig.Gate
}

// SetGate installs the record signing gate; call it before Start.
func (f *follower) SetGate(g *recordsig.Gate) { f.gate = g }

// gated is apply behind the follower's gate: a record no coordinator wrote
// is not applied.
func (f *follower) gated(apply func(*kgo.Record)) func(*kgo.Record) {
	return func(r *kgo.Record) {
		if f.gate.Admit(r) {
			apply(r)
		}
	}
}

// SetWriter installs (or, with nil, removes) the leader writer.
func (f *follower) SetWriter(w *Writer) {
	if w != nil {
		w.follow(f.topic, f.log)
	}
	f.writer.Store(w)
}

// ReadToEnd waits until everything written so far has been applied.
func (f *follower) ReadToEnd(ctx context.Context) error { return f.log.ReadToEnd(ctx) }

// write appends recs in one transaction and waits until they are applied.
// It is unexported so that config records are written only through
// ConfigStore.Apply's typed commands; StatusStore exports it as Write.
func (f *follower) write(ctx context.Context, recs ...records.Record) error {
	return writeParts(ctx, f.writer.Load(), part{f, recs})
}

// ConfigStore follows the config topic into a ConfigState. Only the leader
// writes it, transactionally and only through Apply's typed commands, so a
// batch (task configs plus their commit plus a target state) is applied all
// or nothing and followers, reading read_committed, never see half of one.
type ConfigStore struct {
	follower
	State *ConfigState
	// Loggers are the cluster-wide log levels the topic holds.
	Loggers       *LoggerLevels
	onDecodeError func(key string, err error)
	onLoggerLevel func(namespace, level string)
	limit         atomic.Pointer[RecordLimit]
}

// NewConfigStore makes a config store; call Start before use.
func NewConfigStore(topic string, onDecodeError func(string, error), opts ...kgo.Opt) (*ConfigStore, error) {
	s := &ConfigStore{State: NewConfigState(), Loggers: NewLoggerLevels(), onDecodeError: onDecodeError}
	log, err := kafkalog.New(topic, s.gated(s.applyRecord), opts...)
	if err != nil {
		return nil, err
	}
	s.topic, s.log = topic, log
	return s, nil
}

func (s *ConfigStore) applyRecord(r *kgo.Record) {
	if string(r.Key) == recordsig.MarkerKey {
		s.gate.Mark(r) // where signing began; no record of Kafka Connect's
		return
	}
	rec, err := records.DecodeConfig(string(r.Key), r.Value)
	if err != nil {
		if s.onDecodeError != nil {
			s.onDecodeError(string(r.Key), err)
		}
		return
	}
	if rec.Kind == records.KindLoggerLevel {
		s.Loggers.Apply(rec)
		if !rec.Tombstone && s.onLoggerLevel != nil {
			s.onLoggerLevel(rec.Logger, rec.Level)
		}
		return
	}
	s.State.ApplyAt(rec, r.Timestamp)
}

// OnLoggerLevel has fn called with every cluster-wide log level read, in
// the topic's order, before the record counts as applied: a read after a
// write (or after ReadToEnd) finds the level set. Call it before Start.
func (s *ConfigStore) OnLoggerLevel(fn func(namespace, level string)) { s.onLoggerLevel = fn }

// Start follows the topic and returns once it has read to its end.
func (s *ConfigStore) Start(ctx context.Context) error {
	s.log.Start()
	return s.log.ReadToEnd(ctx)
}

// Close stops following.
func (s *ConfigStore) Close() { s.log.Close() }

// StatusStore follows the status topic into a StatusState.
type StatusStore struct {
	follower
	State *StatusState
}

// NewStatusStore makes a status store; call Start before use.
func NewStatusStore(topic string, opts ...kgo.Opt) (*StatusStore, error) {
	s := &StatusStore{State: NewStatusState()}
	log, err := kafkalog.New(topic, s.gated(s.applyRecord), opts...)
	if err != nil {
		return nil, err
	}
	s.topic, s.log = topic, log
	return s, nil
}

func (s *StatusStore) applyRecord(r *kgo.Record) {
	rec, err := records.DecodeStatus(string(r.Key), r.Value)
	if err != nil {
		return
	}
	s.State.ApplyAt(rec, r.Timestamp)
}

// Write appends status records in one transaction and waits until they
// are applied.
func (s *StatusStore) Write(ctx context.Context, recs ...records.Record) error {
	return s.write(ctx, recs...)
}

// Start follows the topic and returns once it has read to its end.
func (s *StatusStore) Start(ctx context.Context) error {
	s.log.Start()
	return s.log.ReadToEnd(ctx)
}

// Close stops following.
func (s *StatusStore) Close() { s.log.Close() }
