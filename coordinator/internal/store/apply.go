package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// Topic names the log a command writes to.
type Topic string

// The logs the leader writes.
const (
	TopicConfig Topic = "config"
	TopicStatus Topic = "status"
	TopicFleet  Topic = "fleet"
)

// Command is one change to a record the leader writes: a connector's
// config, a status, a fleet operation's record. Commands are the only
// producers of those records: the interface is sealed (its methods are
// unexported), so what each change writes, and the rules a reader relies
// on, live here once. Every input that varies (a time, an id) is a field:
// encoding a command reads no clock, and the same command and state give
// the same records.
type Command interface {
	// topic is the log the command's records go to.
	topic() Topic
	// encode validates the command against v (what the topics hold, with
	// the changes of the commands before it in the same call) and returns
	// its records in the order they are written.
	encode(v *view) ([]records.Record, error)
}

// ErrStale is what a fleet command answers when the record it changes is
// not (or no longer) in the state the change starts from: another change
// landed since its caller read it. Nothing of the call is written.
var ErrStale = errors.New("the record changed since it was read")

// view is what a call's commands are encoded against: the fleet state as
// applied, overlaid with the records earlier commands of the same call
// produce, so that two changes of one rollout in one call compose.
type view struct {
	fleet    *FleetState
	rollouts map[string]*Rollout // nil: removed in this call
	windows  map[string]*Window
	rolls    map[string]*AgentRoll
}

func newView(fleet *FleetState) *view {
	return &view{fleet: fleet, rollouts: map[string]*Rollout{}, windows: map[string]*Window{}, rolls: map[string]*AgentRoll{}}
}

// rollout is a copy of rollout id as the call has it so far.
func (v *view) rollout(id string) (Rollout, bool) {
	if r, ok := v.rollouts[id]; ok {
		if r == nil {
			return Rollout{}, false
		}
		return deepCopy(*r), true
	}
	if v.fleet == nil {
		return Rollout{}, false
	}
	return v.fleet.Rollout(id)
}

// agentRoll is a copy of agent roll id as the call has it so far.
func (v *view) agentRoll(id string) (AgentRoll, bool) {
	if r, ok := v.rolls[id]; ok {
		if r == nil {
			return AgentRoll{}, false
		}
		return deepCopy(*r), true
	}
	if v.fleet == nil {
		return AgentRoll{}, false
	}
	return v.fleet.AgentRoll(id)
}

// window is a copy of window id as the call has it so far.
func (v *view) window(id string) (Window, bool) {
	if w, ok := v.windows[id]; ok {
		if w == nil {
			return Window{}, false
		}
		return deepCopy(*w), true
	}
	if v.fleet == nil {
		return Window{}, false
	}
	return v.fleet.Window(id)
}

// encode validates cmds and returns their records, command after command.
// It is the encoding of commands that need no state (config and status
// commands); fleet transitions need encodeIn with the fleet state.
func encode(cmds []Command) ([]records.Record, error) {
	return encodeIn(newView(nil), cmds)
}

func encodeIn(v *view, cmds []Command) ([]records.Record, error) {
	var recs []records.Record
	for _, cmd := range cmds {
		r, err := cmd.encode(v)
		if err != nil {
			return nil, fmt.Errorf("invalid %s command %T: %w", cmd.topic(), cmd, err)
		}
		recs = append(recs, r...)
	}
	return recs, nil
}

// Stores are the logs the leader writes — config, status and fleet — and
// its writer: Apply is the one write path of everything the leader
// persists (doc.go lists it all).
type Stores struct {
	Config *ConfigStore
	Status *StatusStore
	Fleet  *FleetStore
	writer atomic.Pointer[Writer]
	// faults is the test seam of SetFaults (nil: none).
	faults faults.Injector
}

// SetFaults installs a test seam, before the first SetWriter: inj is
// asked at faults.StoreCommit of every transaction of the leader writer
// that holds a window's, a rollout's or an agent roll's record.
func (s *Stores) SetFaults(inj faults.Injector) { s.faults = inj }

// NewStores gathers the three stores.
func NewStores(config *ConfigStore, status *StatusStore, fleet *FleetStore) *Stores {
	return &Stores{Config: config, Status: status, Fleet: fleet}
}

// SetWriter installs (or, with nil, removes) the leader writer on every
// store.
func (s *Stores) SetWriter(w *Writer) {
	if w != nil && s.faults != nil {
		w.w.BeforeCommitOf = s.commitFault
	}
	s.Config.SetWriter(w)
	s.Status.SetWriter(w)
	s.Fleet.SetWriter(w)
	s.writer.Store(w)
}

// Apply writes the records of cmds, in the order given, in ONE transaction
// across topics, and returns once each topic's store has applied its
// records: opening a maintenance window and holding its connectors, or a
// rollout step and the config it writes, is all or nothing, for this
// coordinator and for every follower reading read_committed. An invalid or
// stale command, or a record too large (a *TooLargeError), writes nothing.
//
// Calls holding a fleet command are serialised (FleetStore.wmu) from the
// read of the fleet state they transform to the moment their write is
// applied, so a transition always starts from the latest record.
func (s *Stores) Apply(ctx context.Context, cmds ...Command) error {
	if slices.ContainsFunc(cmds, func(c Command) bool { return c.topic() == TopicFleet }) {
		s.Fleet.wmu.Lock()
		defer s.Fleet.wmu.Unlock()
		// The wait until the records are applied must end while wmu is
		// held, whatever the caller's context does (a REST client leaving):
		// the next transition would otherwise be checked against a state
		// without this one. It is bounded on its own (writeParts).
		ctx = context.WithoutCancel(ctx)
	}
	parts, err := s.encode(ctx, cmds)
	if err != nil {
		return err
	}
	return writeParts(ctx, s.writer.Load(), parts...)
}

// commitFault asks the fault seam about a transaction holding a window's
// or a rollout's record.
func (s *Stores) commitFault(ctx context.Context, recs []*kgo.Record) error {
	var keys []string
	fleet := false
	for _, r := range recs {
		switch r.Topic {
		case s.Fleet.topic:
			k := string(r.Key)
			fleet = fleet || strings.HasPrefix(k, fleetMaintenancePrefix) || strings.HasPrefix(k, fleetRolloutPrefix) ||
				strings.HasPrefix(k, fleetAgentRollPrefix)
		case s.Config.topic:
		default:
			continue
		}
		keys = append(keys, string(r.Key))
	}
	if !fleet {
		return nil
	}
	return faults.Check(ctx, s.faults, faults.StoreCommit, keys)
}

// encode splits cmds by topic, encodes them in their order and checks the
// sizes each topic allows.
func (s *Stores) encode(ctx context.Context, cmds []Command) ([]part, error) {
	v := newView(s.Fleet.State)
	byTopic := map[Topic][]records.Record{}
	for _, cmd := range cmds {
		recs, err := encodeIn(v, []Command{cmd})
		if err != nil {
			return nil, err
		}
		byTopic[cmd.topic()] = append(byTopic[cmd.topic()], recs...)
	}
	if err := s.Config.checkRecords(ctx, byTopic[TopicConfig]); err != nil {
		return nil, err
	}
	if err := checkFleetSizes(byTopic[TopicFleet]); err != nil {
		return nil, err
	}
	return []part{
		{&s.Config.follower, byTopic[TopicConfig]},
		{&s.Status.follower, byTopic[TopicStatus]},
		{&s.Fleet.follower, byTopic[TopicFleet]},
	}, nil
}

// part is the records of one call for one followed topic.
type part struct {
	f    *follower
	recs []records.Record
}

// writeParts appends every part's records through w in one transaction and
// waits until each topic's follower has applied its own. A transaction
// refused because w was fenced wrote nothing: when w's renew hands over
// another usable writer (this coordinator still leads and re-fenced), the
// records are written once more through it.
func writeParts(ctx context.Context, w *Writer, parts ...part) error {
	if w == nil {
		return ErrNotLeader
	}
	err := writePartsOnce(ctx, w, parts)
	if errors.Is(err, kafkautil.ErrFenced) && w.renew != nil {
		if nw := w.renew(ctx); nw != nil && nw != w {
			return writePartsOnce(ctx, nw, parts)
		}
	}
	return err
}

// writePartsOnce is one attempt of writeParts, through w.
func writePartsOnce(ctx context.Context, w *Writer, parts []part) error {
	var krs []*kgo.Record
	var owners []*follower
	var topics []string
	for _, p := range parts {
		if len(p.recs) == 0 {
			continue
		}
		topics = append(topics, p.f.topic)
		for _, r := range p.recs {
			kr := &kgo.Record{Topic: p.f.topic, Key: []byte(r.Key), Value: r.Value}
			p.f.gate.Key().Sign(p.f.topic, kr)
			krs = append(krs, kr)
			owners = append(owners, p.f)
		}
	}
	if len(krs) == 0 {
		return nil
	}
	names := strings.Join(topics, " and ")
	// The transaction must not be cut off by the caller's context (a REST
	// client leaving, or leadership ending): an interrupted transaction
	// leaves the writer unusable. It is bounded on its own instead.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := w.w.Write(tctx, krs...); err != nil {
		return fmt.Errorf("write to %s: %w", names, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i, r := range krs {
		if err := owners[i].log.WaitPast(wctx, r.Partition, r.Offset); err != nil {
			return fmt.Errorf("wait for write to %s to be applied: %w", owners[i].topic, err)
		}
	}
	return nil
}

// checkFleetSizes refuses a fleet record over maxFleetRecordBytes.
func checkFleetSizes(recs []records.Record) error {
	for _, r := range recs {
		if n := len(r.Key) + len(r.Value); n > maxFleetRecordBytes {
			return &TooLargeError{Key: r.Key, Bytes: n, Limit: maxFleetRecordBytes, Topic: "fleet"}
		}
	}
	return nil
}
