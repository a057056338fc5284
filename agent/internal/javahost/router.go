package javahost

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// taskEndpoint is what a started Java task serves for the host: its
// OffsetStorageReader, its errant record reports and its SinkTaskContext
// notices.
type taskEndpoint interface {
	readOffsets(ctx context.Context, body []byte) ([]byte, error)
	report(ctx context.Context, body []byte) ([]byte, error)
	notice(op string, body []byte)
}

// router is the supervisor's Dispatcher: it hands what the host sends to
// the task or the connector it names. It outlives host restarts, as the
// tasks and connectors register with it once.
type router struct {
	mu        sync.Mutex
	tasks     map[string]taskEndpoint
	connector func(op string, body []byte)
}

func newRouter() *router { return &router{tasks: map[string]taskEndpoint{}} }

func (r *router) addTask(id string, t taskEndpoint) {
	r.mu.Lock()
	r.tasks[id] = t
	r.mu.Unlock()
}

func (r *router) removeTask(id string, t taskEndpoint) {
	r.mu.Lock()
	if r.tasks[id] == t {
		delete(r.tasks, id)
	}
	r.mu.Unlock()
}

func (r *router) setConnectorHandler(h func(op string, body []byte)) {
	r.mu.Lock()
	r.connector = h
	r.mu.Unlock()
}

// idOf reads the "id" every task message carries.
func idOf(body []byte) (string, error) {
	var m struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return "", fmt.Errorf("decode task id: %w", err)
	}
	return m.ID, nil
}

func (r *router) task(body []byte) (taskEndpoint, string, error) {
	id, err := idOf(body)
	if err != nil {
		return nil, "", err
	}
	r.mu.Lock()
	t := r.tasks[id]
	r.mu.Unlock()
	if t == nil {
		return nil, id, fmt.Errorf("no task %q runs on this agent", id)
	}
	return t, id, nil
}

// Request implements Dispatcher.
func (r *router) Request(ctx context.Context, op string, body []byte) ([]byte, error) {
	if op != OpOffsetsRead && op != OpTaskReport {
		return nil, fmt.Errorf("the agent serves no request %q", op)
	}
	t, _, err := r.task(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if op == OpTaskReport {
		return t.report(ctx, body)
	}
	return t.readOffsets(ctx, body)
}

// Notice implements Dispatcher. A notice for a task that stopped
// meanwhile is dropped: nothing is left to act on it.
func (r *router) Notice(op string, body []byte) {
	switch {
	case strings.HasPrefix(op, "task."):
		if t, _, err := r.task(body); err == nil {
			t.notice(op, body)
		}
	case strings.HasPrefix(op, "connector."):
		r.mu.Lock()
		h := r.connector
		r.mu.Unlock()
		if h != nil {
			h(op, body)
		}
	}
}
