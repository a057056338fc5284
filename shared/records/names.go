package records

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// TransactionalID is a source task's transactional id,
// <group.id>-<connector>-<task> (DESIGN §2). Offset operations on a
// connector write under task 0's.
func TransactionalID(groupID, connector string, task int) string {
	return fmt.Sprintf("%s-%s-%d", groupID, connector, task)
}

// SinkGroupID is a sink connector's consumer group, as Kafka Connect names
// it: connect-<name>, unless consumer.override.group.id says otherwise.
func SinkGroupID(connector string, props map[string]string) string {
	if g := props["consumer.override.group.id"]; g != "" {
		return g
	}
	return "connect-" + connector
}

// SinkInstanceID is the group.instance.id of a sink task's static group
// membership: <group.id>-<connector>-<task>, where group.id is the Sluice
// cluster's (--group-id), as in the source tasks' transactional ids. It is
// the same on every agent of the cluster that runs the task and across the
// cluster's restarts, so a successor takes its predecessor's place; and it
// differs between two clusters on one Kafka whose same-named sinks share
// the consumer group connect-<name> (each is then one member among the
// group's, splitting its partitions, as two Kafka Connect clusters' would
// be, instead of fencing the other cluster's task).
//
// Kafka takes an instance id by its topic-name rules (at most 249
// characters of [a-zA-Z0-9._-]), so a group id or connector name that
// breaks them is spelt with '_' for each other character, shortened when
// too long, and followed by a hash of both as given: two connectors of one
// consumer group (consumer.override.group.id) never share an instance id
// because their names read the same once spelt legally.
func SinkInstanceID(groupID, connector string, task int) string {
	const maxLen = 249
	base := groupID + "-" + connector
	suffix := "-" + strconv.Itoa(task)
	legal := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, base)
	if legal == base && len(base)+len(suffix) <= maxLen {
		return base + suffix
	}
	// Hashed apart, not joined by '-': (a-b, c) and (a, b-c) differ here.
	sum := sha256.Sum256([]byte(groupID + "\x00" + connector))
	hash := "-" + hex.EncodeToString(sum[:8])
	if room := maxLen - len(hash) - len(suffix); len(legal) > room {
		legal = legal[:room]
	}
	return legal + hash + suffix
}

// IsSinkInstanceOf reports whether id is the group.instance.id of one of
// the tasks of the sink connector of the cluster with groupID
// (SinkInstanceID with any task number).
func IsSinkInstanceOf(id, groupID, connector string) bool {
	// The id ends in -<task>; a long name is cut to fit that suffix, so
	// the id is rebuilt for its task number rather than matched by prefix.
	i := strings.LastIndexByte(id, '-')
	if i < 0 || strings.Trim(id[i+1:], "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(id[i+1:])
	return err == nil && SinkInstanceID(groupID, connector, n) == id
}

// Limits of the Kafka clients on the ids Sluice derives from connector
// names. franz-go, which every Sluice process uses, refuses a transactional
// id over 16382 bytes (the Kafka protocol itself allows 32767); a group id
// is a Kafka protocol string, up to 32767 bytes.
const (
	MaxTransactionalIDBytes = 16382
	MaxGroupIDBytes         = 32767
)

// maxTaskDigits is the widest task number: tasks.max is a 32-bit integer.
const maxTaskDigits = 10

// MaxNameBytes is the longest connector name whose tasks' transactional
// ids (<groupID>-<name>-<task>) fit MaxTransactionalIDBytes whatever the
// task number.
func MaxNameBytes(groupID string) int {
	return MaxTransactionalIDBytes - len(groupID) - len("--") - maxTaskDigits
}
