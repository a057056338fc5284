package postgres

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/connect/postgres/signals"
	"github.com/sluice-io/sluice/connect/postgres/values"
)

// Snapshot modes, as Debezium names them (snapshot.mode).
const (
	SnapshotInitial     = "initial"
	SnapshotNoData      = "no_data"
	SnapshotInitialOnly = "initial_only"
	SnapshotWhenNeeded  = "when_needed"
	SnapshotAlways      = "always"
)

// Publication auto-creation modes (publication.autocreate.mode).
const (
	PubAllTables = "all_tables"
	PubDisabled  = "disabled"
	PubFiltered  = "filtered"
)

// Offset mismatch strategies (offset.mismatch.strategy): what to do when the
// slot's confirmed position and the stored offset disagree.
const (
	MismatchNoValidation = "no_validation"
	MismatchTrustOffset  = "trust_offset"
	MismatchTrustSlot    = "trust_slot"
	MismatchTrustGreater = "trust_greater_lsn"
)

// Config is a parsed connector config.
type Config struct {
	Host, User, Password, DBName, SSLMode string
	Port                                  int
	// InitialStatements run on every regular session
	// (database.initial.statements).
	InitialStatements string
	// Prefix is topic.prefix: the topics' first part and the source
	// partition's "server".
	Prefix            string
	Slot, Publication string
	PubAutocreate     string
	Tables            TableFilter
	SnapshotMode      string
	// SnapshotThreads is how many sessions read the snapshot's chunks side
	// by side (snapshot.max.threads).
	SnapshotThreads int
	FetchSize       int
	// Heartbeat is heartbeat.interval.ms (0: none).
	Heartbeat      time.Duration
	HeartbeatQuery string
	// WALHeartbeat is how often the connector emits its own logical
	// decoding message, so that the slot moves while the captured tables
	// are idle (sluice.heartbeat.wal.interval.ms; 0: never).
	WALHeartbeat    time.Duration
	HeartbeatPrefix string
	TxnMetadata     bool
	TxnTopic        string
	Tombstones      bool
	// Skipped are the operations not emitted (skipped.operations: c, u, d,
	// t), Debezium's default being "t".
	Skipped        map[string]bool
	MaxBatch       int
	SlotDropOnStop bool
	// SlotRetries and SlotRetryDelay are slot.max.retries and
	// slot.retry.delay.ms: how long to wait for a slot another session
	// still holds.
	SlotRetries    int
	SlotRetryDelay time.Duration
	Mismatch       string
	StatusInterval time.Duration
	// MessagesInclude/Exclude filter logical decoding messages by prefix.
	MessagesInclude, MessagesExclude []*regexp.Regexp
	Modes                            values.Modes
	// Unavailable is unavailable.value.placeholder: what an unchanged
	// TOASTed value, which pgoutput does not send, reads as.
	Unavailable string
	// ToastReread are the tables (schema.table patterns) whose unchanged
	// TOASTed values are read back from the table by the row's key
	// (sluice.toast.reread.tables; none: the placeholder stays).
	ToastReread []*regexp.Regexp
	// SchemaTopic is where a captured table's changed description
	// is announced (sluice.schema.change.topic; "": nowhere).
	SchemaTopic string
	// MaxQueue is max.queue.size: the most messages' records queued
	// between the stream and Poll.
	MaxQueue int
	// TopicDelimiter, HeartbeatTopic, ExtendedHeaders and SkipUnchanged
	// are topic.delimiter, topic.heartbeat.name, extended.headers.enabled
	// and skip.messages.without.change.
	TopicDelimiter  string
	HeartbeatTopic  string
	ExtendedHeaders bool
	SkipUnchanged   bool
	// Signals is the signal table (signal.data.collection), nil when none:
	// Debezium's source signal channel and the incremental snapshots it
	// starts.
	Signals *signals.Table
	// ChunkSize is incremental.snapshot.chunk.size: the rows an incremental
	// snapshot reads between one pair of watermarks.
	ChunkSize int
}

// TableFilter is Debezium's table and column selection: include and exclude
// lists of regular expressions, each matched against the whole of
// "schema.table" (or "schema.table.column"), case-insensitively.
type TableFilter struct {
	// Signal is the signal table, captured whatever the lists say, as
	// Debezium captures it (nil: none).
	Signal                       *signals.Table
	SchemaInclude, SchemaExclude []*regexp.Regexp
	TableInclude, TableExclude   []*regexp.Regexp
	ColumnInclude, ColumnExclude []*regexp.Regexp
}

// Table reports whether the table schema.name is captured.
func (f TableFilter) Table(schema, name string) bool {
	if schema == "pg_catalog" || schema == "information_schema" {
		return false
	}
	if f.Signal != nil && f.Signal.Schema == schema && f.Signal.Name == name {
		return true
	}
	if !pick(f.SchemaInclude, f.SchemaExclude, schema) {
		return false
	}
	return pick(f.TableInclude, f.TableExclude, schema+"."+name)
}

// Column reports whether the column of schema.table is captured.
func (f TableFilter) Column(schema, table, column string) bool {
	return pick(f.ColumnInclude, f.ColumnExclude, schema+"."+table+"."+column)
}

// pick applies an include list (empty: everything) then an exclude list.
func pick(include, exclude []*regexp.Regexp, s string) bool {
	if len(include) > 0 && !slices.ContainsFunc(include, func(r *regexp.Regexp) bool { return r.MatchString(s) }) {
		return false
	}
	return !slices.ContainsFunc(exclude, func(r *regexp.Regexp) bool { return r.MatchString(s) })
}

// configError is a config key's error, naming the key.
type configError struct {
	Key, Message string
}

func (e *configError) Error() string { return e.Key + ": " + e.Message }

// ParseConfig reads a connector config. Every Debezium key it does not
// support — and every value of a supported key that it does not — is an
// error naming the key: a Debezium config moved to the native connector
// never loses a setting silently.
func ParseConfig(props map[string]string) (Config, error) {
	if errs := configErrors(props); len(errs) > 0 {
		return Config{}, errs[0]
	}
	p := parser{props: props}
	c := Config{
		Host: p.str("database.hostname", ""), User: p.str("database.user", ""),
		Password: p.str("database.password", ""), DBName: p.str("database.dbname", ""),
		SSLMode: p.enum("database.sslmode", "prefer"), Port: p.int("database.port", 5432),
		InitialStatements: p.str("database.initial.statements", ""),
		WALHeartbeat:      time.Duration(p.int("sluice.heartbeat.wal.interval.ms", 10_000)) * time.Millisecond,
		Prefix:            p.str("topic.prefix", ""),
		Slot:              p.str("slot.name", "debezium"), Publication: p.str("publication.name", "dbz_publication"),
		PubAutocreate:   p.enum("publication.autocreate.mode", PubAllTables),
		SnapshotMode:    p.enum("snapshot.mode", SnapshotInitial),
		SnapshotThreads: p.int("snapshot.max.threads", 1),
		FetchSize:       p.int("snapshot.fetch.size", 10_240),
		Heartbeat:       time.Duration(p.int("heartbeat.interval.ms", 0)) * time.Millisecond,
		HeartbeatQuery:  p.str("heartbeat.action.query", ""),
		HeartbeatPrefix: p.str("topic.heartbeat.prefix", "__debezium-heartbeat"),
		TxnMetadata:     p.bool("provide.transaction.metadata", false),
		TxnTopic:        p.str("topic.transaction", "transaction"),
		Tombstones:      p.bool("tombstones.on.delete", true),
		MaxBatch:        p.int("max.batch.size", 2048),
		SlotDropOnStop:  p.bool("slot.drop.on.stop", false),
		SlotRetries:     p.int("slot.max.retries", 6),
		SlotRetryDelay:  time.Duration(p.int("slot.retry.delay.ms", 10_000)) * time.Millisecond,
		Mismatch:        p.enum("offset.mismatch.strategy", MismatchNoValidation),
		StatusInterval:  time.Duration(p.int("status.update.interval.ms", 10_000)) * time.Millisecond,
		Skipped:         map[string]bool{},
		Unavailable:     p.str("unavailable.value.placeholder", "__debezium_unavailable_value"),
		ToastReread:     p.regexps("sluice.toast.reread.tables"),
		SchemaTopic:     strings.TrimSpace(p.str("sluice.schema.change.topic", "")),
		MaxQueue:        p.int("max.queue.size", 8192),
		TopicDelimiter:  p.str("topic.delimiter", "."),
		HeartbeatTopic:  p.str("topic.heartbeat.name", ""),
		ExtendedHeaders: p.bool("extended.headers.enabled", true),
		SkipUnchanged:   p.bool("skip.messages.without.change", false),
		ChunkSize:       p.int("incremental.snapshot.chunk.size", 1024),
	}
	for _, op := range p.list("skipped.operations", "t") {
		if op != "none" {
			c.Skipped[op] = true
		}
	}
	c.Tables = TableFilter{
		SchemaInclude: p.regexps("schema.include.list"), SchemaExclude: p.regexps("schema.exclude.list"),
		TableInclude: p.regexps("table.include.list"), TableExclude: p.regexps("table.exclude.list"),
		ColumnInclude: p.regexps("column.include.list"), ColumnExclude: p.regexps("column.exclude.list"),
	}
	if v := strings.TrimSpace(props["signal.data.collection"]); v != "" {
		st, err := signals.ParseTable(v)
		if err != nil {
			return Config{}, &configError{"signal.data.collection", err.Error()}
		}
		c.Signals, c.Tables.Signal = &st, &st
	}
	c.MessagesInclude = p.regexps("message.prefix.include.list")
	c.MessagesExclude = p.regexps("message.prefix.exclude.list")
	if p.err != nil {
		return Config{}, p.err
	}
	m, err := values.ParseModes(props)
	if err != nil {
		return Config{}, err
	}
	c.Modes = m
	return c, nil
}

// parser reads typed values; the first error sticks (configErrors checked
// the values beforehand, so one here is a bug in a check).
type parser struct {
	props map[string]string
	err   error
}

// enum reads a key whose values are names, as Debezium does: case and
// surrounding blanks do not matter.
func (p *parser) enum(key, def string) string {
	return strings.ToLower(strings.TrimSpace(p.str(key, def)))
}

func (p *parser) str(key, def string) string {
	if v, ok := p.props[key]; ok {
		return v
	}
	return def
}

func (p *parser) int(key string, def int) int {
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil && p.err == nil {
		p.err = &configError{key, fmt.Sprintf("%q is not a whole number", v)}
	}
	return n
}

func (p *parser) bool(key string, def bool) bool {
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

func (p *parser) list(key, def string) []string {
	var out []string
	for _, s := range strings.Split(p.str(key, def), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, strings.ToLower(s))
		}
	}
	return out
}

func (p *parser) regexps(key string) []*regexp.Regexp {
	v := strings.TrimSpace(p.props[key])
	if v == "" {
		return nil
	}
	var out []*regexp.Regexp
	for _, s := range splitRegexList(v) {
		r, err := regexp.Compile("(?i)^(?:" + s + ")$")
		if err != nil {
			if p.err == nil {
				p.err = &configError{key, fmt.Sprintf("%q is not a regular expression: %v", s, err)}
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// splitRegexList splits a comma-separated list of regular expressions as
// Debezium does: a comma escaped with a backslash belongs to the expression.
func splitRegexList(v string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ',':
			cur.WriteByte(',')
			i++
		case v[i] == ',':
			if s := strings.TrimSpace(cur.String()); s != "" {
				out = append(out, s)
			}
			cur.Reset()
		default:
			cur.WriteByte(v[i])
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
