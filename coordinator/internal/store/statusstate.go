package store

import (
	"sort"
	"sync"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// InstanceStatus is the status of a connector or a task.
type InstanceStatus struct {
	State      string
	Trace      string
	WorkerID   string
	Generation int64
}

type taskKey struct {
	connector string
	task      int
}

// StatusState is the coordinator's view of the status topic.
type StatusState struct {
	mu         sync.RWMutex
	connectors map[string]InstanceStatus
	tasks      map[taskKey]InstanceStatus
	topics     map[string]map[string]bool // connector -> topic set
	maxGen     int64
	// changed is, by connector, when its status or a task's last changed
	// (the latest timestamp ApplyAt was given).
	changed map[string]time.Time
}

// NewStatusState returns an empty state.
func NewStatusState() *StatusState {
	return &StatusState{
		connectors: map[string]InstanceStatus{},
		tasks:      map[taskKey]InstanceStatus{},
		topics:     map[string]map[string]bool{},
		changed:    map[string]time.Time{},
	}
}

// Apply feeds one decoded status record into the state. A task status with
// an older generation than the one held is ignored, so a late report from a
// task's previous owner never overwrites its successor's.
func (s *StatusState) Apply(rec records.StatusRecord) { s.ApplyAt(rec, time.Time{}) }

// ApplyAt is Apply of a record written at at (its Kafka timestamp): a
// connector or task status applied makes at its connector's Changed.
func (s *StatusState) ApplyAt(rec records.StatusRecord, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch rec.Kind {
	case records.StatusConnector:
		if rec.Tombstone {
			delete(s.connectors, rec.Connector)
			delete(s.changed, rec.Connector)
			return
		}
		s.connectors[rec.Connector] = toInstance(rec.Status)
		s.touch(rec.Connector, at)
	case records.StatusTask:
		k := taskKey{rec.Connector, rec.Task}
		if rec.Tombstone {
			delete(s.tasks, k)
			if _, ok := s.connectors[rec.Connector]; ok {
				// (A deleted connector's tasks go after it: no time to keep.)
				s.touch(rec.Connector, at)
			}
			return
		}
		st := toInstance(rec.Status)
		if old, ok := s.tasks[k]; ok && st.Generation < old.Generation {
			return
		}
		s.tasks[k] = st
		s.touch(rec.Connector, at)
		if st.Generation > s.maxGen {
			s.maxGen = st.Generation
		}
	case records.StatusTopic:
		set := s.topics[rec.Connector]
		if rec.Tombstone {
			delete(set, rec.Topic)
			return
		}
		if set == nil {
			set = map[string]bool{}
			s.topics[rec.Connector] = set
		}
		set[rec.Topic] = true
	}
}

func toInstance(st *records.Status) InstanceStatus {
	out := InstanceStatus{State: st.State, WorkerID: st.WorkerID, Generation: st.Generation}
	if st.Trace != nil {
		out.Trace = *st.Trace
	}
	return out
}

// touch makes at connector's Changed when it is later; s.mu is held.
func (s *StatusState) touch(connector string, at time.Time) {
	if at.After(s.changed[connector]) {
		s.changed[connector] = at
	}
}

// Changed is when the status of connector or of one of its tasks last
// changed (zero: not known).
func (s *StatusState) Changed(connector string) time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changed[connector]
}

// Connector returns a connector's status.
func (s *StatusState) Connector(name string) (InstanceStatus, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.connectors[name]
	return st, ok
}

// Task returns a task's status.
func (s *StatusState) Task(name string, task int) (InstanceStatus, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st, ok := s.tasks[taskKey{name, task}]
	return st, ok
}

// TaskIDs returns the task numbers of name that have a status, sorted.
func (s *StatusState) TaskIDs(name string) []int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var ids []int
	for k := range s.tasks {
		if k.connector == name {
			ids = append(ids, k.task)
		}
	}
	sort.Ints(ids)
	return ids
}

// Topics returns the topics a connector used, sorted.
func (s *StatusState) Topics(name string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.topics[name]))
	for t := range s.topics[name] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// MaxGeneration is the highest task generation seen, so a restarted
// coordinator continues numbering above it.
func (s *StatusState) MaxGeneration() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.maxGen
}

// TaskOwners returns, for each task with a live status, the worker that
// reported it and its generation.
func (s *StatusState) TaskOwners() map[string]map[int]InstanceStatus {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]map[int]InstanceStatus{}
	for k, st := range s.tasks {
		if out[k.connector] == nil {
			out[k.connector] = map[int]InstanceStatus{}
		}
		out[k.connector][k.task] = st
	}
	return out
}

// DecodeInstance reads a status record that is not applied yet (one still
// queued for writing) as the state would hold it; false for a tombstone or
// a record that is not a connector or task status.
func DecodeInstance(r records.Record) (InstanceStatus, bool) {
	rec, err := records.DecodeStatus(r.Key, r.Value)
	if err != nil || rec.Tombstone || (rec.Kind != records.StatusConnector && rec.Kind != records.StatusTask) {
		return InstanceStatus{}, false
	}
	return toInstance(rec.Status), true
}
