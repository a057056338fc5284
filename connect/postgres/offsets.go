package postgres

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pglogrepl"
)

// The source partition and offset keys, as Debezium's PostgreSQL connector
// writes them: a Debezium connector's offsets are the native connector's,
// and the other way round.
const (
	PartitionKey = "server"

	keyLSN          = "lsn"
	keyLSNProc      = "lsn_proc"
	keyLSNCommit    = "lsn_commit"
	keyTxID         = "txId"
	keyTsUsec       = "ts_usec"
	keyMessageType  = "messageType"
	keyXmin         = "xmin"
	keySnapshot     = "snapshot"
	keyLastSnapshot = "last_snapshot_record"
	keySnapDone     = "snapshot_completed"
	// keyEventsAtLSN is lsn_events_processed, which Debezium 3.7 writes:
	// how many events of lsn_proc were processed. It is read, and kept.
	keyEventsAtLSN = "lsn_events_processed"
)

// position is where the connector is: what its offsets say.
type position struct {
	// LSN is the last event's; Proc the last completely processed one's;
	// Commit the end of the last transaction processed whole (0: none).
	LSN, Proc, Commit pglogrepl.LSN
	TxID              int64
	HasTxID           bool
	// Time is the commit time of the last event's transaction.
	Time        time.Time
	MessageType string
	// Snapshot is "" when no snapshot is running, else its kind ("INITIAL");
	// LastSnapshot marks the snapshot's last record and SnapshotDone a
	// completed one.
	Snapshot     string
	LastSnapshot bool
	SnapshotDone bool
	// EventsAtLSN is lsn_events_processed, kept as read.
	EventsAtLSN int64
}

// offset renders p as Debezium's offset map.
func (p position) offset() map[string]any {
	o := map[string]any{}
	if !p.Time.IsZero() {
		o[keyTsUsec] = p.Time.UnixMicro()
	}
	if p.HasTxID {
		o[keyTxID] = p.TxID
	}
	if p.LSN != 0 {
		o[keyLSN] = int64(p.LSN)
	}
	if p.Snapshot != "" {
		o[keySnapshot] = p.Snapshot
		o[keyLastSnapshot] = p.LastSnapshot
		o[keySnapDone] = p.SnapshotDone
	}
	if p.Proc != 0 {
		o[keyLSNProc] = int64(p.Proc)
	}
	if p.Commit != 0 {
		o[keyLSNCommit] = int64(p.Commit)
	}
	if p.MessageType != "" {
		o[keyMessageType] = p.MessageType
	}
	if p.EventsAtLSN > 0 {
		o[keyEventsAtLSN] = p.EventsAtLSN
	}
	return o
}

// parsePosition reads a stored offset, Debezium's or the native
// connector's: numbers may come back as any JSON number type, and the
// snapshot key as the older boolean or the newer kind name.
func parsePosition(o map[string]any) (position, error) {
	var p position
	var err error
	num := func(k string) (int64, bool) {
		v, ok := o[k]
		if !ok || v == nil || err != nil {
			return 0, false
		}
		n, e := toInt64(v)
		if e != nil {
			err = fmt.Errorf("offset key %s: %w", k, e)
			return 0, false
		}
		return n, true
	}
	if n, ok := num(keyLSN); ok {
		p.LSN = pglogrepl.LSN(n)
	}
	if n, ok := num(keyLSNProc); ok {
		p.Proc = pglogrepl.LSN(n)
	}
	if n, ok := num(keyLSNCommit); ok {
		p.Commit = pglogrepl.LSN(n)
	}
	if n, ok := num(keyTxID); ok {
		p.TxID, p.HasTxID = n, true
	}
	if n, ok := num(keyTsUsec); ok {
		p.Time = time.UnixMicro(n).UTC()
	}
	if n, ok := num(keyEventsAtLSN); ok {
		p.EventsAtLSN = n
	}
	if err != nil {
		return position{}, err
	}
	if s, ok := o[keyMessageType].(string); ok {
		p.MessageType = s
	}
	switch v := o[keySnapshot].(type) {
	case bool:
		if v {
			p.Snapshot = "INITIAL"
		}
	case string:
		if v != "" && v != "false" {
			p.Snapshot = v
		}
	case nil:
	default:
		return position{}, fmt.Errorf("offset key snapshot: %v is neither a boolean nor a snapshot kind", v)
	}
	p.LastSnapshot, _ = o[keyLastSnapshot].(bool)
	p.SnapshotDone, _ = o[keySnapDone].(bool)
	return p, nil
}

// streaming reports whether the offset is the stream's: an incremental
// snapshot's reads are made at the stream's position.
func (p position) streaming() bool { return p.Snapshot == "" || p.Snapshot == snapshotIncremental }

// snapshotUnfinished reports whether the offset was written by a snapshot
// that did not complete: Debezium then takes the snapshot again, and so
// does the native connector.
func (p position) snapshotUnfinished() bool {
	return p.Snapshot == "INITIAL" && !p.LastSnapshot && !p.SnapshotDone
}

// toInt64 reads a whole JSON number as it may come back from the offset
// store (float64 from encoding/json, or json.Number, or an int type).
func toInt64(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case float64:
		if n != math.Trunc(n) {
			return 0, fmt.Errorf("%v is not a whole number", n)
		}
		return int64(n), nil
	case interface{ Int64() (int64, error) }:
		return n.Int64()
	}
	return 0, fmt.Errorf("%v (%T) is not a number", v, v)
}

// incrementalKeys are the offset keys of a Debezium incremental snapshot in
// progress (its position in the table being read, the tables left).
var incrementalKeys = []string{"incremental_snapshot_primary_key", "incremental_snapshot_maximum_key",
	"incremental_snapshot_collections", "incremental_snapshot_correlation_id"}

// refuseIncremental refuses to take over a Debezium connector whose offset
// holds an incremental snapshot in progress: the native connector cannot
// go on with it, and going on without it would leave the snapshot half
// done without a word.
func refuseIncremental(stored map[string]any) error {
	if kind, _ := stored[keySnapshot].(string); kind == "BLOCKING" && stored[keySnapDone] != true && stored[keyLastSnapshot] != true {
		return errors.New("the connector's offset holds a Debezium blocking snapshot in progress: the native connector cannot continue it. " +
			"Let it finish under Debezium's class, then change the class")
	}
	for _, k := range incrementalKeys {
		if v, ok := stored[k]; ok && v != nil && v != "" {
			return fmt.Errorf("the connector's offset holds a Debezium incremental snapshot in progress (%s): the native connector cannot continue it. "+
				"Let it finish under Debezium's class (or stop it with a stop-snapshot signal), then change the class", k)
		}
	}
	return nil
}
