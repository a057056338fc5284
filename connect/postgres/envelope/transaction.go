package envelope

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/javahash"
)

// Transaction statuses, the value's status field.
const (
	TxBegin = "BEGIN"
	TxEnd   = "END"
)

// Offset keys of the transaction in progress, as Debezium stores them in
// every streamed record's offset: the transaction's id, and for each data
// collection the number of its events so far.
const (
	OffsetTransactionID          = "transaction_id"
	OffsetTransactionOrderPrefix = "transaction_data_collection_order_"
)

// messageCollectionPrefix is what Debezium counts a logical decoding
// message under: the text of a fresh Java object, so each message is a
// data collection of its own whose name ends with an identity hash.
const messageCollectionPrefix = "io.debezium.connector.postgresql.LogicalDecodingMessageMonitor$LogicalDecodingMessageId@"

// txState is the transaction in progress (Debezium's TransactionContext).
type txState struct {
	id     string // the transaction id; "" when none is in progress
	total  int64
	names  []string // the data collections, in the order first counted
	counts map[string]int64
	// capacity is the size of the table of Debezium's per-collection
	// HashMap, which a clear keeps: END lists collections in its order.
	capacity int
}

func (s *txState) inProgress() bool { return s.id != "" }

// begin starts transaction id, forgetting any other.
func (s *txState) begin(id string) {
	s.reset()
	s.id = id
}

// reset ends the transaction, keeping the grown table size.
func (s *txState) reset() {
	if len(s.names) > 0 {
		_, s.capacity = javahash.OrderFrom(s.capacity, s.hashes())
	}
	s.id, s.total, s.names = "", 0, nil
	clear(s.counts)
}

func (s *txState) hashes() []int32 {
	h := make([]int32, len(s.names))
	for i, n := range s.names {
		h[i] = javahash.String(n)
	}
	return h
}

// count counts an event of collection and returns its order in it.
func (s *txState) count(collection string) int64 {
	if s.counts == nil {
		s.counts = map[string]int64{}
	}
	s.total++
	n, seen := s.counts[collection]
	if !seen {
		s.names = append(s.names, collection)
	}
	s.counts[collection] = n + 1
	return n + 1
}

// collections is END's data_collections, in Debezium's HashMap order.
func (s *txState) collections() []any {
	order, _ := javahash.OrderFrom(s.capacity, s.hashes())
	out := make([]any, len(order))
	for i, j := range order {
		out[i] = map[string]any{"data_collection": s.names[j], "event_count": s.counts[s.names[j]]}
	}
	return out
}

// txID is a transaction id as metadata shows it: Debezium's PostgreSQL
// monitor appends the LSN the connector last saw, so one transaction's
// BEGIN, events and END carry different ids.
func txID(id string, lsn *int64) string {
	if lsn == nil {
		return id + ":null"
	}
	return id + ":" + strconv.FormatInt(*lsn, 10)
}

func (e *Emitter) txRecord(id string, value map[string]any) connect.SourceRecord {
	return connect.SourceRecord{
		Topic:     e.cfg.TransactionTopicName(),
		KeySchema: TransactionKeySchema, Key: map[string]any{"id": id},
		ValueSchema: TransactionValueSchema, Value: value,
	}
}

func (e *Emitter) beginRecord(lsn *int64, tsMs int64) connect.SourceRecord {
	id := txID(e.tx.id, lsn)
	return e.txRecord(id, map[string]any{"status": TxBegin, "id": id, "event_count": nil, "data_collections": nil, "ts_ms": tsMs})
}

func (e *Emitter) endRecord(lsn *int64, tsMs int64) connect.SourceRecord {
	id := txID(e.tx.id, lsn)
	return e.txRecord(id, map[string]any{"status": TxEnd, "id": id, "event_count": e.tx.total,
		"data_collections": e.tx.collections(), "ts_ms": tsMs})
}

// Begin is pgoutput's BEGIN of transaction txID, read at lsn, committed
// at commit: the BEGIN record when provide.transaction.metadata is on. A
// BEGIN of the transaction restored in progress from the offsets (the
// replay after a restart) emits nothing and keeps its counts.
func (e *Emitter) Begin(txID int64, lsn int64, commit time.Time) []connect.SourceRecord {
	if !e.cfg.ProvideTransactionMetadata {
		return nil
	}
	id := strconv.FormatInt(txID, 10)
	if e.tx.inProgress() && e.tx.id == id {
		return nil
	}
	e.tx.begin(id)
	return []connect.SourceRecord{e.beginRecord(&lsn, commit.UnixMilli())}
}

// Commit is pgoutput's COMMIT at lsn of the transaction in progress: its
// END record, with the number of its events and their count per data
// collection, when provide.transaction.metadata is on.
func (e *Emitter) Commit(lsn int64, commit time.Time) []connect.SourceRecord {
	if !e.cfg.ProvideTransactionMetadata {
		return nil
	}
	var out []connect.SourceRecord
	if e.tx.inProgress() {
		out = append(out, e.endRecord(&lsn, commit.UnixMilli()))
	}
	e.tx.reset()
	return out
}

// transactionEvent counts an emitted event of collection in its
// transaction and stamps value's transaction block, after the END of
// the previous transaction and the BEGIN of the event's when they were not
// seen (Debezium's TransactionMonitor.dataEvent). An event without a
// transaction id ends the transaction in progress and has no block.
func (e *Emitter) transactionEvent(out []connect.SourceRecord, src Source, collection string, value map[string]any) []connect.SourceRecord {
	if !e.cfg.ProvideTransactionMetadata {
		return out
	}
	// Implicit BEGINs and ENDs take the event's time, in milliseconds as
	// its source.ts_ms has it.
	tsMs := value["source"].(map[string]any)["ts_ms"].(int64)
	if src.TxID == nil {
		if e.tx.inProgress() {
			out = append(out, e.endRecord(src.LSN, tsMs))
			e.tx.reset()
		}
		return out
	}
	id := strconv.FormatInt(*src.TxID, 10)
	if !e.tx.inProgress() {
		e.tx.begin(id)
		out = append(out, e.beginRecord(src.LSN, tsMs))
	} else if e.tx.id != id {
		out = append(out, e.endRecord(src.LSN, tsMs))
		e.tx.begin(id)
		out = append(out, e.beginRecord(src.LSN, tsMs))
	}
	order := e.tx.count(collection)
	value["transaction"] = map[string]any{"id": txID(e.tx.id, src.LSN), "total_order": e.tx.total, "data_collection_order": order}
	return out
}

// messageCollection names a logical decoding message's data collection:
// Java's Object.toString of a fresh object, whose identity hash no one
// can reproduce — a random one stands for it.
func messageCollection() string {
	return messageCollectionPrefix + strconv.FormatUint(uint64(rand.Uint32N(1<<31-1)+1), 16)
}

// TransactionOffset adds the transaction in progress to a streamed
// record's offset, as Debezium stores it: its id and its count per data
// collection. It adds nothing between transactions.
func (e *Emitter) TransactionOffset(offset map[string]any) {
	if !e.tx.inProgress() {
		return
	}
	offset[OffsetTransactionID] = e.tx.id
	for _, n := range e.tx.names {
		offset[OffsetTransactionOrderPrefix+n] = e.tx.counts[n]
	}
}

// RestoreTransaction takes the transaction in progress from a stored
// offset (see TransactionOffset): the restarted connector replays it from
// its BEGIN, which then emits nothing, and its counts go on.
func (e *Emitter) RestoreTransaction(offset map[string]any) error {
	e.tx = txState{}
	id, _ := offset[OffsetTransactionID].(string)
	if id == "" {
		return nil
	}
	var names []string
	for k := range offset {
		if strings.HasPrefix(k, OffsetTransactionOrderPrefix) {
			names = append(names, k)
		}
	}
	// Debezium walks a HashMap of the offset; sorted is as good a guess.
	sort.Strings(names)
	for _, k := range names {
		n, ok := offsetInt(offset[k])
		if !ok {
			return fmt.Errorf("envelope: offset %s = %v is not a count", k, offset[k])
		}
		if e.tx.counts == nil {
			e.tx.counts = map[string]int64{}
		}
		name := strings.TrimPrefix(k, OffsetTransactionOrderPrefix)
		e.tx.names = append(e.tx.names, name)
		e.tx.counts[name] = n
		e.tx.total += n
	}
	e.tx.id = id
	return nil
}

// offsetInt reads a count as an offset store may hand it back.
func offsetInt(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), x == float64(int64(x))
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return connect.IntegerValue(v)
}
