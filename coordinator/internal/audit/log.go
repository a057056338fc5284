package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/recordsig"
	"github.com/sluice-io/sluice/shared/textcut"
)

// The defaults of Config.
const (
	DefaultTopic     = "sluice-audit"
	DefaultRetention = 90 * 24 * time.Hour
	DefaultTimeout   = 2 * time.Second
)

// The defaults of Config.MaxQueued and Config.DeliveryTimeout.
const (
	defaultMaxQueued       = 10000
	defaultDeliveryTimeout = 2 * time.Minute
)

// maxFieldBytes bounds each text field of a record that is too large
// without its configs.
const maxFieldBytes = 4096

// maxRecordBytes is the largest record value written with configs: below
// the producer's and the broker's default 1 MB, so that the record of a
// write with large configs still fits once they are omitted.
const maxRecordBytes = 900_000

// warnEvery throttles the warning about unwritten records.
const warnEvery = 10 * time.Second

// Config configures a Log.
type Config struct {
	// Topic is the audit topic (default DefaultTopic).
	Topic string
	// Retention is the topic's retention.ms when Sluice creates it
	// (default DefaultRetention).
	Retention time.Duration
	// Timeout bounds how long a write waits for the broker to take its
	// record before the answer goes out anyway (default DefaultTimeout).
	Timeout time.Duration
	// KafkaOpts are the coordinator's Kafka client options.
	KafkaOpts []kgo.Opt
	// Logger is where unwritten records are reported.
	Logger *slog.Logger
	// Gate signs the records written and keeps reads from showing one no
	// coordinator wrote (nil: neither).
	Gate *recordsig.Gate
	// MaxQueued and DeliveryTimeout bound the records waiting for the
	// broker: how many (default 10000; past it a record is not queued but
	// counted as unwritten, so a broker gone for long cannot make the
	// coordinator's memory grow) and for how long each is retried
	// (default 2 minutes) before it counts as unwritten.
	MaxQueued       int
	DeliveryTimeout time.Duration
}

// Log appends audit records to the audit topic and reads them back.
type Log struct {
	cfg       Config
	cl        *kgo.Client
	unwritten atomic.Int64
	warn      *logthrottle.Limiter
}

// New makes a Log and its producer; it does not reach the broker yet.
func New(cfg Config) (*Log, error) {
	if cfg.Topic == "" {
		cfg.Topic = DefaultTopic
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = defaultMaxQueued
	}
	if cfg.DeliveryTimeout <= 0 {
		cfg.DeliveryTimeout = defaultDeliveryTimeout
	}
	opts := append([]kgo.Opt{}, cfg.KafkaOpts...)
	opts = append(opts,
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.MaxBufferedRecords(cfg.MaxQueued),
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		kgo.ProducerLinger(0),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("audit topic %s: new client: %w", cfg.Topic, err)
	}
	return &Log{cfg: cfg, cl: cl, warn: logthrottle.New(warnEvery)}, nil
}

// EnsureTopic creates the audit topic if it is missing: one partition, so
// that records keep the order they were written in, and retained for
// Config.Retention, never compacted (every record counts, not the last
// one per key). An existing topic is left as it is, with a warning if it
// is compacted: it would keep only the newest record of each connector.
func (l *Log) EnsureTopic(ctx context.Context) error {
	_, err := topicscan.EnsureTopic(ctx, kadm.NewClient(l.cl), l.cfg.Topic, l.cfg.Retention, l.cfg.Logger, "audit")
	return err
}

// Close flushes what is queued, for as long as ctx allows, and closes the
// producer.
func (l *Log) Close(ctx context.Context) {
	_ = l.cl.Flush(ctx)
	l.cl.Close()
}

// Unwritten counts the records that could not be written since New.
func (l *Log) Unwritten() int64 { return l.unwritten.Load() }

// Write appends rec to the topic and waits for the broker to take it, up
// to Config.Timeout. A record not taken by then stays queued and is
// delivered when the broker answers: the write it records is not held up
// longer. A record that cannot be queued or delivered is counted and
// logged, never retried past Config.DeliveryTimeout: Sluice keeps serving writes
// when the audit topic is unreachable rather than failing them.
func (l *Log) Write(rec api.AuditRecord) {
	value, rec, err := encode(rec)
	if err != nil {
		l.lost(rec, err)
		return
	}
	// The record's timestamp is when it is produced, at or after rec.Time,
	// so a seek by time (Read) never skips it; and the producer counts its
	// delivery timeout from it, which a write that took long must not use
	// up.
	r := &kgo.Record{Key: []byte(rec.Connector), Value: value}
	l.cfg.Gate.Key().Sign(l.cfg.Topic, r)
	done := make(chan struct{})
	l.cl.TryProduce(context.Background(), r, func(_ *kgo.Record, err error) {
		if err != nil {
			l.lost(rec, err)
		}
		close(done)
	})
	timer := time.NewTimer(l.cfg.Timeout)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		l.cfg.Logger.Debug("audit record not yet written; answering without waiting longer",
			"operation", rec.Operation, "connector", rec.Connector, "waited", l.cfg.Timeout)
	}
}

// encode is rec's value and key, sized to fit the topic: configs too large
// for one record are left out, and then every text field still longer than
// maxFieldBytes (a path or a name of a megabyte) is cut with a marker that
// gives its size. It returns the record as written, for a log line.
func encode(rec api.AuditRecord) ([]byte, api.AuditRecord, error) {
	value, err := json.Marshal(rec)
	if err != nil || len(value) <= maxRecordBytes {
		return value, rec, err
	}
	rec.ConfigsOmitted = true
	for _, s := range []**api.AuditState{&rec.Before, &rec.After} {
		if *s != nil {
			*s = &api.AuditState{TargetState: (*s).TargetState}
		}
	}
	for _, f := range []*string{&rec.Principal, &rec.Source, &rec.Coordinator, &rec.Operation, &rec.Method,
		&rec.Path, &rec.Query, &rec.Connector, &rec.Error} {
		*f = textcut.Cut(*f, maxFieldBytes)
	}
	value, err = json.Marshal(rec)
	return value, rec, err
}

// lost counts an unwritten record and warns about it, at most once per
// warnEvery: a broker that is gone loses every record, and the log must
// not drown in them.
func (l *Log) lost(rec api.AuditRecord, err error) {
	n := l.unwritten.Add(1)
	if !l.warn.Due("unwritten", time.Now()) {
		return
	}
	reason := err.Error()
	if errors.Is(err, kgo.ErrMaxBuffered) {
		reason = fmt.Sprintf("%d records are already waiting for the broker", l.cfg.MaxQueued)
	}
	l.cfg.Logger.Error("AUDIT RECORD LOST: a REST write could not be recorded in the audit topic",
		"topic", l.cfg.Topic, "operation", rec.Operation, "method", rec.Method, "path", rec.Path,
		"connector", rec.Connector, "principal", rec.Principal, "status", rec.Status,
		"reason", reason, "unwritten_since_start", n)
}
