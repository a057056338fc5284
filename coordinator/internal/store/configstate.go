package store

import (
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// Connector is one connector's committed state.
type Connector struct {
	Name   string
	Config map[string]string
	// TargetState is STARTED, PAUSED or STOPPED (records.Target*).
	TargetState string
	// Tasks are the committed task configs, in task order.
	Tasks []map[string]string
	// FencingCount is the task count of the last tasks-fencing record, -1 if none.
	FencingCount int
	// taskHighWater is one above the highest task id ever written for this
	// name, kept when tasks.max is lowered and when the connector is
	// deleted: a task of a higher id may still run on an agent cut off
	// from the cluster, and must be fenced before offsets change.
	taskHighWater int
	// Plugin is the plugin version its config resolved to when written
	// (nil: none recorded).
	Plugin *records.PluginPin
	// Version grows with every change to this connector, so a request can
	// tell whether the connector changed between its check and its write.
	Version int64
	// Changed is when its config, target state or task configs were last
	// written: the timestamp of the latest such record (zero when the
	// records were applied without one, as by Apply).
	Changed time.Time
}

type connectorEntry struct {
	Connector
	hasTarget bool
	pending   map[int]map[string]string
}

// ConfigState is the coordinator's view of the config topic.
type ConfigState struct {
	mu         sync.RWMutex
	connectors map[string]*connectorEntry
	// fencing and pending task configs may arrive before or outlive a config.
	orphans map[string]*connectorEntry
	version int64
	changed chan struct{}
}

// NewConfigState returns an empty state.
func NewConfigState() *ConfigState {
	return &ConfigState{
		connectors: map[string]*connectorEntry{},
		orphans:    map[string]*connectorEntry{},
		changed:    make(chan struct{}),
	}
}

// Changed returns a channel closed at the next change.
func (s *ConfigState) Changed() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.changed
}

func (s *ConfigState) entry(name string, create bool) *connectorEntry {
	if e, ok := s.connectors[name]; ok {
		return e
	}
	if e, ok := s.orphans[name]; ok {
		return e
	}
	if !create {
		return nil
	}
	e := &connectorEntry{Connector: Connector{Name: name, FencingCount: -1}, pending: map[int]map[string]string{}}
	s.orphans[name] = e
	return e
}

// Apply feeds one decoded config record into the state. Task configs are
// held back until the commit record that names their count arrives, as in
// Kafka Connect, so a half-written set of task configs is never used.
func (s *ConfigState) Apply(rec records.ConfigRecord) { s.ApplyAt(rec, time.Time{}) }

// ApplyAt is Apply of a record written at at (its Kafka timestamp), which
// becomes the connector's Changed when the record is its config, target
// state or commit of task configs.
func (s *ConfigState) ApplyAt(rec records.ConfigRecord, at time.Time) {
	if rec.Kind == records.KindUnknown {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	name := rec.Connector
	switch rec.Kind {
	case records.KindConnector:
		if rec.Tombstone {
			if e, ok := s.connectors[name]; ok {
				delete(s.connectors, name)
				// Keep the fencing count: a re-created connector's zombies
				// are still fenced by it.
				s.orphans[name] = &connectorEntry{Connector: Connector{Name: name, FencingCount: e.FencingCount, taskHighWater: e.taskHighWater}, pending: map[int]map[string]string{}}
			}
			break
		}
		e := s.entry(name, true)
		e.Config = maps.Clone(rec.Properties)
		e.Plugin = rec.Plugin
		if !e.hasTarget {
			e.TargetState = records.TargetStarted
		}
		delete(s.orphans, name)
		s.connectors[name] = e
	case records.KindTargetState:
		e := s.entry(name, true)
		if rec.Tombstone {
			// A tombstone while the config exists falls back to STARTED.
			e.hasTarget, e.TargetState = false, records.TargetStarted
			break
		}
		e.hasTarget, e.TargetState = true, rec.TargetState
	case records.KindTask:
		e := s.entry(name, true)
		if rec.Tombstone {
			delete(e.pending, rec.Task)
			break
		}
		e.pending[rec.Task] = maps.Clone(rec.Properties)
		e.taskHighWater = max(e.taskHighWater, rec.Task+1)
	case records.KindCommit:
		e := s.entry(name, true)
		if rec.Tombstone {
			break
		}
		tasks := make([]map[string]string, 0, rec.Count)
		complete := true
		for i := 0; i < rec.Count; i++ {
			cfg, ok := e.pending[i]
			if !ok {
				complete = false
				break
			}
			tasks = append(tasks, cfg)
		}
		if complete {
			e.Tasks = tasks
			e.taskHighWater = max(e.taskHighWater, rec.Count)
		}
		e.pending = map[int]map[string]string{}
	case records.KindFencing:
		e := s.entry(name, true)
		if rec.Tombstone {
			e.FencingCount = -1
		} else {
			e.FencingCount = rec.Count
		}
	}
	s.version++
	if e := s.entry(name, false); e != nil {
		e.Version = s.version
		if rec.Kind != records.KindTask && rec.Kind != records.KindFencing && at.After(e.Changed) {
			e.Changed = at
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Get returns a copy of a connector's state.
func (s *ConfigState) Get(name string) (Connector, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.connectors[name]
	if !ok {
		return Connector{}, false
	}
	return copyConnector(e.Connector), true
}

// PluginPin is the plugin version connector name's config recorded when
// written (nil: none, or no such connector): what Get returns in
// Connector.Plugin, without copying the connector.
func (s *ConfigState) PluginPin(name string) *records.PluginPin {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.connectors[name]; ok {
		return e.Plugin
	}
	return nil
}

// TaskIDBound returns how many task ids name may have had, connector or
// not: one above the highest task id ever written for it, or the count of
// its last task-count record if larger; 0 when there is neither. Since the
// config topic keeps the latest record of every task key, the bound
// survives restarts and compaction.
func (s *ConfigState) TaskIDBound(name string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e := s.entry(name, false); e != nil {
		return max(e.taskHighWater, e.FencingCount, 0)
	}
	return 0
}

// Names returns the connector names, sorted.
func (s *ConfigState) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.connectors))
	for n := range s.connectors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns copies of every connector, sorted by name.
func (s *ConfigState) All() []Connector {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Connector, 0, len(s.connectors))
	for _, e := range s.connectors {
		out = append(out, copyConnector(e.Connector))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// AllShared is All without the copies of the configs, in no order: the maps are the
// state's own, for a caller that reads every connector on each request
// (the fleet listing) and must only read them. Apply never changes a map
// it installed (a new record installs a new one), so reading them
// without the lock is safe.
func (s *ConfigState) AllShared() []Connector {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Connector, 0, len(s.connectors))
	for _, e := range s.connectors {
		out = append(out, e.Connector)
	}
	return out
}

func copyConnector(c Connector) Connector {
	c.Config = maps.Clone(c.Config)
	tasks := make([]map[string]string, len(c.Tasks))
	for i, t := range c.Tasks {
		tasks[i] = maps.Clone(t)
	}
	c.Tasks = tasks
	return c
}
