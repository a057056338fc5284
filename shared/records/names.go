package records

import "fmt"

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
