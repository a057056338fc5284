package herder

import (
	"context"
	"net/http"
	"strings"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/reconciler"
	"github.com/sluice-io/sluice/shared/records"
)

// ServerInfo answers GET /.
func (h *Herder) ServerInfo(ctx context.Context) (v1.ServerInfo, error) {
	return v1.ServerInfo{Version: h.cfg.Version, Commit: h.cfg.Commit, KafkaClusterID: h.clusterID}, nil
}

// Health answers GET /health.
func (h *Herder) Health(ctx context.Context) (v1.Health, int) {
	if !h.ready.Load() {
		return v1.Health{Status: "starting", Message: "Worker is still starting up."}, http.StatusServiceUnavailable
	}
	if err := h.Wedged(); err != nil {
		// KIP-1017's answer for a worker that cannot handle requests: the
		// liveness probe restarts it. Kafka or NATS being away is never
		// this (readiness and GET /readyz's checks say so).
		h.log.Error("coordinator wedged", "err", err)
		return v1.Health{Status: "unhealthy", Message: "Worker was unable to handle this request and may be unable to handle other requests."}, http.StatusInternalServerError
	}
	health := v1.Health{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests.", Role: "follower"}
	leading, lease := h.Leader()
	if leading {
		health.Role = "leader"
	}
	health.Leader = leaderAddr(lease)
	return health, http.StatusOK
}

// leaderAddr is the REST address (host:port) of lease's leader.
func leaderAddr(lease v1.LeaderLease) string {
	return strings.TrimPrefix(strings.TrimPrefix(lease.URL, "http://"), "https://")
}

// ConnectorStatus answers GET /connectors/{name}/status.
//
// The leader answers with what it last decided even before the status topic
// has it (connectorStatus): during a broker outage the status queue cannot
// write, and a task's report that its broker is unreachable must show now,
// not once the broker is back.
func (h *Herder) ConnectorStatus(ctx context.Context, name string) (v1.ConnectorStateInfo, error) {
	st, ok := h.connectorStatus(name)
	if !ok {
		return v1.ConnectorStateInfo{}, v1.Errorf(v1.CodeNotFound, "No status found for connector %s", name)
	}
	c, _ := h.configs.State.Get(name)
	version := h.pluginVersion(c.Config)
	out := v1.ConnectorStateInfo{
		Name:      name,
		Connector: v1.ConnectorState{State: st.State, WorkerID: st.WorkerID, Trace: st.Trace, Version: version},
		Tasks:     []v1.TaskState{},
		Type:      h.connectorType(c.Config),
	}
	for _, n := range h.statuses.State.TaskIDs(name) {
		ts, ok := h.taskStatus(name, n)
		if !ok {
			continue
		}
		out.Tasks = append(out.Tasks, v1.TaskState{ID: n, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace, Version: version})
	}
	return out, nil
}

// TaskStatus answers GET /connectors/{name}/tasks/{task}/status, as the
// leader last decided it (ConnectorStatus).
func (h *Herder) TaskStatus(ctx context.Context, name string, task int) (v1.TaskState, error) {
	ts, ok := h.taskStatus(name, task)
	if !ok {
		return v1.TaskState{}, v1.Errorf(v1.CodeNotFound, "No status found for task %s-%d", name, task)
	}
	c, _ := h.configs.State.Get(name)
	return v1.TaskState{ID: task, State: ts.State, WorkerID: ts.WorkerID, Trace: ts.Trace, Version: h.pluginVersion(c.Config)}, nil
}

// pluginVersion is the version of a config's connector plugin, which
// statuses show (KIP-891); empty when the class is unknown.
func (h *Herder) pluginVersion(props map[string]string) string {
	if p, ok := h.pluginOf(props); ok {
		return p.Version
	}
	return ""
}

// ExpandConnectors answers GET /connectors?expand=...; connectors that
// disappear during the lookup are left out.
func (h *Herder) ExpandConnectors(ctx context.Context, status, info bool) (map[string]v1.ConnectorExpanded, error) {
	out := map[string]v1.ConnectorExpanded{}
	for _, c := range h.configs.State.All() {
		var e v1.ConnectorExpanded
		if info {
			i := h.info(c)
			e.Info = &i
		}
		if status {
			st, err := h.ConnectorStatus(ctx, c.Name)
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
func (h *Herder) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*v1.ConnectorStateInfo, error) {
	unlock := h.locks.Lock(name)
	defer unlock()
	_, ok := h.configs.State.Get(name)
	if !ok {
		return nil, v1.Errorf(v1.CodeNotFound, "Unknown connector: %s", name)
	}
	if !includeTasks && !onlyFailed {
		h.restartConnectorInstance(name)
		return nil, nil
	}
	state, err := h.ConnectorStatus(ctx, name)
	if err != nil {
		return nil, v1.Errorf(v1.CodeNotFound, "Status for connector %s not found", name)
	}
	restartConn := !onlyFailed || state.Connector.State == v1.StateFailed
	var restartTasks []int
	var recs []records.Record
	if restartConn {
		state.Connector.State = v1.StateRestarting
		recs = append(recs, reconciler.ConnectorStatusRecord(name, v1.StateRestarting, "", h.cfg.WorkerID))
	}
	for i, t := range state.Tasks {
		if includeTasks && (!onlyFailed || t.State == v1.StateFailed) {
			restartTasks = append(restartTasks, t.ID)
			state.Tasks[i].State = v1.StateRestarting
			ts, _ := h.statuses.State.Task(name, t.ID)
			recs = append(recs, records.Record{Key: records.TaskStatusKey(name, t.ID), Value: records.EncodeStatus(v1.StateRestarting, "", t.WorkerID, ts.Generation)})
		}
	}
	err = h.writeStatus(ctx, recs...)
	// Restart even when the write failed or timed out: the RESTARTING
	// records stay queued and land later, and only the restart itself
	// reports the connector and its tasks out of that state again.
	if restartConn {
		h.restartConnectorInstance(name)
	}
	h.restartTasks(name, restartTasks)
	if err != nil {
		return nil, writeFailed(err, "Failed to restart connector %s", name)
	}
	return &state, nil
}

// restartConnectorInstance restarts the connector's instance (Sluice runs
// the Connector part in the coordinator), which computes its task configs
// again and reports its status.
func (h *Herder) restartConnectorInstance(name string) {
	if m := h.instances.Load(); m != nil {
		m.Restart(name)
	}
	h.trigger()
}

// restartTasks gives the tasks a new generation, so their agents restart them.
func (h *Herder) restartTasks(name string, tasks []int) {
	ids := make([]v1.TaskID, len(tasks))
	for i, n := range tasks {
		ids[i] = v1.TaskID{Connector: name, Task: n}
	}
	h.rec.RestartTasks(ids)
}

// RestartTask restarts one task.
func (h *Herder) RestartTask(ctx context.Context, name string, task int) error {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return v1.Errorf(v1.CodeNotFound, "Unknown connector: %s", name)
	}
	if task < 0 || task >= len(c.Tasks) || c.TargetState == records.TargetStopped {
		return v1.Errorf(v1.CodeNotFound, "Unknown task: %s-%d", name, task)
	}
	h.restartTasks(name, []int{task})
	return nil
}

// ConnectorTopics answers GET /connectors/{name}/topics. Like Kafka Connect
// 4.4 it answers for any name, known or not: the status topic may still hold
// the topics of a deleted connector.
func (h *Herder) ConnectorTopics(ctx context.Context, name string) (map[string]v1.ActiveTopics, error) {
	return map[string]v1.ActiveTopics{name: {Topics: h.statuses.State.Topics(name)}}, nil
}

// ResetConnectorTopics empties a connector's active topic set (for any
// name, as Kafka Connect 4.4 does).
func (h *Herder) ResetConnectorTopics(ctx context.Context, name string) error {
	var recs []records.Record
	for _, t := range h.statuses.State.Topics(name) {
		recs = append(recs, records.Record{Key: records.TopicStatusKey(name, t)})
	}
	if err := h.writeStatus(ctx, recs...); err != nil {
		return writeFailed(err, "Failed to reset the active topics of connector %s", name)
	}
	return nil
}
