package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluice-io/sluice/connect"
)

// HeartbeatPrefix is the prefix of the logical decoding messages the
// connector emits to move its slot while the captured tables are idle. They
// are never change events; a Debezium connector taking over should list it
// in message.prefix.exclude.list.
const HeartbeatPrefix = "__sluice_heartbeat"

// streamer reads the slot through pgoutput and turns its messages into
// records. One goroutine runs it (run); the task's Poll takes its records
// from out, whose bound bounds memory for any transaction size: pgoutput
// sends a transaction message by message, and the reader waits for Poll.
type streamer struct {
	cfg   Config
	conn  *pgconn.PgConn // the replication session
	cat   *catalog       // a regular session's catalog, for relations
	rec   *records
	log   *slog.Logger
	start position
	out   chan []connect.SourceRecord
	// flush is the LSN the task's offsets made durable: the status
	// updates report it, and the server recycles the WAL before it.
	flush atomic.Uint64
	// received is the last LSN read from the server (for status updates).
	received atomic.Uint64

	relations map[uint32]*relation
	tx        txState
	skipping  skipState
	// last is the position of the last event read, which a heartbeat
	// record carries.
	last     position
	lastBeat time.Time
}

// relation is a table as pgoutput describes it, with the captured table it
// maps to (nil: not captured).
type relation struct {
	msg   *pglogrepl.RelationMessage
	table *Table
	// cols maps the relation's columns to the table's (-1: not captured).
	cols []int
}

// txState is the transaction being read.
type txState struct {
	xid        uint32
	finalLSN   pglogrepl.LSN
	commitTime time.Time
	open       bool
	// lastCommit is the end LSN of the last transaction read whole.
	lastCommit pglogrepl.LSN
}

// skipState is what resuming skips: transactions that ended at or before
// the stored commit position, and, of the transaction the stored position
// is in (its txId), the events at or before the stored event.
type skipState struct {
	commit pglogrepl.LSN
	txID   int64
	hasTx  bool
	proc   pglogrepl.LSN
}

func newStreamer(cfg Config, conn *pgconn.PgConn, cat *catalog, rec *records, log *slog.Logger, start position, out chan []connect.SourceRecord) *streamer {
	s := &streamer{cfg: cfg, conn: conn, cat: cat, rec: rec, log: log, start: start, last: start,
		out: out, relations: map[uint32]*relation{}}
	s.tx.lastCommit = start.Commit
	s.skipping = skipState{commit: start.Commit, txID: start.TxID, hasTx: start.HasTxID && start.Snapshot == "", proc: start.Proc}
	return s
}

// startLSN is where replication starts: the stored commit position (the
// server sends every transaction that ends after it), else the stored
// event's.
func (s *streamer) startLSN() pglogrepl.LSN {
	if s.start.Commit != 0 {
		return s.start.Commit
	}
	return s.start.LSN
}

// run streams until ctx ends or the stream fails; the error says why.
func (s *streamer) run(ctx context.Context) error {
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(s.cfg.Publication), "messages 'true'"}
	if err := pglogrepl.StartReplication(ctx, s.conn, s.cfg.Slot, s.startLSN(), pglogrepl.StartReplicationOptions{PluginArgs: args}); err != nil {
		return fmt.Errorf("start replication from slot %s at %s: %w", s.cfg.Slot, s.startLSN(), err)
	}
	s.log.Info("streaming from the slot", "slot", s.cfg.Slot, "lsn", s.startLSN().String())
	interval := s.cfg.StatusInterval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	next := time.Now().Add(interval)
	s.lastBeat = time.Now()
	for {
		if time.Now().After(next) {
			if err := s.status(ctx, false); err != nil {
				return err
			}
			next = time.Now().Add(interval)
		}
		if err := s.beat(ctx); err != nil {
			return err
		}
		deadline := next
		if s.cfg.Heartbeat > 0 && s.lastBeat.Add(s.cfg.Heartbeat).Before(deadline) {
			deadline = s.lastBeat.Add(s.cfg.Heartbeat)
		}
		rctx, cancel := context.WithDeadline(ctx, deadline)
		msg, err := s.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				continue
			}
			return fmt.Errorf("read the replication stream: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("replication stream: %w", pgconn.ErrorResponseToPgError(m))
		case *pgproto3.CopyData:
			if err := s.copyData(ctx, m.Data); err != nil {
				return err
			}
		}
	}
}

// beat emits Debezium's heartbeat record every heartbeat.interval.ms, with
// the position of the last event read.
func (s *streamer) beat(ctx context.Context) error {
	if s.cfg.Heartbeat <= 0 || time.Since(s.lastBeat) < s.cfg.Heartbeat {
		return nil
	}
	s.lastBeat = time.Now()
	if s.last.LSN == 0 {
		return nil
	}
	recs, err := s.rec.heartbeat(s.last)
	if err != nil {
		return err
	}
	select {
	case s.out <- recs:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// status sends the standby status update: the flushed LSN is what the
// offsets made durable, never more.
func (s *streamer) status(ctx context.Context, reply bool) error {
	flushed := pglogrepl.LSN(s.flush.Load())
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pglogrepl.LSN(s.received.Load()), WALFlushPosition: flushed, WALApplyPosition: flushed,
		ClientTime: time.Now(), ReplyRequested: reply,
	})
	if err != nil {
		return fmt.Errorf("send the replication status: %w", err)
	}
	return nil
}

// copyData handles one message of the stream.
func (s *streamer) copyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("parse a keepalive: %w", err)
		}
		if ka.ReplyRequested {
			return s.status(ctx, false)
		}
		return nil
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("parse WAL data: %w", err)
		}
		if uint64(x.WALStart) > s.received.Load() {
			s.received.Store(uint64(x.WALStart))
		}
		m, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			return fmt.Errorf("decode pgoutput at %s: %w", x.WALStart, err)
		}
		recs, err := s.message(ctx, x.WALStart, m)
		if err != nil {
			return fmt.Errorf("at %s: %w", x.WALStart, err)
		}
		if len(recs) == 0 {
			return nil
		}
		select {
		case s.out <- recs:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// message turns one pgoutput message at lsn into records.
func (s *streamer) message(ctx context.Context, lsn pglogrepl.LSN, m pglogrepl.Message) ([]connect.SourceRecord, error) {
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		return nil, s.relation(ctx, m)
	case *pglogrepl.BeginMessage:
		s.tx = txState{xid: m.Xid, finalLSN: m.FinalLSN, commitTime: m.CommitTime, open: true, lastCommit: s.tx.lastCommit}
		if s.skipTx() {
			return nil, nil
		}
		return s.rec.txBegin(s.pos(lsn, "BEGIN"))
	case *pglogrepl.CommitMessage:
		skipped := s.skipTx()
		s.tx.open = false
		s.tx.lastCommit = m.TransactionEndLSN
		if skipped {
			return nil, nil
		}
		return s.rec.txEnd(s.pos(lsn, "COMMIT"))
	case *pglogrepl.InsertMessage:
		return s.change(lsn, m.RelationID, "INSERT", nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return s.change(lsn, m.RelationID, "UPDATE", m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return s.change(lsn, m.RelationID, "DELETE", m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		if s.skipEvent(lsn) || s.cfg.Skipped["t"] {
			return nil, nil
		}
		var out []connect.SourceRecord
		for _, id := range m.RelationIDs {
			rel := s.relations[id]
			if rel == nil || rel.table == nil {
				continue
			}
			recs, err := s.rec.truncate(rel.table, s.pos(lsn, "TRUNCATE"))
			if err != nil {
				return nil, err
			}
			out = append(out, recs...)
		}
		return out, nil
	case *pglogrepl.LogicalDecodingMessage:
		return s.logicalMessage(lsn, m)
	}
	return nil, nil // origin, type: nothing to emit
}

// logicalMessage handles a logical decoding message: the connector's own
// heartbeats move the position (a dropped record carries it), the others
// are emitted as Debezium emits them unless the prefix filters drop them.
func (s *streamer) logicalMessage(lsn pglogrepl.LSN, m *pglogrepl.LogicalDecodingMessage) ([]connect.SourceRecord, error) {
	p := s.pos(lsn, "MESSAGE")
	if !m.Transactional {
		// Not followed by a commit: it is a position of its own.
		p.Commit, p.Proc = lsn, lsn
	}
	if m.Prefix == HeartbeatPrefix {
		if s.tx.open {
			return nil, nil // only a message between transactions is a safe position
		}
		return []connect.SourceRecord{{SourcePartition: s.rec.partition(), SourceOffset: p.offset(), Dropped: true}}, nil
	}
	if s.skipEvent(lsn) || !pick(s.cfg.MessagesInclude, s.cfg.MessagesExclude, m.Prefix) {
		return nil, nil
	}
	return s.rec.message(m.Transactional, m.Prefix, m.Content, p)
}

// pos is the position of an event at lsn of the open transaction.
func (s *streamer) pos(lsn pglogrepl.LSN, kind string) position {
	s.last = position{LSN: lsn, Proc: lsn, Commit: s.tx.lastCommit, TxID: int64(s.tx.xid), HasTxID: s.tx.xid != 0,
		Time: s.tx.commitTime, MessageType: kind}
	return s.last
}

// skipTx reports whether the open transaction was read whole before the
// stored position.
func (s *streamer) skipTx() bool {
	return s.skipping.commit != 0 && s.tx.open && s.tx.finalLSN != 0 && s.tx.finalLSN < s.skipping.commit
}

// skipEvent reports whether the event at lsn was emitted before the
// restart: in a transaction read whole, or the stored transaction's events
// up to the stored one.
func (s *streamer) skipEvent(lsn pglogrepl.LSN) bool {
	if s.skipTx() {
		return true
	}
	return s.skipping.hasTx && s.tx.open && int64(s.tx.xid) == s.skipping.txID && lsn <= s.skipping.proc
}

// relation records a relation; a table the catalog had not read, or whose
// columns changed, is read again.
func (s *streamer) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	rel := &relation{msg: m}
	s.relations[m.RelationID] = rel
	if !s.cfg.Tables.Table(m.Namespace, m.RelationName) {
		return nil
	}
	t, err := s.cat.table(ctx, s.cfg, m.RelationID, m.Namespace, m.RelationName)
	if err != nil {
		return err
	}
	t.Identity = m.ReplicaIdentity
	rel.table = t
	rel.cols = make([]int, len(m.Columns))
	for i, c := range m.Columns {
		rel.cols[i] = -1
		for j, tc := range t.Columns {
			if tc.Name == c.Name {
				rel.cols[i] = j
			}
		}
	}
	return s.rec.register(t)
}

// change emits an insert, update or delete.
func (s *streamer) change(lsn pglogrepl.LSN, relID uint32, kind string, oldTuple, newTuple *pglogrepl.TupleData) ([]connect.SourceRecord, error) {
	rel := s.relations[relID]
	if rel == nil {
		return nil, fmt.Errorf("a change of relation %d, which the stream never described", relID)
	}
	if rel.table == nil || s.skipEvent(lsn) {
		return nil, nil
	}
	op := map[string]string{"INSERT": "c", "UPDATE": "u", "DELETE": "d"}[kind]
	if s.cfg.Skipped[op] {
		return nil, nil
	}
	before, err := s.row(rel, oldTuple)
	if err != nil {
		return nil, err
	}
	after, err := s.row(rel, newTuple)
	if err != nil {
		return nil, err
	}
	if before != nil && after != nil {
		// An unchanged TOASTed value is not sent again; under REPLICA
		// IDENTITY FULL the old row carries it, and Debezium takes it
		// from there.
		for j, toast := range after.toast {
			if toast && before.present[j] && !before.toast[j] {
				after.values[j] = before.values[j]
			}
		}
	}
	return s.rec.change(rel.table, op, before, after, s.pos(lsn, kind))
}

// row converts a tuple to the table's captured columns' values (nil when
// there is no tuple). A column the tuple does not carry (a key-only old
// tuple) is nil; an unchanged TOASTed one is Debezium's placeholder.
func (s *streamer) row(rel *relation, tuple *pglogrepl.TupleData) (*row, error) {
	if tuple == nil {
		return nil, nil
	}
	n := len(rel.table.Columns)
	r := &row{values: make([]any, n), present: make([]bool, n), toast: make([]bool, n)}
	for i, col := range tuple.Columns {
		if i >= len(rel.cols) || rel.cols[i] < 0 {
			continue
		}
		j := rel.cols[i]
		c := rel.table.Columns[j]
		var text *string
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			v, err := s.rec.unavailable(j, rel.table)
			if err != nil {
				return nil, err
			}
			r.values[j] = v
			r.present[j], r.toast[j] = true, true
			continue
		case pglogrepl.TupleDataTypeText:
			t := string(col.Data)
			text = &t
		default:
			return nil, fmt.Errorf("column %s of %s: pgoutput sent a value in format %q; the connector reads text", c.Name, rel.table.ID(), col.DataType)
		}
		v, err := s.rec.value(rel.table, j, text, false)
		if err != nil {
			return nil, err
		}
		r.values[j], r.present[j] = v, true
	}
	return r, nil
}

// row is one row's values in the table's column order; present says which
// the tuple carried, toast which of those it said were unchanged TOASTed
// values (whose placeholder values holds).
type row struct {
	values  []any
	present []bool
	toast   []bool
}
