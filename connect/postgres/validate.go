package postgres

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect/postgres/signals"
)

// keyCheck checks one supported key's value; nil accepts any value.
type keyCheck func(v string) string

// oneOf accepts the given values, case-insensitively.
func oneOf(allowed ...string) keyCheck {
	return func(v string) string {
		if slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, strings.TrimSpace(v)) }) {
			return ""
		}
		return fmt.Sprintf("%q is not supported by the native connector; use one of %s", v, strings.Join(allowed, ", "))
	}
}

// intAtLeast accepts a whole number of at least min.
func intAtLeast(min int) keyCheck {
	return func(v string) string {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Sprintf("%q is not a whole number", v)
		}
		if n < min {
			return fmt.Sprintf("%d is below the least allowed value, %d", n, min)
		}
		return ""
	}
}

func isBool(v string) string {
	if s := strings.ToLower(strings.TrimSpace(v)); s != "true" && s != "false" {
		return fmt.Sprintf("%q is not true or false", v)
	}
	return ""
}

var (
	slotNameRe = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)
	prefixRe   = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// supported are the Debezium keys the native connector honours, with the
// values it accepts (the handling modes are values.ParseModes's).
var supported = map[string]keyCheck{
	"database.hostname": nil, "database.user": nil, "database.password": nil, "database.dbname": nil,
	"database.port":               intAtLeast(1),
	"database.sslmode":            oneOf("disable", "allow", "prefer", "require", "verify-ca", "verify-full"),
	"database.initial.statements": nil, "database.tcpKeepAlive": isBool,
	"topic.prefix": func(v string) string {
		if !prefixRe.MatchString(v) {
			return fmt.Sprintf("%q may hold only letters, digits, '.', '_' and '-'", v)
		}
		return ""
	},
	"plugin.name": oneOf("pgoutput"),
	"slot.name": func(v string) string {
		if !slotNameRe.MatchString(v) {
			return fmt.Sprintf("%q is not a valid replication slot name: 1 to 63 lower-case letters, digits and '_'", v)
		}
		return ""
	},
	"slot.drop.on.stop": isBool, "slot.max.retries": intAtLeast(0), "slot.retry.delay.ms": intAtLeast(0),
	"publication.name":            nil,
	"publication.autocreate.mode": oneOf(PubAllTables, PubDisabled, PubFiltered),
	"schema.include.list":         nil, "schema.exclude.list": nil,
	"table.include.list": nil, "table.exclude.list": nil,
	"column.include.list": nil, "column.exclude.list": nil,
	"message.prefix.include.list": nil, "message.prefix.exclude.list": nil,
	"snapshot.mode":           oneOf(SnapshotInitial, SnapshotNoData, SnapshotInitialOnly, SnapshotWhenNeeded, SnapshotAlways),
	"snapshot.max.threads":    intAtLeast(1),
	"snapshot.fetch.size":     intAtLeast(1),
	"snapshot.isolation.mode": oneOf("serializable", "repeatable_read"),
	"snapshot.locking.mode":   oneOf("none"),
	"heartbeat.interval.ms":   intAtLeast(0), "heartbeat.action.query": nil,
	"topic.heartbeat.prefix": nil, "topic.transaction": nil,
	"provide.transaction.metadata": isBool, "tombstones.on.delete": isBool,
	"skipped.operations": func(v string) string {
		for _, op := range strings.Split(v, ",") {
			if op = strings.ToLower(strings.TrimSpace(op)); op != "" && !slices.Contains([]string{"c", "u", "d", "t", "none"}, op) {
				return fmt.Sprintf("%q is not an operation: use c, u, d, t or none", op)
			}
		}
		return ""
	},
	"max.batch.size": intAtLeast(1), "max.queue.size": intAtLeast(1), "poll.interval.ms": intAtLeast(1),
	"offset.mismatch.strategy":  oneOf(MismatchNoValidation, MismatchTrustOffset, MismatchTrustSlot, MismatchTrustGreater),
	"status.update.interval.ms": intAtLeast(0),
	"decimal.handling.mode":     nil, "time.precision.mode": nil, "binary.handling.mode": nil,
	"interval.handling.mode": nil, "hstore.handling.mode": nil, "money.fraction.digits": nil,
	"include.unknown.datatypes":              oneOf("false"),
	"schema.refresh.mode":                    oneOf("columns_diff"),
	"event.processing.failure.handling.mode": oneOf("fail"),
	"errors.max.retries":                     intAtLeast(-1),
	"field.name.adjustment.mode":             oneOf("none"),
	"schema.name.adjustment.mode":            oneOf("none"),
	"unavailable.value.placeholder":          nil,
	"sluice.toast.reread.tables":             regexList,
	"sluice.schema.change.topic":             topicName,
	"sluice.heartbeat.wal.interval.ms":       intAtLeast(0),
	"signal.data.collection": func(v string) string {
		if _, err := signals.ParseTable(strings.TrimSpace(v)); err != nil {
			return err.Error()
		}
		return ""
	},
	"signal.enabled.channels": func(v string) string {
		for _, ch := range strings.Split(v, ",") {
			if ch = strings.TrimSpace(ch); ch != "" && !strings.EqualFold(ch, "source") {
				return fmt.Sprintf("channel %q is not supported by the native connector: only source (the signal table) is; "+
					"send signals with POST /sluice/connectors/{name}/signals or an INSERT into signal.data.collection", ch)
			}
		}
		return ""
	},
	// Read by Debezium's other channels only: the source channel reads the
	// stream.
	"signal.poll.interval.ms":                    intAtLeast(0),
	"incremental.snapshot.chunk.size":            intAtLeast(1),
	"incremental.snapshot.watermarking.strategy": oneOf("insert_insert"),
	"incremental.snapshot.allow.schema.changes":  oneOf("false"),
}

// regexList accepts a comma-separated list of regular expressions, as the
// table and column lists take them.
func regexList(v string) string {
	for _, e := range splitRegexList(v) {
		if _, err := regexp.Compile("(?i)^(?:" + e + ")$"); err != nil {
			return fmt.Sprintf("%q is not a regular expression: %v", e, err)
		}
	}
	return ""
}

// topicName accepts a Kafka topic name.
func topicName(v string) string {
	v = strings.TrimSpace(v)
	if !prefixRe.MatchString(v) || len(v) > 249 || v == "." || v == ".." {
		return fmt.Sprintf("%q is not a Kafka topic name: up to 249 letters, digits, '.', '_' and '-'", v)
	}
	return ""
}

// required are the keys without which the connector cannot start.
var required = []string{"database.hostname", "database.user", "database.dbname", "topic.prefix"}

// replaced are Debezium keys renamed in its later versions, with the key
// that took each one's place.
var replaced = map[string]string{
	"database.server.name":    "topic.prefix",
	"table.whitelist":         "table.include.list",
	"table.blacklist":         "table.exclude.list",
	"schema.whitelist":        "schema.include.list",
	"schema.blacklist":        "schema.exclude.list",
	"column.whitelist":        "column.include.list",
	"column.blacklist":        "column.exclude.list",
	"heartbeat.topics.prefix": "topic.heartbeat.prefix",
}

// debeziumNamespace are the prefixes of Debezium's own keys: a key under one
// of them that the native connector does not know is refused rather than
// ignored. Kafka Connect's keys under the same words (topic.creation.*) are
// the runtime's.
var debeziumNamespace = []string{
	"database.", "snapshot.", "slot.", "publication.", "table.", "column.", "schema.", "heartbeat.",
	"topic.", "message.", "signal.", "incremental.", "notification.", "decimal.", "time.", "binary.",
	"interval.", "hstore.", "money.", "tombstones.", "skipped.", "provide.", "offset.", "status.",
	"max.", "poll.", "include.", "event.", "converters", "datatype.", "field.", "unavailable.", "xmin.",
	"flush.", "lsn.", "custom.", "read.only", "retriable.", "query.", "post.processors", "sourceinfo.",
	"extended.", "plugin.", "snapshot", "errors.max.retries", "transaction.metadata.", "publish.",
}

// runtimeKeys are Kafka Connect's (and Sluice's) keys that share a word with
// Debezium's namespace.
var runtimeKeys = []string{"topic.creation.", "offsets.storage.topic"}

// configErrors returns the errors of a config, by key, in key order.
func configErrors(props map[string]string) []*configError {
	var errs []*configError
	for _, k := range required {
		if strings.TrimSpace(props[k]) == "" {
			errs = append(errs, &configError{k, "is required"})
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if msg := keyError(k, props[k]); msg != "" {
			errs = append(errs, &configError{k, msg})
		}
	}
	errs = append(errs, signalColumnErrors(props)...)
	for _, pair := range [][2]string{{"schema.include.list", "schema.exclude.list"}, {"table.include.list", "table.exclude.list"},
		{"column.include.list", "column.exclude.list"}, {"message.prefix.include.list", "message.prefix.exclude.list"}} {
		if strings.TrimSpace(props[pair[0]]) != "" && strings.TrimSpace(props[pair[1]]) != "" {
			errs = append(errs, &configError{pair[1], "cannot be set together with " + pair[0]})
		}
	}
	if q, b, ok := queueAndBatch(props); ok && q <= b {
		errs = append(errs, &configError{"max.queue.size", fmt.Sprintf("%d must be larger than max.batch.size (%d), as Debezium requires", q, b)})
	}
	return errs
}

// queueAndBatch are max.queue.size and max.batch.size, defaults included,
// when both are whole numbers.
func queueAndBatch(props map[string]string) (queue, batch int, ok bool) {
	read := func(k string, def int) (int, bool) {
		v := strings.TrimSpace(props[k])
		if v == "" {
			return def, true
		}
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	queue, okQ := read("max.queue.size", 8192)
	batch, okB := read("max.batch.size", 2048)
	return queue, batch, okQ && okB
}

// keyError is what is wrong with one key's value, or "".
func keyError(k, v string) string {
	if to, ok := replaced[k]; ok {
		return "is an old Debezium key: use " + to
	}
	if check, ok := supported[k]; ok {
		if check == nil || strings.TrimSpace(v) == "" {
			return ""
		}
		return check(v)
	}
	if slices.ContainsFunc(runtimeKeys, func(p string) bool { return strings.HasPrefix(k, p) }) {
		return ""
	}
	if slices.ContainsFunc(debeziumNamespace, func(p string) bool { return strings.HasPrefix(k, p) }) {
		return "is not supported by the native PostgreSQL connector (docs/cdc-postgres.md lists the keys it supports); remove it, or run Debezium's connector for it"
	}
	return ""
}
