package store

import (
	"context"
	"fmt"

	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// The config commands are the only producers of config records, so the
// ordering rules Kafka Connect readers rely on live here, once, instead of
// at every call site.
//
//	command             records, in order
//	CreateConnector     [target-state-<name>], connector-<name>
//	PutConnectorConfig  connector-<name>
//	SetTargetState      target-state-<name>
//	PutTaskConfigs      task-<name>-0 … task-<name>-<n-1>, commit-<name>
//	StopConnector       commit-<name> {"tasks":0}, target-state-<name> STOPPED
//	DeleteConnector     connector-<name> (null), target-state-<name> (null)
//	PutFencingCount     tasks-fencing-<name>
//	SetLoggerLevel      logger-cluster-<namespace>
//	MarkSigning         sluice-signing-since
//
// Each has validate, which rejects a command whose records no reader would
// accept (DecodeConfig refuses an unknown target state, so every
// coordinator would skip it and the write would be silently lost), and
// records, its records in the order they are written; configCommand
// makes both a Command of the config topic.
type configCommand interface {
	validate() error
	records() []records.Record
}

func encodeConfig(c configCommand) ([]records.Record, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c.records(), nil
}

// CreateConnector writes a new connector's config. With TargetState set it
// writes the target state first, as Kafka Connect does, so the connector
// never runs before it is paused or stopped; with TargetState empty it
// writes the config alone and the connector starts (STARTED).
type CreateConnector struct {
	Name   string
	Config map[string]string
	// Plugin is the plugin version the config resolved to (nil: none).
	Plugin *records.PluginPin
	// TargetState is empty, or STARTED, PAUSED or STOPPED (records.Target*).
	TargetState string
}

func (CreateConnector) topic() Topic { return TopicConfig }

func (c CreateConnector) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c CreateConnector) validate() error {
	if c.TargetState == "" {
		return nil
	}
	return checkTarget(c.TargetState)
}

func (c CreateConnector) records() []records.Record {
	if c.TargetState == "" {
		return PutConnectorConfig{Name: c.Name, Config: c.Config, Plugin: c.Plugin}.records()
	}
	return append(SetTargetState{Name: c.Name, State: c.TargetState}.records(),
		PutConnectorConfig{Name: c.Name, Config: c.Config, Plugin: c.Plugin}.records()...)
}

// PutConnectorConfig writes a connector's config, creating the connector or
// replacing its config; its target state stays as it is.
type PutConnectorConfig struct {
	Name   string
	Config map[string]string
	// Plugin is the plugin version the config resolved to (nil: none).
	Plugin *records.PluginPin
}

func (PutConnectorConfig) topic() Topic { return TopicConfig }

func (c PutConnectorConfig) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c PutConnectorConfig) validate() error { return nil }

func (c PutConnectorConfig) records() []records.Record {
	return []records.Record{{Key: records.ConnectorKey(c.Name), Value: records.EncodeConnectorConfig(c.Config, c.Plugin)}}
}

// SetTargetState writes a connector's target state.
type SetTargetState struct {
	Name string
	// State is STARTED, PAUSED or STOPPED (records.Target*).
	State string
}

func (SetTargetState) topic() Topic { return TopicConfig }

func (c SetTargetState) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c SetTargetState) validate() error { return checkTarget(c.State) }

func (c SetTargetState) records() []records.Record {
	return []records.Record{{Key: records.TargetStateKey(c.Name), Value: records.EncodeTargetState(c.State)}}
}

// PutTaskConfigs writes a connector's task set as Kafka Connect does: every
// task config, then the commit record naming their count, which makes them
// take effect together (ConfigState holds task configs back until it).
// No tasks writes the commit alone: an empty task set.
type PutTaskConfigs struct {
	Name  string
	Tasks []map[string]string
}

func (PutTaskConfigs) topic() Topic { return TopicConfig }

func (c PutTaskConfigs) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c PutTaskConfigs) validate() error { return nil }

func (c PutTaskConfigs) records() []records.Record {
	recs := make([]records.Record, 0, len(c.Tasks)+1)
	for i, tc := range c.Tasks {
		recs = append(recs, records.Record{Key: records.TaskKey(c.Name, i), Value: records.EncodeProperties(tc)})
	}
	return append(recs, records.Record{Key: records.CommitKey(c.Name), Value: records.EncodeCommit(len(c.Tasks))})
}

// StopConnector stops a connector: its task set is emptied first, then its
// target state becomes STOPPED, so a reader never sees a stopped connector
// that still has tasks to run.
type StopConnector struct {
	Name string
}

func (StopConnector) topic() Topic { return TopicConfig }

func (c StopConnector) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c StopConnector) validate() error { return nil }

func (c StopConnector) records() []records.Record {
	return append(PutTaskConfigs{Name: c.Name}.records(),
		SetTargetState{Name: c.Name, State: records.TargetStopped}.records()...)
}

// DeleteConnector removes a connector: tombstones for its config and its
// target state. Its task configs and fencing count stay, as in Kafka
// Connect: they bound the task ids a re-created connector must fence.
type DeleteConnector struct {
	Name string
}

func (DeleteConnector) topic() Topic { return TopicConfig }

func (c DeleteConnector) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c DeleteConnector) validate() error { return nil }

func (c DeleteConnector) records() []records.Record {
	return []records.Record{{Key: records.ConnectorKey(c.Name)}, {Key: records.TargetStateKey(c.Name)}}
}

// PutFencingCount writes the exactly-once task-count record
// (tasks-fencing-<name>): every transactional id of an earlier task
// generation has been fenced, and Count tasks may now run.
type PutFencingCount struct {
	Name  string
	Count int
}

func (PutFencingCount) topic() Topic { return TopicConfig }

func (c PutFencingCount) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c PutFencingCount) validate() error {
	if c.Count < 0 {
		return fmt.Errorf("negative task count %d", c.Count)
	}
	return nil
}

func (c PutFencingCount) records() []records.Record {
	return []records.Record{{Key: records.FencingKey(c.Name), Value: records.EncodeFencing(c.Count)}}
}

// SetLoggerLevel writes a cluster-wide log level (KIP-976) as Kafka
// Connect does: logger-cluster-<namespace> {"level":<level>}. Every
// coordinator applies it as it reads it, and the leader sends it to the
// agents. The level is written as log4j spells it (DEBUG for debug).
type SetLoggerLevel struct {
	Namespace string
	// Level is a log4j level name, in any case (logging.ParseLevel).
	Level string
}

func (SetLoggerLevel) topic() Topic { return TopicConfig }

func (c SetLoggerLevel) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c SetLoggerLevel) validate() error {
	if c.Namespace == "" {
		return fmt.Errorf("empty logger namespace")
	}
	if _, _, ok := logging.ParseLevel(c.Level); !ok {
		return fmt.Errorf("invalid log level %q", c.Level)
	}
	return nil
}

func (c SetLoggerLevel) records() []records.Record {
	_, name, _ := logging.ParseLevel(c.Level)
	return []records.Record{{Key: records.LoggerKey(c.Namespace), Value: records.EncodeLoggerLevel(name)}}
}

func checkTarget(state string) error {
	switch state {
	case records.TargetStarted, records.TargetPaused, records.TargetStopped:
		return nil
	}
	return fmt.Errorf("unknown target state %q", state)
}

// Apply writes the records of cmds, in the order given, in one transaction
// through the leader writer, and returns once State has applied them. So
// several commands in one call (a create and its first task set, say) take
// effect all or nothing. An invalid command, or records too large to write
// (a *TooLargeError, see Check), write nothing.
func (s *ConfigStore) Apply(ctx context.Context, cmds ...Command) error {
	recs, err := s.encodeChecked(ctx, cmds)
	if err != nil {
		return err
	}
	return s.write(ctx, recs...)
}

// Check reports whether Apply could write cmds: the commands are valid,
// each record fits the config topic's largest record (with a limit set,
// see SetRecordLimit) and all of them fit MaxWriteBytes. A size that does
// not fit is a *TooLargeError. It writes nothing, so a caller can refuse a
// request before it changes anything else.
func (s *ConfigStore) Check(ctx context.Context, cmds ...Command) error {
	_, err := s.encodeChecked(ctx, cmds)
	return err
}

// SetRecordLimit makes Check and Apply measure each record against l.
func (s *ConfigStore) SetRecordLimit(l *RecordLimit) { s.limit.Store(l) }

func (s *ConfigStore) encodeChecked(ctx context.Context, cmds []Command) ([]records.Record, error) {
	for _, c := range cmds {
		if c.topic() != TopicConfig {
			return nil, fmt.Errorf("%T is no config command: write it with Stores.Apply", c)
		}
	}
	recs, err := encode(cmds)
	if err != nil {
		return nil, err
	}
	if err := s.checkRecords(ctx, recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// checkRecords measures config records against the topic's record limit
// and MaxWriteBytes.
func (s *ConfigStore) checkRecords(ctx context.Context, recs []records.Record) error {
	if len(recs) == 0 {
		return nil // nothing to measure: the topic's limit is not asked
	}
	limit := producerBatchMaxBytes - recordFraming
	if l := s.limit.Load(); l != nil {
		limit = l.Max(ctx)
	}
	return checkSizes(recs, limit)
}

// MarkSigning records where the signing of coordinators' records began
// (recordsig): written once, by the first leader with a key, so that the
// records of the version before are still taken.
type MarkSigning struct {
	Since recordsig.Since
}

func (MarkSigning) topic() Topic { return TopicConfig }

func (c MarkSigning) encode(*view) ([]records.Record, error) { return encodeConfig(c) }

func (c MarkSigning) validate() error { return nil }

func (c MarkSigning) records() []records.Record {
	return []records.Record{{Key: recordsig.MarkerKey, Value: recordsig.EncodeSince(c.Since)}}
}
