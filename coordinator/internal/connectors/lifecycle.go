package connectors

import (
	"context"
	"maps"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
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

// info is a connector as GET /connectors/{name} shows it.
func (s *Service) info(c store.Connector) api.ConnectorInfo {
	tasks := []api.ConnectorTaskID{}
	if c.TargetState != records.TargetStopped {
		for i := range c.Tasks {
			tasks = append(tasks, api.ConnectorTaskID{Connector: c.Name, Task: i})
		}
	}
	return api.ConnectorInfo{Name: c.Name, Config: c.Config, Tasks: tasks, Type: s.plugins.Type(c.Config)}
}

// checkName applies Kafka Connect's rule: config.name, when present, must
// equal the connector's name; when absent it is set to it.
func checkName(name string, config map[string]string) (map[string]string, error) {
	out := maps.Clone(config)
	if cfgName, ok := out["name"]; ok && cfgName != name {
		return nil, api.Errorf(api.CodeBadRequest, "Connector name configuration (%s) doesn't match connector name in the URL (%s)", cfgName, name)
	}
	out["name"] = name
	return out, nil
}

// ListConnectors returns the connector names.
func (s *Service) ListConnectors(ctx context.Context) ([]string, error) {
	return s.cfg.Configs.Names(), nil
}

// CreateConnector creates a connector in its initial state, with its
// initial offsets when the request has some (KIP-995, create.go).
func (s *Service) CreateConnector(ctx context.Context, req api.CreateConnectorRequest) (api.CreatedConnector, error) {
	name := api.TrimName(req.Name)
	if req.Config == nil {
		return api.CreatedConnector{}, api.Errorf(api.CodeBadRequest, "Connector config must not be null")
	}
	target := ""
	if req.InitialState != "" {
		var ok bool
		if target, ok = initialStates[strings.ToUpper(req.InitialState)]; !ok {
			return api.CreatedConnector{}, api.Errorf(api.CodeBadRequest, "Invalid initial_state '%s': must be one of RUNNING, PAUSED, STOPPED", req.InitialState)
		}
	}
	if err := s.admit.CheckNewName(name); err != nil {
		return api.CreatedConnector{}, err
	}
	config, err := checkName(name, req.Config)
	if err != nil {
		return api.CreatedConnector{}, err
	}
	if err := s.admit.Validate(ctx, config); err != nil {
		return api.CreatedConnector{}, err
	}
	if err := s.admit.CheckConfigSize(ctx, store.CreateConnector{Name: name, Config: config, TargetState: target}); err != nil {
		return api.CreatedConnector{}, err
	}
	var initial *initialOffsets
	if req.InitialOffsets != nil {
		if initial, err = s.create.check(ctx, name, config, req.InitialOffsets); err != nil {
			return api.CreatedConnector{}, err
		}
	}
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	if _, exists := s.cfg.Configs.Get(name); exists {
		return api.CreatedConnector{}, api.Errorf(api.CodeConflict, "Connector %s already exists", name)
	}
	var status *api.Message
	if initial != nil {
		if target == "" {
			target = records.TargetStarted
		}
		if _, err := s.create.run(ctx, name, target, config, initial, offsets.Meta{Operation: api.HistoryCreate}); err != nil {
			return api.CreatedConnector{}, err
		}
		status = &api.Message{Message: offsets.MsgAlterFramework}
		if initial.definite {
			status.Message = offsets.MsgAlterDefinite
		}
	} else {
		if err := s.cfg.Writer.Apply(ctx, store.CreateConnector{Name: name, Config: config, TargetState: target}); err != nil {
			return api.CreatedConnector{}, WriteFailed(err, "Failed to create connector %s", name)
		}
	}
	c, _ := s.cfg.Configs.Get(name)
	info := s.info(c)
	info.Tasks = []api.ConnectorTaskID{} // as distributed Kafka Connect answers a create
	return api.CreatedConnector{ConnectorInfo: info, OffsetsStatus: status}, nil
}

// GetConnector returns a connector's info.
func (s *Service) GetConnector(ctx context.Context, name string) (api.ConnectorInfo, error) {
	c, ok := s.cfg.Configs.Get(name)
	if !ok {
		return api.ConnectorInfo{}, NotFound(name)
	}
	return s.info(c), nil
}

// GetConnectorConfig returns a connector's config.
func (s *Service) GetConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	c, ok := s.cfg.Configs.Get(name)
	if !ok {
		return nil, NotFound(name)
	}
	return c.Config, nil
}

// PutConnectorConfig creates a connector or replaces its config, keeping its
// target state.
func (s *Service) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (api.ConnectorInfo, bool, error) {
	if _, exists := s.cfg.Configs.Get(name); !exists {
		if err := s.admit.CheckNewName(name); err != nil {
			return api.ConnectorInfo{}, false, err
		}
	}
	config, err := checkName(name, config)
	if err != nil {
		return api.ConnectorInfo{}, false, err
	}
	if err := s.admit.Validate(ctx, config); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	if err := s.admit.CheckConfigSize(ctx, store.PutConnectorConfig{Name: name, Config: config}); err != nil {
		return api.ConnectorInfo{}, false, err
	}
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	return s.writeConfigLocked(ctx, name, config)
}

// writeConfigLocked writes a validated config; the caller holds name's lock.
func (s *Service) writeConfigLocked(ctx context.Context, name string, config map[string]string) (api.ConnectorInfo, bool, error) {
	_, existed := s.cfg.Configs.Get(name)
	if err := s.cfg.Writer.Apply(ctx, store.PutConnectorConfig{Name: name, Config: config}); err != nil {
		return api.ConnectorInfo{}, false, WriteFailed(err, "Failed to write config of connector %s", name)
	}
	c, _ := s.cfg.Configs.Get(name)
	info := s.info(c)
	if !existed {
		info.Tasks = []api.ConnectorTaskID{}
	}
	return info, !existed, nil
}

// PatchConnectorConfig merges patch into an existing connector's config;
// the merged config is what is admitted.
func (s *Service) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	ctx = confighistory.OrChange(ctx, &confighistory.Change{Operation: api.ConfigPatch})
	// The lock is held from the read to the write: a DELETE landing in
	// between must make the PATCH fail with 404, not re-create the
	// connector from the merged config.
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	c, ok := s.cfg.Configs.Get(name)
	if !ok {
		return api.ConnectorInfo{}, NotFound(name)
	}
	// Kafka Connect 4.4 does not check a patched name against the URL's (a
	// PUT does): the merged config is validated and written as it is.
	merged := rollout.MergePatch(name, c.Config, patch)
	if err := s.admit.Validate(ctx, merged); err != nil {
		return api.ConnectorInfo{}, err
	}
	if err := s.admit.CheckConfigSize(ctx, store.PutConnectorConfig{Name: name, Config: merged}); err != nil {
		return api.ConnectorInfo{}, err
	}
	info, _, err := s.writeConfigLocked(ctx, name, merged)
	return info, err
}

// TaskConfigs returns the committed task configs.
func (s *Service) TaskConfigs(ctx context.Context, name string) ([]api.TaskInfo, error) {
	c, ok := s.cfg.Configs.Get(name)
	if !ok {
		return nil, NotFound(name)
	}
	out := []api.TaskInfo{}
	if c.TargetState == records.TargetStopped {
		return out, nil
	}
	for i, tc := range c.Tasks {
		out = append(out, api.TaskInfo{ID: api.ConnectorTaskID{Connector: name, Task: i}, Config: tc})
	}
	return out, nil
}

// StopConnector stops a connector: its task set is emptied first, then the
// target state becomes STOPPED, in one transaction. It returns once that is
// durable; the agents stop the tasks as the change reaches them.
func (s *Service) StopConnector(ctx context.Context, name string) error {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	if _, ok := s.cfg.Configs.Get(name); !ok {
		return unknown(name)
	}
	if err := s.cfg.Writer.Apply(ctx, store.StopConnector{Name: name}); err != nil {
		return WriteFailed(err, "Failed to stop connector %s", name)
	}
	s.cfg.Runner.Trigger()
	return nil
}

// PauseConnector sets the target state PAUSED.
func (s *Service) PauseConnector(ctx context.Context, name string) error {
	return s.setTarget(ctx, name, records.TargetPaused)
}

// ResumeConnector sets the target state STARTED.
func (s *Service) ResumeConnector(ctx context.Context, name string) error {
	return s.setTarget(ctx, name, records.TargetStarted)
}

func (s *Service) setTarget(ctx context.Context, name, target string) error {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	if _, ok := s.cfg.Configs.Get(name); !ok {
		return unknown(name)
	}
	if err := s.cfg.Writer.Apply(ctx, store.SetTargetState{Name: name, State: target}); err != nil {
		return WriteFailed(err, "Failed to change the state of connector %s", name)
	}
	s.cfg.Runner.Trigger()
	return nil
}

// DeleteConnector removes a connector's config and target state. Its offsets
// stay, as in Kafka Connect, unless resetOffsets asks to reset them too.
func (s *Service) DeleteConnector(ctx context.Context, name string, resetOffsets bool) error {
	if resetOffsets {
		return s.cfg.Offsets.ResetThen(ctx, name, func(ctx context.Context) error { return s.writeDelete(ctx, name) })
	}
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	if _, ok := s.cfg.Configs.Get(name); !ok {
		return NotFound(name)
	}
	return s.writeDelete(ctx, name)
}

// writeDelete deletes name; the caller holds its lock. Its status goes
// too, and its own offsets topic is no longer followed.
func (s *Service) writeDelete(ctx context.Context, name string) error {
	old, _ := s.cfg.Configs.Get(name)
	if err := s.cfg.Writer.Apply(ctx, store.DeleteConnector{Name: name}); err != nil {
		return WriteFailed(err, "Failed to delete connector %s", name)
	}
	s.cfg.Offsets.ForgetTopic(ctx, s.cfg.Offsets.OwnTopic(old.Config))
	if err := s.cfg.Statuses.Write(ctx, records.Record{Key: records.ConnectorStatusKey(name)}); err != nil {
		s.log.Warn("removing connector status failed", "connector", name, "err", err)
	}
	s.cfg.Runner.Trigger()
	return nil
}
