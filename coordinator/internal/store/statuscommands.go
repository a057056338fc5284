package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// The status commands are the status topic's records, as Kafka Connect
// writes them:
//
//	command              record
//	PutConnectorStatus   status-connector-<name> {state, trace, worker_id, generation 0}
//	PutTaskStatus        status-task-<name>-<n> {state, trace, worker_id, generation}
//	DeleteConnectorStatus status-connector-<name> (null)
//	MarkTopicUse         status-topic-<topic>:connector-<name> (KIP-558)
//
// The leader writes most of them through its StatusQueue (Record gives a
// command's record for it), which coalesces them; Stores.Apply writes them
// with other commands in one transaction.

// PutConnectorStatus records a connector's state as the leader sees it.
type PutConnectorStatus struct {
	Name, State, Trace string
	// Worker is the coordinator that runs the connector (its REST address).
	Worker string
}

func (PutConnectorStatus) topic() Topic { return TopicStatus }

func (c PutConnectorStatus) encode(*view) ([]records.Record, error) {
	if c.Name == "" || c.State == "" {
		return nil, errors.New("a connector status needs the connector's name and a state")
	}
	return []records.Record{c.Record()}, nil
}

// Record is the command's status record.
func (c PutConnectorStatus) Record() records.Record {
	return records.Record{Key: records.ConnectorStatusKey(c.Name), Value: records.EncodeStatus(c.State, c.Trace, c.Worker, 0)}
}

// DeleteConnectorStatus removes a deleted connector's status.
type DeleteConnectorStatus struct{ Name string }

func (DeleteConnectorStatus) topic() Topic { return TopicStatus }

func (c DeleteConnectorStatus) encode(*view) ([]records.Record, error) {
	if c.Name == "" {
		return nil, errors.New("deleting a connector status needs the connector's name")
	}
	return []records.Record{c.Record()}, nil
}

// Record is the command's tombstone.
func (c DeleteConnectorStatus) Record() records.Record {
	return records.Record{Key: records.ConnectorStatusKey(c.Name)}
}

// PutTaskStatus records a task's state as its agent reported it, under the
// generation of the agent's assignment: a reader keeps the newest
// generation's (StatusState.Apply).
type PutTaskStatus struct {
	Connector  string
	Task       int
	State      string
	Trace      string
	Worker     string
	Generation int64
}

func (PutTaskStatus) topic() Topic { return TopicStatus }

func (c PutTaskStatus) encode(*view) ([]records.Record, error) {
	if c.Connector == "" || c.Task < 0 || c.State == "" {
		return nil, fmt.Errorf("invalid task status %s-%d %q", c.Connector, c.Task, c.State)
	}
	return []records.Record{c.Record()}, nil
}

// Record is the command's status record.
func (c PutTaskStatus) Record() records.Record {
	return records.Record{Key: records.TaskStatusKey(c.Connector, c.Task), Value: records.EncodeStatus(c.State, c.Trace, c.Worker, c.Generation)}
}

// MaxTopicName is the longest topic name Kafka accepts.
const MaxTopicName = 249

// MarkTopicUse records that a connector's task used a topic (KIP-558's
// active topics), discovered at At.
type MarkTopicUse struct {
	Connector string
	Task      int
	Topic     string
	At        time.Time
}

func (MarkTopicUse) topic() Topic { return TopicStatus }

func (c MarkTopicUse) encode(*view) ([]records.Record, error) {
	if err := c.Valid(); err != nil {
		return nil, err
	}
	return []records.Record{c.Record()}, nil
}

// Valid refuses a use no reader should keep: an empty topic, or a name
// longer than Kafka allows (no topic a task used, and its record could be
// too large to write).
func (c MarkTopicUse) Valid() error {
	if c.Connector == "" || c.Topic == "" || len(c.Topic) > MaxTopicName {
		return fmt.Errorf("invalid topic use %q of connector %q", c.Topic, c.Connector)
	}
	return nil
}

// Record is the command's status record.
func (c MarkTopicUse) Record() records.Record {
	return records.Record{Key: records.TopicStatusKey(c.Connector, c.Topic), Value: records.EncodeTopicUse(records.TopicUse{
		Name: c.Topic, Connector: c.Connector, Task: c.Task, DiscoverTimestamp: c.At.UnixMilli(),
	})}
}
