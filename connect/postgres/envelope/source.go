package envelope

import (
	"strconv"
	"strings"
	"time"
)

// Snapshot is source.snapshot: whether and where in a snapshot an event
// was read (Debezium's SnapshotRecord, lower case).
type Snapshot string

// The source.snapshot values.
const (
	// SnapshotFalse (or "") marks a streamed event. It is left null in the
	// source block, where the schema's default "false" stands for it.
	SnapshotFalse Snapshot = "false"
	// SnapshotTrue marks a snapshot event that is neither first nor last.
	SnapshotTrue Snapshot = "true"
	// SnapshotFirst marks the first event of the whole snapshot.
	SnapshotFirst Snapshot = "first"
	// SnapshotFirstInDataCollection marks the first event of a table that
	// is not the snapshot's first.
	SnapshotFirstInDataCollection Snapshot = "first_in_data_collection"
	// SnapshotLastInDataCollection marks the last event of a table that is
	// not the snapshot's last.
	SnapshotLastInDataCollection Snapshot = "last_in_data_collection"
	// SnapshotLast marks the last event of the whole snapshot.
	SnapshotLast Snapshot = "last"
	// SnapshotIncremental marks an event read by an incremental snapshot;
	// its source block has no txId, lsn or xmin.
	SnapshotIncremental Snapshot = "incremental"
)

// Source is what the connector knows of an event's position, from which
// the source block is built. The block's version, connector, name and db
// come from the Config, its schema and table from the event's Table (both
// empty for a logical decoding message).
type Source struct {
	// Commit is the commit time of the event's transaction, with PostgreSQL's
	// microsecond precision (for a snapshot event: when the snapshot read
	// it). ts_ms, ts_us and ts_ns are derived from it as Java's Instant
	// does; the zero time stands for "unknown", for which Debezium takes
	// the current time. Debezium keeps the last commit time for an event
	// that has none (a non-transactional logical decoding message): pass
	// it.
	Commit time.Time
	// Snapshot marks snapshot events; "" is SnapshotFalse.
	Snapshot Snapshot
	// TxID, LSN and Xmin are the event's transaction id, WAL position and
	// the slot's xmin (Debezium reads it only with xmin.fetch.interval.ms);
	// nil when unknown.
	TxID, LSN, Xmin *int64
	// LastCommitLSN is the LSN of the last transaction committed before
	// this event (Debezium's lastCommitLsn): the first element of sequence.
	LastCommitLSN *int64
	// Origin and OriginLSN are the replication origin of the transaction
	// (pgoutput's Origin message), for changes a subscriber applied.
	Origin    string
	OriginLSN *int64
}

// Int64 returns a pointer to v, for Source's optional numbers.
func Int64(v int64) *int64 { return &v }

// sourceBlock builds the source struct for an event of table schema.table.
func (e *Emitter) sourceBlock(src Source, schema, table string) map[string]any {
	ts := src.Commit
	if ts.IsZero() {
		ts = e.now()
	}
	m := map[string]any{
		"version":    e.cfg.ConnectorVersion,
		"connector":  "postgresql",
		"name":       e.cfg.TopicPrefix,
		"ts_ms":      ts.UnixMilli(),
		"snapshot":   nil,
		"db":         e.cfg.Database,
		"sequence":   sequence(src.LastCommitLSN, src.LSN),
		"ts_us":      ts.UnixMicro(),
		"ts_ns":      epochNanos(ts),
		"schema":     schema,
		"table":      table,
		"txId":       nil,
		"lsn":        nil,
		"xmin":       nil,
		"origin":     nil,
		"origin_lsn": nil,
	}
	if src.Snapshot != "" && src.Snapshot != SnapshotFalse {
		m["snapshot"] = string(src.Snapshot)
	}
	// An incremental snapshot's events have no position of their own.
	if src.Snapshot != SnapshotIncremental {
		setInt64(m, "txId", src.TxID)
		setInt64(m, "lsn", src.LSN)
		setInt64(m, "xmin", src.Xmin)
	}
	if src.Origin != "" {
		m["origin"] = src.Origin
	}
	setInt64(m, "origin_lsn", src.OriginLSN)
	return m
}

func setInt64(m map[string]any, k string, v *int64) {
	if v != nil {
		m[k] = *v
	}
}

// epochNanos is Instant's epochSecond·10^9 + nano. Go's UnixNano has the
// same value but is undefined beyond the years 1678–2262; this wraps as
// Java's long arithmetic does.
func epochNanos(t time.Time) int64 {
	return t.Unix()*1_000_000_000 + int64(t.Nanosecond())
}

// sequence is Debezium's source.sequence for PostgreSQL: a JSON array of
// the last commit LSN and the event's LSN as decimal strings, null where
// unknown, as Jackson writes a List<String>: ["123","456"], [null,"456"].
func sequence(lastCommit, lsn *int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range []*int64{lastCommit, lsn} {
		if i > 0 {
			b.WriteByte(',')
		}
		if v == nil {
			b.WriteString("null")
			continue
		}
		b.WriteByte('"')
		b.WriteString(strconv.FormatInt(*v, 10))
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

// SnapshotMarker is the source.snapshot of a snapshot read, from where it
// is, as Debezium resolves it: last of the snapshot, else first of it, else
// last of its table, else first of its table, else true. Debezium knows the
// snapshot's first and last only when it reads one table at a time
// (snapshot.max.threads=1); in any case it marks the record it emits last
// "last" once the snapshot is done (SetSnapshot), even when that record's
// table was not the last one read.
func SnapshotMarker(firstInSnapshot, lastInSnapshot, firstInTable, lastInTable bool) Snapshot {
	switch {
	case lastInSnapshot:
		return SnapshotLast
	case firstInSnapshot:
		return SnapshotFirst
	case lastInTable:
		return SnapshotLastInDataCollection
	case firstInTable:
		return SnapshotFirstInDataCollection
	}
	return SnapshotTrue
}
