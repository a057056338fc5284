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
