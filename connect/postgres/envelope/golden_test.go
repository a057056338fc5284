package envelope

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/converters"
)

// goldenDir holds Debezium 3.6.1's own records of a snapshot and a change
// script (connect/postgres/testdata/debezium: one directory per connector
// config, one JSON-lines file per topic, volatile values masked).
const goldenDir = "../testdata/debezium"

// goldenConfigs are the configs the golden files were captured under
// (topic.prefix and database.dbname "golden").
var goldenConfigs = map[string]func(*Config){
	"a-defaults": func(c *Config) {
		c.ProvideTransactionMetadata = true
		c.SkippedOperations = nil
	},
	"b-double-adaptive-micros": func(c *Config) { c.BinaryHandling = BinaryBase64 },
	"c-string-connect-hex":     func(c *Config) { c.BinaryHandling = BinaryHex },
}

type goldenHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// goldenRecord is one line of a golden file: key and value as
// JsonConverter wrote them (schemas enabled), null for none.
type goldenRecord struct {
	Topic   string          `json:"topic"`
	Key     json.RawMessage `json:"key"`
	Value   json.RawMessage `json:"value"`
	Headers []goldenHeader  `json:"headers"`
}

// TestDebeziumGolden rebuilds every record Debezium emitted for the golden
// fixtures — from the column schemas and values Debezium wrote, which are
// the values package's business — and compares them key by key: topics,
// keys, envelopes, source blocks, transaction blocks and records, messages,
// heartbeats and headers, masked as the golden files are.
func TestDebeziumGolden(t *testing.T) {
	if _, err := os.Stat(goldenDir); err != nil {
		t.Skipf("no golden files at %s (Debezium's captured output, connect/postgres/testdata/debezium): %v", goldenDir, err)
	}
	for name, configure := range goldenConfigs {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(goldenDir, name)
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("no golden files for %s: %v", name, err)
			}
			cfg := DefaultConfig("golden")
			cfg.Database = "golden"
			cfg.ConnectorVersion = "masked"
			cfg.Now = func() time.Time { return processed }
			configure(&cfg)
			g := &goldenRun{t: t, e: newEmitter(t, cfg), topics: readGolden(t, dir), tables: map[string]*Table{}}
			g.run()
			total := 0
			for topic, recs := range g.topics {
				if kindOfTopic(cfg, topic) == kindHeartbeat {
					total++ // one heartbeat stands for all
				} else {
					total += len(recs)
				}
			}
			if g.compared != total {
				t.Errorf("compared %d of the %d golden records", g.compared, total)
			}
			t.Logf("%d records of %d topics compared", g.compared, len(g.topics))
		})
	}
}

func readGolden(t *testing.T, dir string) map[string][]goldenRecord {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("golden files in %s: %v", dir, err)
	}
	topics := map[string][]goldenRecord{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r goldenRecord
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			topics[r.Topic] = append(topics[r.Topic], r)
		}
	}
	return topics
}

// goldenEvent is one call of the Emitter and the golden records it must
// make.
type goldenEvent struct {
	topic  string
	golden []goldenRecord
	// order is the golden transaction block's total_order of each counted
	// record (0: none); src the source to rebuild it with.
	order []int64
	src   Source
	call  func(src Source) ([]connect.SourceRecord, error)
}

type goldenRun struct {
	t      *testing.T
	e      *Emitter
	topics map[string][]goldenRecord
	tables map[string]*Table
	// compared counts the golden records compared.
	compared int
}

func (g *goldenRun) run() {
	var events []*goldenEvent
	for topic, recs := range g.topics {
		switch kindOfTopic(g.e.Config(), topic) {
		case kindChanges:
			events = append(events, g.tableEvents(topic, recs)...)
		case kindMessage:
			events = append(events, g.messageEvents(topic, recs)...)
		case kindHeartbeat:
			g.compare(topic+" heartbeat", []connect.SourceRecord{g.e.Heartbeat()}, recs[:1])
		}
	}
	// Events outside transactions first (snapshot reads, non-transactional
	// messages), then each transaction of the transaction topic, its events
	// in their total order.
	var inTx []*goldenEvent
	for _, ev := range events {
		if len(ev.order) == 0 {
			g.replay(ev)
		} else {
			inTx = append(inTx, ev)
		}
	}
	if !g.e.Config().ProvideTransactionMetadata {
		for _, ev := range inTx {
			g.t.Errorf("%s: a transaction block without transaction metadata", ev.topic)
		}
		return
	}
	g.transactions(inTx)
}

func (g *goldenRun) replay(ev *goldenEvent) {
	recs, err := ev.call(ev.src)
	if err != nil {
		g.t.Errorf("%s: %v", ev.topic, err)
		return
	}
	g.compare(ev.topic, recs, ev.golden)
}

// transactions replays the transaction topic's BEGIN/END pairs, each
// with the events it counted, taken in topic order per data collection.
func (g *goldenRun) transactions(events []*goldenEvent) {
	txTopic := g.e.Config().TransactionTopicName()
	golden := g.topics[txTopic]
	// The counted records of each data collection, in topic order.
	queues := map[string][]*goldenEvent{}
	for _, ev := range events {
		c := g.collectionOf(ev)
		for range ev.order {
			queues[c] = append(queues[c], ev)
		}
	}
	lsn := int64(1000)
	for i := 0; i+1 < len(golden); i += 2 {
		begin, end := golden[i], golden[i+1]
		xid := int64(500 + i)
		var txEvents []*goldenEvent
		for _, dc := range decodeJSON(g.t, end.Value).(map[string]any)["payload"].(map[string]any)["data_collections"].([]any) {
			name := identityHash.ReplaceAllString(dc.(map[string]any)["data_collection"].(string), "@0")
			n := mustInt(dc.(map[string]any)["event_count"])
			if int64(len(queues[name])) < n {
				g.t.Fatalf("transaction %d counts %d events of %s, the topics hold %d", i/2, n, name, len(queues[name]))
			}
			for _, ev := range queues[name][:n] {
				if !slices.Contains(txEvents, ev) {
					txEvents = append(txEvents, ev)
				}
			}
			queues[name] = queues[name][n:]
		}
		slices.SortFunc(txEvents, func(a, b *goldenEvent) int { return cmp.Compare(a.order[0], b.order[0]) })
		g.compare(txTopic+" BEGIN", g.e.Begin(xid, lsn, committed), []goldenRecord{begin})
		for _, ev := range txEvents {
			lsn += 10
			ev.src.TxID, ev.src.LSN = Int64(xid), Int64(lsn)
			g.replay(ev)
		}
		g.compare(txTopic+" END", g.e.Commit(lsn+10, committed), []goldenRecord{end})
		lsn += 100
	}
	for c, q := range queues {
		if len(q) > 0 {
			g.t.Errorf("%d events of %s are in no transaction of %s", len(q), c, txTopic)
		}
	}
}

// identityHash is the masked identity hash of a message's data collection.
var identityHash = regexp.MustCompile(`@[0-9a-f]+$`)

func (g *goldenRun) collectionOf(ev *goldenEvent) string {
	if tbl := g.tables[ev.topic]; tbl != nil {
		return tbl.collection()
	}
	return messageCollectionPrefix + "0"
}

// tableEvents splits a table topic into the events that made it, and
// builds the table from its schemas.
func (g *goldenRun) tableEvents(topic string, recs []goldenRecord) []*goldenEvent {
	tbl := g.table(topic, recs)
	var events []*goldenEvent
	for i := 0; i < len(recs); i++ {
		schema, value := g.read(topic, recs[i].Value)
		if value == nil {
			g.t.Fatalf("%s: record %d: a tombstone without its delete", topic, i)
		}
		p := value.(map[string]any)
		ev := &goldenEvent{topic: topic, golden: recs[i : i+1], src: goldenSource(p)}
		ev.order = appendOrder(ev.order, p)
		before, after := g.row(tbl, schema, p["before"]), g.row(tbl, schema, p["after"])
		switch p["op"] {
		case "r":
			ev.call = func(src Source) ([]connect.SourceRecord, error) {
				r, err := g.e.Read(tbl, src, after)
				return []connect.SourceRecord{r}, err
			}
		case "c":
			ev.call = func(src Source) ([]connect.SourceRecord, error) { return g.e.Insert(tbl, src, after) }
		case "u":
			ev.call = func(src Source) ([]connect.SourceRecord, error) { return g.e.Update(tbl, src, before, after) }
		case "t":
			ev.call = func(src Source) ([]connect.SourceRecord, error) { return g.e.Truncate(tbl, src), nil }
		case "d":
			n := 1
			if i+1 < len(recs) && string(recs[i+1].Value) == "null" {
				n++ // its tombstone
			}
			ev.call = func(src Source) ([]connect.SourceRecord, error) { return g.e.Delete(tbl, src, before) }
			if slices.ContainsFunc(recs[i].Headers, func(h goldenHeader) bool { return h.Key == HeaderNewKey }) {
				// A key change: the create of the new key follows.
				cs, cv := g.read(topic, recs[i+n].Value)
				cp := cv.(map[string]any)
				ev.order = appendOrder(ev.order, cp)
				newRow := g.row(tbl, cs, cp["after"])
				ev.call = func(src Source) ([]connect.SourceRecord, error) { return g.e.Update(tbl, src, before, newRow) }
				n++
			}
			ev.golden = recs[i : i+n]
			i += n - 1
		default:
			g.t.Fatalf("%s: record %d: op %v", topic, i, p["op"])
		}
		events = append(events, ev)
	}
	return events
}

// table builds a topic's table: its columns from the envelope's before
// schema, its key from the first key schema.
func (g *goldenRun) table(topic string, recs []goldenRecord) *Table {
	var columns []Column
	var key []string
	var schemaName, tableName string
	for _, r := range recs {
		if s, v := g.read(topic, r.Value); v != nil && columns == nil {
			for _, f := range s.Fields[0].Schema.Fields {
				columns = append(columns, Column{Name: f.Name, Schema: f.Schema})
			}
			src := v.(map[string]any)["source"].(map[string]any)
			schemaName, tableName = src["schema"].(string), src["table"].(string)
		}
		if s, _ := g.read(topic, r.Key); s != nil && key == nil {
			for _, f := range s.Fields {
				key = append(key, f.Name)
			}
		}
	}
	tbl, err := g.e.NewTable(schemaName, tableName, columns, key)
	if err != nil {
		g.t.Fatalf("%s: %v", topic, err)
	}
	if tbl.Topic != topic {
		g.t.Errorf("table %s.%s: topic %s, Debezium's %s", schemaName, tableName, tbl.Topic, topic)
	}
	g.tables[topic] = tbl
	return tbl
}

func (g *goldenRun) messageEvents(topic string, recs []goldenRecord) []*goldenEvent {
	var events []*goldenEvent
	for i := range recs {
		_, value := g.read(topic, recs[i].Value)
		p := value.(map[string]any)
		msg := p["message"].(map[string]any)
		m := Message{Prefix: msg["prefix"].(string), Transactional: p["source"].(map[string]any)["txId"] != nil}
		switch c := msg["content"].(type) {
		case []byte:
			m.Content = c
		case string:
			var err error
			if g.e.Config().BinaryHandling == BinaryHex {
				m.Content, err = hex.DecodeString(c)
			} else {
				m.Content, err = base64.StdEncoding.DecodeString(c)
			}
			if err != nil {
				g.t.Fatalf("%s: record %d: content %q: %v", topic, i, c, err)
			}
		}
		ev := &goldenEvent{topic: topic, golden: recs[i : i+1], src: goldenSource(p), order: appendOrder(nil, p)}
		ev.call = func(src Source) ([]connect.SourceRecord, error) { return g.e.Message(src, m), nil }
		events = append(events, ev)
	}
	return events
}

// appendOrder adds a golden event's total_order when it has a block.
func appendOrder(order []int64, payload map[string]any) []int64 {
	if tx, ok := payload["transaction"].(map[string]any); ok {
		return append(order, mustInt(tx["total_order"]))
	}
	return order
}

// goldenSource is a source with the fields a golden source block has
// (their masked values do not matter).
func goldenSource(payload map[string]any) Source {
	g := payload["source"].(map[string]any)
	src := Source{Commit: committed, Snapshot: Snapshot(g["snapshot"].(string))}
	for k, p := range map[string]**int64{"txId": &src.TxID, "lsn": &src.LSN, "xmin": &src.Xmin, "origin_lsn": &src.OriginLSN} {
		if g[k] != nil {
			*p = Int64(1)
		}
	}
	if o, ok := g["origin"].(string); ok {
		src.Origin = o
	}
	return src
}

// read is what JsonConverter reads back from a golden key or value —
// except NaN and the infinities of float columns, which JsonConverter
// writes as strings and cannot read back: they are put back by hand.
func (g *goldenRun) read(topic string, raw json.RawMessage) (*connect.Schema, any) {
	if string(raw) == "null" {
		return nil, nil
	}
	doc := decodeJSON(g.t, raw).(map[string]any)
	specials := floatSpecials(doc)
	raw, err := json.Marshal(doc)
	if err != nil {
		g.t.Fatal(err)
	}
	c := &converters.JSON{}
	if err := c.Configure(map[string]string{}, false); err != nil {
		g.t.Fatal(err)
	}
	s, v, err := c.ToConnectData(topic, raw)
	if err != nil {
		g.t.Fatalf("%s: %v in %.200s", topic, err, raw)
	}
	for _, sp := range specials {
		row := v.(map[string]any)[sp.part].(map[string]any)
		f := map[string]float64{"NaN": math.NaN(), "Infinity": math.Inf(1), "-Infinity": math.Inf(-1)}[sp.text]
		if sp.float32 {
			row[sp.column] = float32(f)
		} else {
			row[sp.column] = f
		}
	}
	return s, v
}

// floatSpecial is a float column's NaN or infinity in a golden envelope.
type floatSpecial struct {
	part, column, text string
	float32            bool
}

// floatSpecials takes the special floats out of an envelope's before and
// after (zeros in their place) and returns them.
func floatSpecials(doc map[string]any) []floatSpecial {
	schema, _ := doc["schema"].(map[string]any)
	payload, _ := doc["payload"].(map[string]any)
	fields, _ := schema["fields"].([]any)
	var out []floatSpecial
	for _, f := range fields {
		part, _ := f.(map[string]any)
		name, _ := part["field"].(string)
		row, _ := payload[name].(map[string]any)
		columns, _ := part["fields"].([]any)
		if (name != "before" && name != "after") || row == nil {
			continue
		}
		for _, c := range columns {
			col := c.(map[string]any)
			typ, column := col["type"].(string), col["field"].(string)
			if text, ok := row[column].(string); ok && (typ == "float" || typ == "double") {
				out = append(out, floatSpecial{name, column, text, typ == "float"})
				row[column] = json.Number("0")
			}
		}
	}
	return out
}

// row is a golden before or after as a row of tbl.
func (g *goldenRun) row(tbl *Table, _ *connect.Schema, v any) []any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	row := make([]any, len(tbl.Columns()))
	for i, c := range tbl.Columns() {
		row[i] = m[c.Name]
	}
	return row
}

// compare checks records against their golden counterparts, key by key.
func (g *goldenRun) compare(what string, got []connect.SourceRecord, want []goldenRecord) {
	g.t.Helper()
	if len(got) != len(want) {
		g.t.Errorf("%s: %d records, Debezium %d", what, len(got), len(want))
		return
	}
	g.compared += len(want)
	for i := range got {
		if path, gv, wv := diff(g.normalize(g.asGolden(got[i])), g.normalize(want[i]), ""); path != "" {
			g.t.Errorf("%s: record %d differs at %s: %s, Debezium %s", what, i, path, gv, wv)
		}
	}
}

// asGolden is a record in the golden files' form.
func (g *goldenRun) asGolden(r connect.SourceRecord) goldenRecord {
	out := goldenRecord{Topic: r.Topic, Key: json.RawMessage("null"), Value: json.RawMessage("null")}
	if r.Key != nil || r.KeySchema != nil {
		out.Key = json.RawMessage(jsonOf(g.t, r.KeySchema, r.Key))
	}
	if r.Value != nil || r.ValueSchema != nil {
		out.Value = json.RawMessage(jsonOf(g.t, r.ValueSchema, r.Value))
	}
	out.Headers = []goldenHeader{}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, goldenHeader{h.Key, string(h.Value)})
	}
	return out
}

// normalize masks a record as the golden files are masked: the processing
// and commit times, source.version, the WAL positions and transaction ids
// (each as a zero of its JSON type, so presence and type still count), the
// runId header, and the message collections' identity hashes, with END's
// data_collections sorted.
func (g *goldenRun) normalize(r goldenRecord) map[string]any {
	doc := map[string]any{"topic": r.Topic, "key": decodeJSON(g.t, r.Key), "value": decodeJSON(g.t, r.Value)}
	var headers []any
	for _, h := range r.Headers {
		v := h.Value
		if h.Key == HeaderRunID {
			v = ""
		}
		headers = append(headers, map[string]any{"key": h.Key, "value": v})
	}
	doc["headers"] = headers
	var masks []string
	switch kindOfTopic(g.e.Config(), r.Topic) {
	case kindChanges, kindMessage:
		masks = []string{"value.payload.ts_ms", "value.payload.ts_us", "value.payload.ts_ns",
			"value.payload.source.ts_ms", "value.payload.source.ts_us", "value.payload.source.ts_ns",
			"value.payload.source.version", "value.payload.source.lsn", "value.payload.source.sequence",
			"value.payload.source.txId", "value.payload.source.xmin", "value.payload.transaction.id"}
	case kindTransaction:
		masks = []string{"key.payload.id", "value.payload.id", "value.payload.ts_ms"}
		if p, ok := doc["value"].(map[string]any)["payload"].(map[string]any); ok {
			if dcs, ok := p["data_collections"].([]any); ok {
				for _, dc := range dcs {
					m := dc.(map[string]any)
					m["data_collection"] = identityHash.ReplaceAllString(m["data_collection"].(string), "@0")
				}
				sort.SliceStable(dcs, func(i, j int) bool {
					return dcs[i].(map[string]any)["data_collection"].(string) < dcs[j].(map[string]any)["data_collection"].(string)
				})
			}
		}
	case kindHeartbeat:
		masks = []string{"value.payload.ts_ms"}
	}
	for _, m := range masks {
		maskPath(doc, strings.Split(m, "."))
	}
	return doc
}

func maskPath(v any, path []string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	e, ok := m[path[0]]
	if !ok {
		return
	}
	if len(path) > 1 {
		maskPath(e, path[1:])
		return
	}
	switch e.(type) {
	case json.Number:
		m[path[0]] = json.Number("0")
	case string:
		m[path[0]] = ""
	}
}

func decodeJSON(t *testing.T, raw json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v in %.200s", err, raw)
	}
	return v
}

func mustInt(v any) int64 {
	if n, ok := v.(int64); ok {
		return n
	}
	n, err := v.(json.Number).Int64()
	if err != nil {
		panic(err)
	}
	return n
}

// diff is the first path at which a and b differ, with both values there;
// "" when they are equal.
func diff(a, b any, path string) (string, string, string) {
	show := func(v any) string { s, _ := json.Marshal(v); return fmt.Sprintf("%.200s", s) }
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return cmp.Or(path, "."), show(a), show(b)
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			xv, xok := x[k]
			yv, yok := y[k]
			if !xok || !yok {
				return path + "." + k, show(xv), show(yv)
			}
			if p, s1, s2 := diff(xv, yv, path+"."+k); p != "" {
				return p, s1, s2
			}
		}
		return "", "", ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return cmp.Or(path, "."), show(a), show(b)
		}
		for i := range x {
			if p, s1, s2 := diff(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p, s1, s2
			}
		}
		return "", "", ""
	}
	if a != b {
		return cmp.Or(path, "."), show(a), show(b)
	}
	return "", "", ""
}

// The kinds of topic a golden record is on, which decide its masks.
const (
	kindChanges = iota
	kindHeartbeat
	kindTransaction
	kindMessage
)

// kindOfTopic is the kind of topic under cfg's names.
func kindOfTopic(cfg Config, topic string) int {
	switch topic {
	case cfg.HeartbeatTopic():
		return kindHeartbeat
	case cfg.TransactionTopicName():
		return kindTransaction
	case cfg.MessageTopic():
		return kindMessage
	}
	return kindChanges
}
