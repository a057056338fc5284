package herder

import (
	"context"
	"maps"
	"strings"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rollout"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
)

// initialStates maps the REST initial_state to the stored target state.
var initialStates = map[string]string{
	"RUNNING": records.TargetStarted,
	"PAUSED":  records.TargetPaused,
	"STOPPED": records.TargetStopped,
}

func notFound(name string) error { return v1.Errorf(v1.CodeNotFound, "Connector %s not found", name) }
func unknown(name string) error  { return v1.Errorf(v1.CodeNotFound, "Unknown connector %s", name) }

// connectorType is the REST type of a config: source, sink or unknown.
func (h *Herder) connectorType(props map[string]string) string {
	p, ok := h.reg.Lookup(props["connector.class"])
	if c, java := h.choosePlugin(props); java && c.java() {
		p, ok = c.plugin(), true // a Java plugin's kind, as its host announced it
	}
	if !ok {
		return v1.TypeUnknown
	}
	switch p.Kind {
	case connect.KindSource:
		return v1.TypeSource
	case connect.KindSink:
		return v1.TypeSink
	}
	return v1.TypeUnknown
}

func (h *Herder) info(c store.Connector) v1.ConnectorInfo {
	tasks := []v1.ConnectorTaskID{}
	if c.TargetState != records.TargetStopped {
		for i := range c.Tasks {
			tasks = append(tasks, v1.ConnectorTaskID{Connector: c.Name, Task: i})
		}
	}
	return v1.ConnectorInfo{Name: c.Name, Config: c.Config, Tasks: tasks, Type: h.connectorType(c.Config)}
}

// validateConfig runs the plugin's validation and turns errors into the
// create-time 400 message.
func (h *Herder) validateConfig(ctx context.Context, props map[string]string) error {
	infos, resolved, err := h.validateResolved(ctx, props)
	if err != nil {
		return err
	}
	sink := h.connectorType(props) == v1.TypeSink
	if err := h.checkTenantOwnership(resolved, sink); err != nil {
		return err
	}
	if infos.ErrorCount > 0 {
		return v1.Errorf(v1.CodeBadRequest, "%s", validate.ErrorMessage(infos))
	}
	if sink {
		if err := checkGroupID(props["name"], resolved); err != nil {
			return err
		}
		return h.checkGroupOwner(props["name"], resolved)
	}
	return nil
}

// checkName applies Kafka Connect's rule: config.name, when present, must
// equal the connector's name; when absent it is set to it.
func checkName(name string, config map[string]string) (map[string]string, error) {
	out := maps.Clone(config)
	if cfgName, ok := out["name"]; ok && cfgName != name {
		return nil, v1.Errorf(v1.CodeBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", cfgName, name)
	}
	out["name"] = name
	return out, nil
}

// ListConnectors returns the connector names.
func (h *Herder) ListConnectors(ctx context.Context) ([]string, error) {
	return h.configs.State.Names(), nil
}

// CreateConnector creates a connector in its initial state.
func (h *Herder) CreateConnector(ctx context.Context, req v1.CreateConnectorRequest) (v1.CreatedConnector, error) {
	name := v1.TrimName(req.Name)
	if req.Config == nil {
		return v1.CreatedConnector{}, v1.Errorf(v1.CodeBadRequest, "Connector config must not be null")
	}
	target := ""
	if req.InitialState != "" {
		var ok bool
		if target, ok = initialStates[strings.ToUpper(req.InitialState)]; !ok {
			return v1.CreatedConnector{}, v1.Errorf(v1.CodeBadRequest, "Invalid initial_state '%s': must be one of RUNNING, PAUSED, STOPPED", req.InitialState)
		}
	}
	if err := h.checkNewName(name); err != nil {
		return v1.CreatedConnector{}, err
	}
	config, err := checkName(name, req.Config)
	if err != nil {
		return v1.CreatedConnector{}, err
	}
	if err := h.validateConfig(ctx, config); err != nil {
		return v1.CreatedConnector{}, err
	}
	if err := h.checkConfigSize(ctx, store.CreateConnector{Name: name, Config: config, TargetState: target}); err != nil {
		return v1.CreatedConnector{}, err
	}
	var initial *initialOffsets
	if req.InitialOffsets != nil {
		if initial, err = h.checkInitialOffsets(ctx, name, config, req.InitialOffsets); err != nil {
			return v1.CreatedConnector{}, err
		}
	}
	unlock := h.locks.Lock(name)
	defer unlock()
	if _, exists := h.configs.State.Get(name); exists {
		return v1.CreatedConnector{}, v1.Errorf(v1.CodeConflict, "Connector %s already exists", name)
	}
	var status *v1.Message
	if initial != nil {
		if target == "" {
			target = records.TargetStarted
		}
		if _, err := h.createWithOffsets(ctx, name, target, config, initial, offsets.Meta{Operation: v1.HistoryCreate}); err != nil {
			return v1.CreatedConnector{}, err
		}
		status = &v1.Message{Message: offsets.MsgAlterFramework}
		if initial.definite {
			status.Message = offsets.MsgAlterDefinite
		}
	} else {
		if err := h.configs.Apply(ctx, store.CreateConnector{Name: name, Config: config, TargetState: target}); err != nil {
			return v1.CreatedConnector{}, writeFailed(err, "Failed to create connector %s", name)
		}
	}
	c, _ := h.configs.State.Get(name)
	info := h.info(c)
	info.Tasks = []v1.ConnectorTaskID{} // as distributed Kafka Connect answers a create
	return v1.CreatedConnector{ConnectorInfo: info, OffsetsStatus: status}, nil
}

// GetConnector returns a connector's info.
func (h *Herder) GetConnector(ctx context.Context, name string) (v1.ConnectorInfo, error) {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return v1.ConnectorInfo{}, notFound(name)
	}
	return h.info(c), nil
}

// GetConnectorConfig returns a connector's config.
func (h *Herder) GetConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return nil, notFound(name)
	}
	return c.Config, nil
}

// PutConnectorConfig creates a connector or replaces its config, keeping its
// target state.
func (h *Herder) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (v1.ConnectorInfo, bool, error) {
	if _, exists := h.configs.State.Get(name); !exists {
		if err := h.checkNewName(name); err != nil {
			return v1.ConnectorInfo{}, false, err
		}
	}
	config, err := checkName(name, config)
	if err != nil {
		return v1.ConnectorInfo{}, false, err
	}
	if err := h.validateConfig(ctx, config); err != nil {
		return v1.ConnectorInfo{}, false, err
	}
	if err := h.checkConfigSize(ctx, store.PutConnectorConfig{Name: name, Config: config}); err != nil {
		return v1.ConnectorInfo{}, false, err
	}
	unlock := h.locks.Lock(name)
	defer unlock()
	return h.writeConfigLocked(ctx, name, config)
}

// writeConfigLocked writes a validated config; the caller holds name's lock.
func (h *Herder) writeConfigLocked(ctx context.Context, name string, config map[string]string) (v1.ConnectorInfo, bool, error) {
	_, existed := h.configs.State.Get(name)
	if err := h.configs.Apply(ctx, store.PutConnectorConfig{Name: name, Config: config}); err != nil {
		return v1.ConnectorInfo{}, false, writeFailed(err, "Failed to write config of connector %s", name)
	}
	c, _ := h.configs.State.Get(name)
	info := h.info(c)
	if !existed {
		info.Tasks = []v1.ConnectorTaskID{}
	}
	return info, !existed, nil
}

// PatchConnectorConfig merges patch into an existing connector's config.
func (h *Herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (v1.ConnectorInfo, error) {
	// The lock is held from the read to the write: a DELETE landing in
	// between must make the PATCH fail with 404, not re-create the
	// connector from the merged config.
	unlock := h.locks.Lock(name)
	defer unlock()
	c, ok := h.configs.State.Get(name)
	if !ok {
		return v1.ConnectorInfo{}, notFound(name)
	}
	// Kafka Connect 4.4 does not check a patched name against the URL's (a
	// PUT does): the merged config is validated and written as it is.
	merged := rollout.MergePatch(name, c.Config, patch)
	if err := h.validateConfig(ctx, merged); err != nil {
		return v1.ConnectorInfo{}, err
	}
	if err := h.checkConfigSize(ctx, store.PutConnectorConfig{Name: name, Config: merged}); err != nil {
		return v1.ConnectorInfo{}, err
	}
	info, _, err := h.writeConfigLocked(ctx, name, merged)
	return info, err
}

// TaskConfigs returns the committed task configs.
func (h *Herder) TaskConfigs(ctx context.Context, name string) ([]v1.TaskInfo, error) {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return nil, notFound(name)
	}
	out := []v1.TaskInfo{}
	if c.TargetState == records.TargetStopped {
		return out, nil
	}
	for i, tc := range c.Tasks {
		out = append(out, v1.TaskInfo{ID: v1.ConnectorTaskID{Connector: name, Task: i}, Config: tc})
	}
	return out, nil
}

// StopConnector stops a connector: its task set is emptied first, then the
// target state becomes STOPPED, in one transaction. It returns once that is
// durable; the agents stop the tasks as the change reaches them.
func (h *Herder) StopConnector(ctx context.Context, name string) error {
	unlock := h.locks.Lock(name)
	defer unlock()
	if _, ok := h.configs.State.Get(name); !ok {
		return unknown(name)
	}
	if err := h.configs.Apply(ctx, store.StopConnector{Name: name}); err != nil {
		return writeFailed(err, "Failed to stop connector %s", name)
	}
	h.trigger()
	return nil
}

// PauseConnector sets the target state PAUSED.
func (h *Herder) PauseConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, records.TargetPaused)
}

// ResumeConnector sets the target state STARTED.
func (h *Herder) ResumeConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, records.TargetStarted)
}

func (h *Herder) setTarget(ctx context.Context, name, target string) error {
	unlock := h.locks.Lock(name)
	defer unlock()
	if _, ok := h.configs.State.Get(name); !ok {
		return unknown(name)
	}
	if err := h.configs.Apply(ctx, store.SetTargetState{Name: name, State: target}); err != nil {
		return writeFailed(err, "Failed to change the state of connector %s", name)
	}
	h.trigger()
	return nil
}

// DeleteConnector removes a connector's config and target state. Its offsets
// stay, as in Kafka Connect, unless resetOffsets asks to reset them too.
func (h *Herder) DeleteConnector(ctx context.Context, name string, resetOffsets bool) error {
	if resetOffsets {
		return h.offs.ResetThen(ctx, name, func(ctx context.Context) error { return h.writeDelete(ctx, name) })
	}
	unlock := h.locks.Lock(name)
	defer unlock()
	if _, ok := h.configs.State.Get(name); !ok {
		return notFound(name)
	}
	return h.writeDelete(ctx, name)
}

func (h *Herder) writeDelete(ctx context.Context, name string) error {
	old, _ := h.configs.State.Get(name)
	if err := h.configs.Apply(ctx, store.DeleteConnector{Name: name}); err != nil {
		return writeFailed(err, "Failed to delete connector %s", name)
	}
	h.offs.Topics().Forget(ctx, h.ownOffsetsTopic(old.Config))
	if err := h.writeStatus(ctx, records.Record{Key: records.ConnectorStatusKey(name)}); err != nil {
		h.log.Warn("removing connector status failed", "connector", name, "err", err)
	}
	h.trigger()
	return nil
}
