package connectors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/coordinator/internal/confighistory"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// The steps of a move, in order; each names itself in a failure, in the
// answer's steps, and is a fault point (faults.go).
const (
	MoveStepStop   = "stopping the old connector"
	MoveStepRead   = "reading the old connector's positions"
	MoveStepCreate = "creating the new connector at those positions"
	MoveStepClear  = "removing the old connector's positions"
	MoveStepDelete = "deleting the old connector"
	MoveStepStart  = "starting the new connector in the old one's state"
)

// restStates names stored target states as REST does.
var restStates = map[string]string{records.TargetStarted: api.StateRunning, records.TargetPaused: api.StatePaused, records.TargetStopped: api.StateStopped}

// MoveConnector answers POST /sluice/connectors/{name}/move: stop name,
// create req.To with its config (and req.Config's overrides) at its
// positions, and, unless req.Copy, remove name and its positions; the new
// connector then takes name's former state. Every step that fails is
// undone with those before it, so a failed move leaves name exactly as it
// was, state included, and no req.To; the answer names the step.
func (s *Service) MoveConnector(ctx context.Context, name string, req api.MoveRequest) (api.MoveResult, error) {
	to := api.TrimName(req.To)
	switch {
	case to == "":
		return api.MoveResult{}, api.Errorf(api.CodeBadRequest, "Give \"to\": the name of the connector to move %s to", name)
	case to == name:
		return api.MoveResult{}, api.Errorf(api.CodeBadRequest, "Connector %s cannot be moved to its own name", name)
	}
	if err := s.admit.CheckNewName(to); err != nil {
		return api.MoveResult{}, err
	}
	detail := fmt.Sprintf("moved from %s to %s", name, to)
	if req.Copy {
		detail = fmt.Sprintf("copied from %s to %s", name, to)
	}
	ctx = confighistory.OrChange(ctx, &confighistory.Change{Operation: api.ConfigMove, Detail: detail})
	unlock := s.cfg.Locks.LockBoth(name, to)
	defer unlock()
	old, ok := s.cfg.Configs.Get(name)
	if !ok {
		return api.MoveResult{}, NotFound(name)
	}
	if _, exists := s.cfg.Configs.Get(to); exists {
		return api.MoveResult{}, api.Errorf(api.CodeConflict, "Connector %s already exists", to)
	}
	config, err := s.movedConfig(ctx, old, to, req.Config)
	if err != nil {
		return api.MoveResult{}, err
	}
	m := &move{s: s, old: old, to: to, config: config, copy: req.Copy, meta: offsets.Meta{Operation: api.HistoryMove}}
	m.res = api.MoveResult{DryRun: req.DryRun, From: name, To: to, Copy: req.Copy, Config: config,
		TargetState: restStates[old.TargetState], Offsets: []api.ConnectorOffset{}}
	if req.DryRun {
		return m.plan(ctx)
	}
	return m.run(ctx)
}

// movedConfig is the new connector's config: the old one's, with
// overrides, named to; it must validate and be of the old one's kind.
func (s *Service) movedConfig(ctx context.Context, old store.Connector, to string, overrides map[string]string) (map[string]string, error) {
	config := maps.Clone(old.Config)
	delete(config, "name")
	for k, v := range overrides {
		if v == "" && k == "consumer.override.group.id" {
			delete(config, k) // the new connector's own connect-<name>
			continue
		}
		config[k] = v
	}
	config, err := checkName(to, config)
	if err != nil {
		return nil, err
	}
	// Before validation, which refuses a shared group too, in words that
	// do not say how a move avoids it.
	if oldGroup := records.SinkGroupID(old.Name, old.Config); s.plugins.Type(config) == api.TypeSink && records.SinkGroupID(to, config) == oldGroup {
		return nil, api.Errorf(api.CodeBadRequest, "Connector %s and %s would share the consumer group %s (consumer.override.group.id): give the new connector a group of its own in \"config\" (another consumer.override.group.id), or remove the override with an empty value",
			old.Name, to, oldGroup)
	}
	if err := s.admit.Validate(ctx, config); err != nil {
		return nil, err
	}
	if oldType, newType := s.plugins.Type(old.Config), s.plugins.Type(config); oldType != newType {
		return nil, api.Errorf(api.CodeBadRequest, "Connector %s is a %s connector and the new config's connector.class %s is a %s connector: a move keeps the connector's kind",
			old.Name, oldType, config["connector.class"], newType)
	}
	if err := s.admit.CheckConfigSize(ctx, store.CreateConnector{Name: to, Config: config, TargetState: records.TargetStopped}); err != nil {
		return nil, err
	}
	return config, nil
}

// move is one move in progress: the steps done so far, and how to undo
// each of them.
type move struct {
	s      *Service
	old    store.Connector
	to     string
	config map[string]string
	copy   bool
	meta   offsets.Meta
	res    api.MoveResult
	undo   []undoStep
}

type undoStep struct {
	what string
	fn   func(ctx context.Context) error
}

// steps are the move's steps for old's state, each as it will be done: a
// copy needs no clear or delete, nor a stopped connector a start.
func (m *move) steps() []api.MoveStep {
	state := func(skip bool) string {
		if skip {
			return "skipped"
		}
		return "planned"
	}
	stopped := m.old.TargetState == records.TargetStopped
	return []api.MoveStep{
		// Never skipped: a connector stopped a moment ago may still have
		// a task making its last commit, which must be in the positions.
		{Step: MoveStepStop, State: "planned"},
		{Step: MoveStepRead, State: "planned"},
		{Step: MoveStepCreate, State: "planned"},
		{Step: MoveStepClear, State: state(m.copy)},
		{Step: MoveStepDelete, State: state(m.copy)},
		{Step: MoveStepStart, State: state(stopped)},
	}
}

// plan answers a dry run: the steps, and the positions the old connector
// has now (those of a running one still move).
func (m *move) plan(ctx context.Context) (api.MoveResult, error) {
	pos, err := m.s.cfg.OffsetSteps.Positions(ctx, m.old.Name, m.kind(), records.SinkGroupID(m.old.Name, m.old.Config), m.s.cfg.Offsets.OwnTopic(m.old.Config))
	if err != nil {
		return api.MoveResult{}, err
	}
	positions, err := offsets.Numbered(pos.Sorted())
	if err != nil {
		return api.MoveResult{}, err
	}
	if _, _, err := m.s.create.validate(ctx, m.to, m.config, positions); err != nil {
		return api.MoveResult{}, err
	}
	m.res.Offsets = positions
	m.res.Steps = m.steps()
	return m.res, nil
}

func (m *move) kind() connect.Kind {
	if m.s.plugins.Type(m.old.Config) == api.TypeSink {
		return connect.KindSink
	}
	return connect.KindSource
}

// run makes the move, step by step.
func (m *move) run(ctx context.Context) (api.MoveResult, error) {
	s, name := m.s, m.old.Name
	m.res.Steps = m.steps()
	detail := "moved from " + name
	if m.copy {
		detail = "copied from " + name
	}
	var positions []api.ConnectorOffset
	steps := []struct {
		name string
		do   func() error
	}{
		{MoveStepStop, func() error { return m.stop(ctx) }},
		{MoveStepRead, func() error {
			pos, err := s.cfg.OffsetSteps.Positions(ctx, name, m.kind(), records.SinkGroupID(name, m.old.Config), s.cfg.Offsets.OwnTopic(m.old.Config))
			if err == nil {
				positions, err = offsets.Numbered(pos.Sorted())
			}
			return err
		}},
		{MoveStepCreate, func() error {
			in, err := s.create.check(ctx, m.to, m.config, positions)
			if err != nil {
				return err
			}
			// The new connector runs the version the old one ran, unless
			// its config names another class or version spec.
			in.plugin = s.plugins.PinFor(m.old.Name, m.config)
			id, err := s.create.run(ctx, m.to, records.TargetStopped, m.config, in, offsets.Meta{Operation: api.HistoryMove, Detail: detail})
			if err == nil {
				m.res.HistoryID = id
				m.push("deleting the new connector and its positions", m.removeNew)
			}
			return err
		}},
		{MoveStepClear, func() error {
			c, _ := s.cfg.Configs.Get(name)
			err := s.cfg.OffsetSteps.Apply(ctx, name, c, offsets.Change{Op: wire.OffsetsOpReset, Meta: offsets.Meta{Operation: api.HistoryMove, Detail: "moved to " + m.to}})
			if err == nil {
				m.push("restoring the old connector's positions", func(ctx context.Context) error {
					c, _ := s.cfg.Configs.Get(name)
					return s.cfg.OffsetSteps.Apply(ctx, name, c, offsets.Change{Op: wire.OffsetsOpAlter, Entries: positions,
						Meta: offsets.Meta{Operation: api.HistoryRestore, Detail: "a failed move to " + m.to + " put them back"}})
				})
			}
			return err
		}},
		{MoveStepDelete, func() error {
			err := s.writeDelete(ctx, name)
			if err == nil {
				m.push("re-creating the old connector", func(ctx context.Context) error {
					return s.cfg.Writer.Apply(ctx, store.CreateConnector{Name: name, Config: m.old.Config, Plugin: m.old.Plugin, TargetState: records.TargetStopped})
				})
			}
			return err
		}},
		{MoveStepStart, func() error {
			err := s.cfg.Writer.Apply(ctx, store.SetTargetState{Name: m.to, State: m.old.TargetState})
			s.cfg.Runner.Trigger()
			return err
		}},
	}
	for i, st := range steps {
		if m.res.Steps[i].State == "skipped" {
			continue
		}
		s.log.Info("move: "+st.name, "from", name, "to", m.to)
		if err := s.step(st.name, st.do); err != nil {
			return api.MoveResult{}, m.fail(ctx, st.name, err)
		}
		m.res.Steps[i].State = "done"
	}
	m.res.Offsets = positions
	if m.res.Offsets == nil {
		m.res.Offsets = []api.ConnectorOffset{}
	}
	return m.res, nil
}

// stop stops the old connector, unless it is, and waits until every agent
// confirmed its tasks stopped: the positions read next must be final.
func (m *move) stop(ctx context.Context) error {
	s, name := m.s, m.old.Name
	if m.old.TargetState != records.TargetStopped || len(m.old.Tasks) != 0 {
		if err := s.cfg.Writer.Apply(ctx, store.StopConnector{Name: name}); err != nil {
			return err
		}
		m.push("putting the old connector back in its state", func(ctx context.Context) error {
			err := s.cfg.Writer.Apply(ctx, store.SetTargetState{Name: name, State: m.old.TargetState})
			s.cfg.Runner.Trigger()
			return err
		})
		s.cfg.Runner.Trigger()
	}
	c, _ := s.cfg.Configs.Get(name)
	if !s.cfg.OffsetSteps.AwaitTasksStopped(ctx, name, c) {
		return fmt.Errorf("not every agent confirmed the tasks of %s stopped within the task shutdown timeout", name)
	}
	return nil
}

// removeNew deletes the new connector and its positions: the undo of the
// create.
func (m *move) removeNew(ctx context.Context) error {
	s := m.s
	c, ok := s.cfg.Configs.Get(m.to)
	if !ok {
		return nil
	}
	if err := s.cfg.OffsetSteps.Apply(ctx, m.to, c, offsets.Change{Op: wire.OffsetsOpReset, Meta: offsets.Meta{Operation: api.HistoryMove, Detail: "a failed move from " + m.old.Name + " removed them"}}); err != nil {
		return err
	}
	return s.writeDelete(ctx, m.to)
}

func (m *move) push(what string, fn func(ctx context.Context) error) {
	m.undo = append(m.undo, undoStep{what: what, fn: fn})
}

// fail undoes the steps done, newest first, even when the caller went
// away, and answers which step failed and what the undo left. An undo that
// fails does not stop the others: each puts back a part of the old state.
func (m *move) fail(ctx context.Context, step string, cause error) error {
	s, name := m.s, m.old.Name
	s.log.Error("move failed; undoing its steps", "from", name, "to", m.to, "step", step, "err", cause)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	var failed []string
	for i := len(m.undo) - 1; i >= 0; i-- {
		u := m.undo[i]
		if err := u.fn(rctx); err != nil {
			s.log.Error("undoing a failed move failed", "from", name, "to", m.to, "undo", u.what, "err", err)
			failed = append(failed, fmt.Sprintf("%s (%s)", u.what, causeText(err)))
		}
	}
	var partial rollbackIncomplete
	if errors.As(cause, &partial) {
		failed = append(failed, partial.left)
	}
	if errors.Is(cause, context.Canceled) {
		cause = errors.New("the request was cancelled")
	}
	if len(failed) > 0 {
		return api.Errorf(api.CodeInternal, "Moving connector %s to %s failed at step '%s' (%s), and undoing it did not finish: %s; check both connectors",
			name, m.to, step, causeText(cause), strings.Join(failed, "; "))
	}
	return api.Errorf(api.CodeInternal, "Moving connector %s to %s failed at step '%s' (%s); %s is as it was and %s does not exist",
		name, m.to, step, causeText(cause), name, m.to)
}
