package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/recordsig"
)

// Memory is the leader's write path without Kafka: Apply encodes the
// commands exactly as Stores.Apply does and applies the records of each
// call, all at once, to in-memory states. It stands in for Stores in the
// tests of the controllers built on the store (a fake state whose
// transitions are the real ones), and its Txns show what each call wrote
// together.
type Memory struct {
	// mu makes each Apply one step, as a transaction is.
	mu     sync.Mutex
	Config *ConfigState
	Status *StatusState
	Fleet  *FleetState
	// Fail, when set, is asked before each call is applied; an error fails
	// the call and nothing of it is applied (an aborted transaction, or a
	// leader deposed before its commit).
	Fail func(cmds []Command) error
	// Txns are the records of each call applied, in order.
	Txns [][]TopicRecord
}

// TopicRecord is a record and the topic it was written to.
type TopicRecord struct {
	Topic Topic
	records.Record
}

// NewMemory makes empty states.
func NewMemory() *Memory {
	return &Memory{Config: NewConfigState(), Status: NewStatusState(), Fleet: NewFleetState()}
}

// Apply writes cmds to the states, all or nothing.
func (m *Memory) Apply(_ context.Context, cmds ...Command) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := newView(m.Fleet)
	var txn []TopicRecord
	for _, cmd := range cmds {
		recs, err := encodeIn(v, []Command{cmd})
		if err != nil {
			return err
		}
		for _, r := range recs {
			txn = append(txn, TopicRecord{cmd.topic(), r})
		}
	}
	if m.Fail != nil {
		if err := m.Fail(cmds); err != nil {
			return err
		}
	}
	for _, r := range txn {
		if err := m.apply(r); err != nil {
			return err
		}
	}
	m.Txns = append(m.Txns, txn)
	return nil
}

func (m *Memory) apply(r TopicRecord) error {
	switch r.Topic {
	case TopicConfig:
		if r.Key == recordsig.MarkerKey {
			return nil
		}
		rec, err := records.DecodeConfig(r.Key, r.Value)
		if err != nil {
			return fmt.Errorf("decode config record %s: %w", r.Key, err)
		}
		if rec.Kind != records.KindLoggerLevel {
			m.Config.Apply(rec)
		}
	case TopicStatus:
		rec, err := records.DecodeStatus(r.Key, r.Value)
		if err != nil {
			return fmt.Errorf("decode status record %s: %w", r.Key, err)
		}
		m.Status.Apply(rec)
	case TopicFleet:
		if err := m.Fleet.apply(r.Key, r.Value); err != nil {
			return fmt.Errorf("decode fleet record %s: %w", r.Key, err)
		}
	}
	return nil
}
