package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/postgres/values"
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
	out   chan item
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
	// fix is the last change event's unchanged TOASTed values to read
	// back, handed to Poll with its records.
	fix *toastFix
	// changed are the tables described anew with other columns, to
	// announce before the change that came with the description.
	changed []schemaChange
	// inc runs incremental snapshots (nil: no signal table).
	inc *incremental
}

// relation is a table as pgoutput describes it, with the captured table it
// maps to (nil: not captured).
type relation struct {
	msg   *pglogrepl.RelationMessage
	table *Table
	// cols maps the relation's columns to the table's (-1: not captured).
	cols []int
	// desc is its captured columns as described, when schema changes are
	// announced.
	desc []columnDesc
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
	// begin says the stored event was its transaction's BEGIN, whose LSN
	// is its first change's: that change was not processed yet.
	begin bool
}

func newStreamer(cfg Config, conn *pgconn.PgConn, cat *catalog, rec *records, log *slog.Logger, start position, out chan item) *streamer {
	s := &streamer{cfg: cfg, conn: conn, cat: cat, rec: rec, log: log, start: start, last: start,
		out: out, relations: map[uint32]*relation{}}
	s.tx.lastCommit = start.Commit
	s.skipping = skipState{commit: start.Commit, txID: start.TxID, hasTx: start.HasTxID && start.streaming(), proc: start.Proc,
		begin: start.MessageType == "BEGIN"}
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
	for attempt := 0; ; attempt++ {
		err := pglogrepl.StartReplication(ctx, s.conn, s.cfg.Slot, s.startLSN(), pglogrepl.StartReplicationOptions{PluginArgs: args})
		if err == nil {
			break
		}
		// The slot of a task that died is held by its walsender until the
		// server notices (wal_sender_timeout): wait for it, as Debezium
		// does, slot.max.retries times.
		if !slotInUse(err) || attempt >= s.cfg.SlotRetries {
			return fmt.Errorf("start replication from slot %s at %s: %w", s.cfg.Slot, s.startLSN(), err)
		}
		s.log.Info("the slot is still in use; waiting for it", "slot", s.cfg.Slot, "retry", attempt+1, "of", s.cfg.SlotRetries)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.cfg.SlotRetryDelay):
		}
	}
	s.log.Info("streaming from the slot", "slot", s.cfg.Slot, "lsn", s.startLSN().String())
	if s.inc != nil && s.inc.running() {
		// An incremental snapshot the task was taking when it stopped:
		// on from the chunk after the last key its offsets hold.
		s.log.Info("resuming the incremental snapshot", "table", s.inc.state.Tables[0].ID(), "rows", s.inc.state.Rows)
		if err := s.inc.readChunk(ctx); err != nil {
			return fmt.Errorf("incremental snapshot: %w", err)
		}
	}
	interval := s.statusInterval()
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
	case s.out <- item{recs: recs}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// status sends the standby status update: the flushed LSN is what the
// offsets made durable, never more.
func (s *streamer) status(ctx context.Context, reply bool) error {
	flushed := pglogrepl.LSN(s.flush.Load())
	written := pglogrepl.LSN(s.received.Load())
	if flushed == 0 {
		// Nothing is known durable yet. pglogrepl reports a zero flush
		// position as the written one, which would confirm what Kafka
		// does not hold: report nothing (the server ignores zeros).
		written = 0
	}
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: written, WALFlushPosition: flushed, WALApplyPosition: flushed,
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
		notes := s.announce(x.WALStart, m)
		recs, err := s.message(ctx, x.WALStart, m)
		if err != nil {
			return fmt.Errorf("at %s: %w", x.WALStart, err)
		}
		if notes != nil {
			recs = append(notes, recs...)
		}
		size := len(x.WALData)
		if s.inc != nil {
			size += s.inc.takeBytes() // a closed window's rows
		}
		return s.send(ctx, recs, size)
	}
	return nil
}

// send hands records to Poll, with the size of the message they came from. While Poll does not take them (Kafka slow or
// away) the server still hears from the connector at every status
// interval: a walsender that hears nothing for wal_sender_timeout ends the
// session. The last of the records is the position heartbeat records carry.
func (s *streamer) send(ctx context.Context, recs []connect.SourceRecord, bytes int) error {
	fix := s.fix
	s.fix = nil
	if len(recs) == 0 {
		return nil
	}
	if p, err := parsePosition(recs[len(recs)-1].SourceOffset); err == nil {
		s.last = p
	}
	tick := time.NewTicker(s.statusInterval())
	defer tick.Stop()
	for {
		select {
		case s.out <- item{recs: recs, bytes: bytes, fix: fix}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if err := s.status(ctx, false); err != nil {
				return err
			}
		}
	}
}

// statusInterval is status.update.interval.ms, 10 s when unset.
func (s *streamer) statusInterval() time.Duration {
	if s.cfg.StatusInterval <= 0 {
		return 10 * time.Second
	}
	return s.cfg.StatusInterval
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
		return s.change(ctx, lsn, m.RelationID, "INSERT", nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return s.change(ctx, lsn, m.RelationID, "UPDATE", m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return s.change(ctx, lsn, m.RelationID, "DELETE", m.OldTuple, nil)
	case *pglogrepl.TruncateMessage:
		if s.skipEvent(lsn) || s.cfg.Skipped["t"] {
			return nil, nil
		}
		var out []connect.SourceRecord
		for i, id := range m.RelationIDs {
			rel := s.relations[id]
			if rel == nil || rel.table == nil {
				continue
			}
			p := s.pos(lsn, "TRUNCATE")
			if i < len(m.RelationIDs)-1 {
				// As Debezium: the message is processed completely only
				// with its last table's event.
				p.Proc = s.last.Proc
			}
			recs, err := s.rec.truncate(rel.table, p)
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
		// Not followed by a commit, it is a commit position of its own,
		// outside any transaction (as Debezium's commitMessage has it).
		if s.tx.open {
			return nil, nil // pgoutput never sends one inside a transaction; be safe
		}
		p.Commit, p.Proc, p.HasTxID, p.TxID = lsn, lsn, false, 0
		s.tx.lastCommit = lsn
	}
	if m.Prefix == HeartbeatPrefix {
		if m.Transactional {
			return nil, nil // only a message between transactions is a safe position
		}
		return s.rec.dropped(p), nil
	}
	if s.skipEvent(lsn) || !pick(s.cfg.MessagesInclude, s.cfg.MessagesExclude, m.Prefix) {
		return nil, nil
	}
	// The content is a slice of the session's receive buffer, which the
	// next message overwrites: the record keeps a copy.
	return s.rec.message(m.Transactional, m.Prefix, bytes.Clone(m.Content), p)
}

// pos is the position of an event at lsn of the open transaction.
func (s *streamer) pos(lsn pglogrepl.LSN, kind string) position {
	return position{LSN: lsn, Proc: lsn, Commit: s.tx.lastCommit, TxID: int64(s.tx.xid), HasTxID: s.tx.xid != 0,
		Time: s.tx.commitTime, MessageType: kind}
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
	if !s.skipping.hasTx || !s.tx.open || int64(s.tx.xid) != s.skipping.txID {
		return false
	}
	return lsn < s.skipping.proc || lsn == s.skipping.proc && !s.skipping.begin
}

// relation records a relation. Its columns are the message's — the table
// as it was when the changes that follow were written, which the catalog
// may no longer be — typed from the message's type and modifier; the
// catalog gives what the message does not: the primary key, NOT NULL and
// defaults, of the columns it still has.
//
// With sluice.schema.change.topic set, a description whose captured columns
// differ from the one before is announced there (schemachange.go).
func (s *streamer) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	rel := &relation{msg: m}
	prev := s.relations[m.RelationID]
	s.relations[m.RelationID] = rel
	if !s.cfg.Tables.Table(m.Namespace, m.RelationName) {
		return nil
	}
	if err := s.register(ctx, rel); err != nil {
		return err
	}
	return s.compare(ctx, prev, rel)
}

// register builds the captured table a relation message describes, and its
// records' shapes.
func (s *streamer) register(ctx context.Context, rel *relation) error {
	m := rel.msg
	now, err := s.cat.table(ctx, s.cfg, m.RelationID, m.Namespace, m.RelationName)
	if err != nil {
		return err
	}
	t := &Table{OID: m.RelationID, Schema: m.Namespace, Name: m.RelationName, Identity: m.ReplicaIdentity, Excluded: map[string]bool{}}
	isKey := map[string]bool{}
	for _, k := range now.Key {
		isKey[now.Columns[k].Name] = true
	}
	var keyNames []string
	for _, c := range m.Columns {
		if !s.cfg.Tables.Column(t.Schema, t.Name, c.Name) {
			if !isKey[c.Name] {
				continue
			}
			t.Excluded[c.Name] = true
		}
		typ, err := s.cat.typ(ctx, c.DataType)
		if err != nil {
			return fmt.Errorf("column %s of %s: %w", c.Name, t.ID(), err)
		}
		col := values.Column{Name: c.Name, Type: *typ, Optional: true}
		col.Type.Modifier = c.TypeModifier
		for _, nc := range now.Columns {
			if nc.Name == c.Name && nc.Type.OID == c.DataType {
				col.Optional, col.Default = nc.Optional, nc.Default
			}
		}
		t.Columns = append(t.Columns, col)
		if isKey[c.Name] {
			keyNames = append(keyNames, c.Name)
		}
	}
	// The key in the primary key's order.
	for _, k := range now.Key {
		for _, n := range keyNames {
			if n == now.Columns[k].Name {
				t.Key = append(t.Key, slices.IndexFunc(t.Columns, func(c values.Column) bool { return c.Name == n }))
			}
		}
	}
	if err := s.rec.register(t); err != nil {
		return err
	}
	// register may have left out columns Debezium leaves out: map the
	// message's columns to the registered ones by name.
	rel.table = t
	rel.cols = make([]int, len(m.Columns))
	for i, c := range m.Columns {
		rel.cols[i] = slices.IndexFunc(t.Columns, func(tc values.Column) bool { return tc.Name == c.Name })
	}
	return nil
}

// change emits an insert, update or delete. A row inserted into the
// signal table is a signal, acted on before its own event is emitted (as
// Debezium does): the records it makes — a closed window's rows — come
// first, each with an offset that leaves the signal's event unprocessed.
func (s *streamer) change(ctx context.Context, lsn pglogrepl.LSN, relID uint32, kind string, oldTuple, newTuple *pglogrepl.TupleData) ([]connect.SourceRecord, error) {
	rel := s.relations[relID]
	if rel == nil {
		return nil, fmt.Errorf("a change of relation %d, which the stream never described", relID)
	}
	if rel.table == nil || s.skipEvent(lsn) {
		return nil, nil
	}
	var pre []connect.SourceRecord
	if s.inc != nil && kind == "INSERT" && s.isSignalTable(rel.table) {
		if sg, ok := signalOf(rel, newTuple); ok {
			p := s.pos(lsn, kind)
			p.Proc = s.last.Proc
			var err error
			if pre, err = s.inc.signal(ctx, sg, p); err != nil {
				return nil, fmt.Errorf("signal %s (%s): %w", sg.ID, sg.Type, err)
			}
		}
	}
	op := map[string]string{"INSERT": "c", "UPDATE": "u", "DELETE": "d"}[kind]
	if s.cfg.Skipped[op] {
		return pre, nil
	}
	if s.inc != nil {
		s.inc.changed(rel.table, s.tx.xid, tupleKey(rel, oldTuple), tupleKey(rel, newTuple))
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
		// from there — not from an old key tuple (a key changed under
		// DEFAULT), whose other columns are nulls: those keep the
		// placeholder, as Debezium's keep it (it takes only a non-null
		// old value).
		for j, toast := range after.toast {
			if toast && before.present[j] && !before.toast[j] && before.values[j] != nil {
				after.values[j], after.toast[j] = before.values[j], false
			}
		}
	}
	recs, err := s.rec.change(rel.table, op, before, after, s.pos(lsn, kind))
	if err != nil {
		return nil, err
	}
	s.fix = s.toastFix(rel, newTuple, after, recs)
	return append(pre, recs...), nil
}

// isSignalTable reports whether t is the signal table.
func (s *streamer) isSignalTable(t *Table) bool {
	return s.cfg.Signals != nil && t.Schema == s.cfg.Signals.Schema && t.Name == s.cfg.Signals.Name
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

// slotInUse reports whether err says another session holds the slot
// (SQLSTATE 55006, object_in_use).
func slotInUse(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55006"
}
