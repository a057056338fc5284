package connectors

import (
	"context"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/shared/records"
)

// ConnectorStatus answers GET /connectors/{name}/status.
//
// The leader answers with what it last decided even before the status topic
// has it (connectorStatus): during a broker outage the status queue cannot
// write, and a task's report that its broker is unreachable must show now,
// not once the broker is back.
func (s *Service) ConnectorStatus(ctx context.Context, name string) (api.ConnectorStateInfo, error) {
	st, ok := s.cfg.Statuses.Connector(name)
	if !ok {
		return api.ConnectorStateInfo{}, api.Errorf(api.CodeNotFound, "No status found for connector %s", name)
	}
	c, _ := s.cfg.Configs.Get(name)
	version := s.plugins.Version(c.Config)
	out := api.ConnectorStateInfo{
		Name:      name,
		Connector: api.ConnectorState{State: st.State, WorkerID: st.WorkerID, Trace: st.Trace, Version: version},
		Tasks:     []api.TaskState{},
		Type:      s.plugins.Type(c.Config),
	}
	for _, n := range s.cfg.Statuses.TaskIDs(name) {
		ts, ok := s.cfg.Statuses.Task(name, n)
		if !ok {
			continue
		}
		out.Tasks = append(out.Tasks, api.TaskState{ID: n, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace, Version: version})
	}
	return out, nil
}

// TaskStatus answers GET /connectors/{name}/tasks/{task}/status, as the
// leader last decided it (ConnectorStatus).
func (s *Service) TaskStatus(ctx context.Context, name string, task int) (api.TaskState, error) {
	ts, ok := s.cfg.Statuses.Task(name, task)
	if !ok {
		return api.TaskState{}, api.Errorf(api.CodeNotFound, "No status found for task %s-%d", name, task)
	}
	c, _ := s.cfg.Configs.Get(name)
	return api.TaskState{ID: task, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace, Version: s.plugins.Version(c.Config)}, nil
}

// ExpandConnectors answers GET /connectors?expand=...; connectors that
// disappear during the lookup are left out.
func (s *Service) ExpandConnectors(ctx context.Context, status, info bool) (map[string]api.ConnectorExpanded, error) {
	out := map[string]api.ConnectorExpanded{}
	for _, c := range s.cfg.Configs.All() {
		var e api.ConnectorExpanded
		if info {
			i := s.info(c)
			e.Info = &i
		}
		if status {
			st, err := s.ConnectorStatus(ctx, c.Name)
			if err != nil {
				continue
			}
			e.Status = &st
		}
		out[c.Name] = e
	}
	return out, nil
}

// RestartConnector restarts the connector and, with the flags, its tasks.
func (s *Service) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	_, ok := s.cfg.Configs.Get(name)
	if !ok {
		return nil, api.Errorf(api.CodeNotFound, "Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		s.restartConnectorInstance(name)
		return nil, nil
	}
	state, err := s.ConnectorStatus(ctx, name)
	if err != nil {
		return nil, api.Errorf(api.CodeNotFound, "Status for connector %s not found", name)
	}
	restartConn := !onlyFailed || state.Connector.State == api.StateFailed
	var restartTasks []int
	var recs []records.Record
	if restartConn {
		state.Connector.State = api.StateRestarting
		recs = append(recs, reconciler.ConnectorStatusRecord(name, api.StateRestarting, "", s.cfg.WorkerID))
	}
	for i, t := range state.Tasks {
		if includeTasks && (!onlyFailed || t.State == api.StateFailed) {
			restartTasks = append(restartTasks, t.ID)
			state.Tasks[i].State = api.StateRestarting
			ts, _ := s.cfg.Statuses.Stored(name, t.ID)
			recs = append(recs, records.Record{Key: records.TaskStatusKey(name, t.ID), Value: records.EncodeStatus(api.StateRestarting, "", t.WorkerID, ts.Generation)})
		}
	}
	err = s.cfg.Statuses.Write(ctx, recs...)
	// Restart even when the write failed or timed out: the RESTARTING
	// records stay queued and land later, and only the restart itself
	// reports the connector and its tasks out of that state again.
	if restartConn {
		s.restartConnectorInstance(name)
	}
	s.restartTasks(name, restartTasks)
	if err != nil {
		return nil, WriteFailed(err, "Failed to restart connector %s", name)
	}
	return &state, nil
}

// restartConnectorInstance restarts the connector's instance (Sluice runs
// the Connector part in the coordinator), which computes its task configs
// again and reports its status.
func (s *Service) restartConnectorInstance(name string) {
	s.cfg.Runner.RestartInstance(name)
	s.cfg.Runner.Trigger()
}

// restartTasks gives the tasks a new generation, so their agents restart them.
func (s *Service) restartTasks(name string, tasks []int) {
	ids := make([]api.TaskID, len(tasks))
	for i, n := range tasks {
		ids[i] = api.TaskID{Connector: name, Task: n}
	}
	s.cfg.Runner.RestartTasks(ids)
}

// RestartTask restarts one task.
func (s *Service) RestartTask(ctx context.Context, name string, task int) error {
	c, ok := s.cfg.Configs.Get(name)
	if !ok {
		return api.Errorf(api.CodeNotFound, "Unknown connector: %s", name)
	}
	if task < 0 || task >= len(c.Tasks) || c.TargetState == records.TargetStopped {
		return api.Errorf(api.CodeNotFound, "Unknown task: %s-%d", name, task)
	}
	s.restartTasks(name, []int{task})
	return nil
}

// ConnectorTopics answers GET /connectors/{name}/topics. Like Kafka Connect
// 4.4 it answers for any name, known or not: the status topic may still hold
// the topics of a deleted connector.
func (s *Service) ConnectorTopics(ctx context.Context, name string) (map[string]api.ActiveTopics, error) {
	return map[string]api.ActiveTopics{name: {Topics: s.cfg.Statuses.Topics(name)}}, nil
}

// ResetConnectorTopics empties a connector's active topic set (for any
// name, as Kafka Connect 4.4 does).
func (s *Service) ResetConnectorTopics(ctx context.Context, name string) error {
	var recs []records.Record
	for _, t := range s.cfg.Statuses.Topics(name) {
		recs = append(recs, records.Record{Key: records.TopicStatusKey(name, t)})
	}
	if err := s.cfg.Statuses.Write(ctx, recs...); err != nil {
		return WriteFailed(err, "Failed to reset the active topics of connector %s", name)
	}
	return nil
}
