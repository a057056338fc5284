package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/kafkalog"
	"github.com/sluice-io/sluice/shared/records"
)

// The fleet topic (--fleet-topic) holds what fleet operations decided, so
// that a new leader carries on with it (docs/operations.md): one compacted
// record per key,
//
//	agent-<id>        an agent cordoned or draining (a tombstone: active)
//	maintenance-<id>  an open maintenance window (a tombstone: closed)
//	rollout-<id>      a config rollout, with its progress
//	agentroll-<id>    a rolling restart of agents, with its progress
//	rebalance         the rebalance in progress, if any
//	topic-<name>      a topic Sluice created or relies on, which it never
//	                  creates again by itself once it vanished (a
//	                  tombstone: no longer relied on)
//
// each value JSON (the types of fleetmodel.go). Only the leader writes it,
// through its writer, with the fleet commands (these below, and the
// window and rollout transitions of fleetcommands.go).
const (
	fleetAgentPrefix       = "agent-"
	fleetMaintenancePrefix = "maintenance-"
	fleetRolloutPrefix     = "rollout-"
	fleetAgentRollPrefix   = "agentroll-"
	fleetRebalanceKey      = "rebalance"
	fleetTopicPrefix       = "topic-"
)

// TopicMark is what the fleet topic says of a topic Sluice relies on: its
// purpose, the Kafka cluster it lives in, the connector it belongs to (a
// connector's own offsets topic) and since when.
type TopicMark struct {
	Purpose   string    `json:"purpose"`
	Cluster   string    `json:"cluster,omitempty"`
	Connector string    `json:"connector,omitempty"`
	Since     time.Time `json:"since"`
}

// MarkTopic records that Sluice relies on a topic.
type MarkTopic struct {
	Name string
	Mark TopicMark
}

func (MarkTopic) topic() Topic { return TopicFleet }

func (c MarkTopic) encode(*view) ([]records.Record, error) {
	if c.Name == "" {
		return nil, errors.New("a topic mark needs the topic's name")
	}
	return jsonRecords(fleetTopicPrefix+c.Name, c.Mark)
}

// ForgetTopic removes a topic's mark: Sluice no longer relies on it.
type ForgetTopic struct{ Name string }

func (ForgetTopic) topic() Topic { return TopicFleet }

func (c ForgetTopic) encode(*view) ([]records.Record, error) {
	if c.Name == "" {
		return nil, errors.New("forgetting a topic needs its name")
	}
	return tombstone(fleetTopicPrefix + c.Name), nil
}

// AgentMark is what the fleet topic says of one agent: cordoned, or
// draining since StartedAt (Force: its tasks that no other agent may run
// are unassigned rather than block the drain), and who made it so.
type AgentMark struct {
	State     string    `json:"state"`
	Force     bool      `json:"force,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Principal string    `json:"principal,omitempty"`
	// Origin is who made the mark (api.CordonOperator, CordonPreStop,
	// CordonAgentRoll); empty in a mark written before origins were
	// recorded, which was an operator's (By).
	Origin string `json:"origin,omitempty"`
	// AgentStartedAt is, for a pre-stop mark, when the agent process
	// that was running as it was made had started (as that process said
	// at register): the mark is lifted once a process that started at
	// another time registers (fleet/prestop). Zero when the leader did not
	// know it.
	AgentStartedAt time.Time `json:"agent_started_at,omitzero"`
}

// By is who made the mark: its Origin, api.CordonOperator when it has
// none.
func (m AgentMark) By() string {
	if m.Origin == "" {
		return api.CordonOperator
	}
	return m.Origin
}

// FleetCommand is a command of the fleet topic (FleetStore.Apply takes
// only those; Stores.Apply takes every Command).
type FleetCommand = Command

// MarkAgent cordons an agent or starts its drain; State AgentActive
// removes its mark.
type MarkAgent struct {
	ID   string
	Mark AgentMark
}

func (MarkAgent) topic() Topic { return TopicFleet }

func (c MarkAgent) encode(*view) ([]records.Record, error) {
	if c.ID == "" {
		return nil, errors.New("an agent mark needs the agent's id")
	}
	switch c.Mark.State {
	case api.AgentActive:
		return tombstone(fleetAgentPrefix + c.ID), nil
	case api.AgentCordoned, api.AgentDraining:
		return jsonRecords(fleetAgentPrefix+c.ID, c.Mark)
	}
	return nil, fmt.Errorf("unknown agent state %q", c.Mark.State)
}

// LiftAgentMark removes agent ID's mark if it is still the one its caller
// read — of origin Origin, made at StartedAt — and answers ErrStale
// otherwise, so that a lift decided on one mark never removes another
// made meanwhile (an operator's cordon of the same agent).
type LiftAgentMark struct {
	ID        string
	Origin    string
	StartedAt time.Time
}

func (LiftAgentMark) topic() Topic { return TopicFleet }

func (c LiftAgentMark) encode(v *view) ([]records.Record, error) {
	if c.ID == "" {
		return nil, errors.New("lifting an agent's mark needs the agent's id")
	}
	if v.fleet == nil {
		return nil, fmt.Errorf("%w: no fleet state to check agent %s's mark against", ErrStale, c.ID)
	}
	m, ok := v.fleet.Agent(c.ID)
	if !ok || m.By() != c.Origin || !m.StartedAt.Equal(c.StartedAt) {
		return nil, fmt.Errorf("%w: agent %s's mark is no longer the %s one made at %s", ErrStale, c.ID, c.Origin, c.StartedAt.Format(time.RFC3339Nano))
	}
	return tombstone(fleetAgentPrefix + c.ID), nil
}

// PutRebalance records the rebalance in progress; a nil Rebalance removes
// it.
type PutRebalance struct{ Rebalance *Rebalance }

func (PutRebalance) topic() Topic { return TopicFleet }

func (c PutRebalance) encode(*view) ([]records.Record, error) {
	if c.Rebalance == nil {
		return tombstone(fleetRebalanceKey), nil
	}
	return jsonRecords(fleetRebalanceKey, c.Rebalance)
}

// jsonRecords is the one record of key holding v as JSON.
func jsonRecords(key string, v any) ([]records.Record, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode fleet record %s: %w", key, err)
	}
	return []records.Record{{Key: key, Value: b}}, nil
}

// tombstone is the one record removing key.
func tombstone(key string) []records.Record { return []records.Record{{Key: key}} }

// FleetState is what the fleet topic holds, as read so far.
type FleetState struct {
	mu        sync.Mutex
	agents    map[string]AgentMark
	windows   map[string]Window
	rollouts  map[string]Rollout
	rolls     map[string]AgentRoll
	rebalance *Rebalance
	topics    map[string]TopicMark
	changed   chan struct{}
}

// NewFleetState makes an empty state.
func NewFleetState() *FleetState {
	return &FleetState{agents: map[string]AgentMark{}, windows: map[string]Window{},
		rollouts: map[string]Rollout{}, rolls: map[string]AgentRoll{}, topics: map[string]TopicMark{}, changed: make(chan struct{})}
}

// Changed is closed at the next change; take it again after each.
func (s *FleetState) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// apply applies one record; an undecodable one is reported and skipped.
func (s *FleetState) apply(key string, value []byte) error {
	s.mu.Lock()
	defer func() {
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}()
	switch {
	case strings.HasPrefix(key, fleetAgentPrefix):
		return applyJSON(s.agents, strings.TrimPrefix(key, fleetAgentPrefix), value)
	case strings.HasPrefix(key, fleetMaintenancePrefix):
		return applyJSON(s.windows, strings.TrimPrefix(key, fleetMaintenancePrefix), value)
	case strings.HasPrefix(key, fleetRolloutPrefix):
		return applyJSON(s.rollouts, strings.TrimPrefix(key, fleetRolloutPrefix), value)
	case strings.HasPrefix(key, fleetAgentRollPrefix):
		return applyJSON(s.rolls, strings.TrimPrefix(key, fleetAgentRollPrefix), value)
	case strings.HasPrefix(key, fleetTopicPrefix):
		return applyJSON(s.topics, strings.TrimPrefix(key, fleetTopicPrefix), value)
	case key == fleetRebalanceKey:
		if value == nil {
			s.rebalance = nil
			return nil
		}
		var r Rebalance
		if err := json.Unmarshal(value, &r); err != nil {
			return err
		}
		s.rebalance = &r
		return nil
	}
	return fmt.Errorf("unknown fleet record key %q", key)
}

// applyJSON sets m[id] from value, or deletes it for a tombstone.
func applyJSON[V any](m map[string]V, id string, value []byte) error {
	if value == nil {
		delete(m, id)
		return nil
	}
	var v V
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	m[id] = v
	return nil
}

// Agent is an agent's mark; ok is false for an active agent.
func (s *FleetState) Agent(id string) (AgentMark, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.agents[id]
	return m, ok
}

// Agents are the marks of every cordoned or draining agent, by id.
func (s *FleetState) Agents() map[string]AgentMark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.agents)
}

// Topic is the mark of a topic Sluice relies on; ok is false for one it
// never recorded.
func (s *FleetState) Topic(name string) (TopicMark, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.topics[name]
	return m, ok
}

// Window is a copy of an open maintenance window: changing it changes
// nothing here (a write through Apply does).
func (s *FleetState) Window(id string) (Window, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.windows[id]
	return deepCopy(w), ok
}

// Windows are copies of the open maintenance windows, oldest first.
func (s *FleetState) Windows() []Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.windows))
	slices.SortFunc(out, func(a, b Window) int { return strings.Compare(a.ID, b.ID) })
	return deepCopy(out)
}

// Rollout is a copy of one rollout.
func (s *FleetState) Rollout(id string) (Rollout, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rollouts[id]
	return deepCopy(r), ok
}

// Rollouts are copies of every rollout the topic keeps, oldest first.
func (s *FleetState) Rollouts() []Rollout {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.rollouts))
	slices.SortFunc(out, func(a, b Rollout) int { return strings.Compare(a.ID, b.ID) })
	return deepCopy(out)
}

// AgentRoll is a copy of one agent roll.
func (s *FleetState) AgentRoll(id string) (AgentRoll, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rolls[id]
	return deepCopy(r), ok
}

// AgentRolls are copies of every agent roll the topic keeps, oldest
// first.
func (s *FleetState) AgentRolls() []AgentRoll {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.rolls))
	slices.SortFunc(out, func(a, b AgentRoll) int { return strings.Compare(a.ID, b.ID) })
	return deepCopy(out)
}

// deepCopy copies v through JSON, which its types are made for: the
// values the state holds share no slice or map with what callers change.
func deepCopy[T any](v T) T {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out T
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// Rebalance is the rebalance in progress, nil when there is none.
func (s *FleetState) Rebalance() *Rebalance {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rebalance == nil {
		return nil
	}
	r := deepCopy(*s.rebalance)
	return &r
}

// FleetStore follows the fleet topic into a FleetState; the leader writes
// it through Apply.
type FleetStore struct {
	follower
	State         *FleetState
	onDecodeError func(key string, err error)
	// wmu is held by a write of fleet commands from the read of the state
	// they transform until the write is applied (Stores.Apply). Lock
	// order: a connector's lock (connlock) and a controller's own mutex
	// are taken before it, never while it is held.
	wmu sync.Mutex
}

// NewFleetStore makes a fleet store; call Start before use.
func NewFleetStore(topic string, onDecodeError func(string, error), opts ...kgo.Opt) (*FleetStore, error) {
	s := &FleetStore{State: NewFleetState(), onDecodeError: onDecodeError}
	log, err := kafkalog.New(topic, s.gated(s.applyRecord), opts...)
	if err != nil {
		return nil, err
	}
	s.topic, s.log = topic, log
	return s, nil
}

func (s *FleetStore) applyRecord(r *kgo.Record) {
	if err := s.State.apply(string(r.Key), r.Value); err != nil && s.onDecodeError != nil {
		s.onDecodeError(string(r.Key), err)
	}
}

// maxFleetRecordBytes bounds one fleet record, below the broker's default
// max.message.bytes (1 MB) with room for the batch framing.
const maxFleetRecordBytes = 900_000

// Apply writes fleet commands in one transaction, as Stores.Apply does
// for commands of every topic.
func (s *FleetStore) Apply(ctx context.Context, cmds ...FleetCommand) error {
	for _, c := range cmds {
		if c.topic() != TopicFleet {
			return fmt.Errorf("%T is no fleet command: write it with Stores.Apply", c)
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	recs, err := encodeIn(newView(s.State), cmds)
	if err != nil {
		return err
	}
	if err := checkFleetSizes(recs); err != nil {
		return err
	}
	return s.write(ctx, recs...)
}

// Start follows the topic and returns once it has read to its end.
func (s *FleetStore) Start(ctx context.Context) error {
	s.log.Start()
	return s.log.ReadToEnd(ctx)
}

// Close stops following.
func (s *FleetStore) Close() { s.log.Close() }
