package javahost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"sync"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// Connectors runs the Java connectors' Connector part in the host for the
// leader (wire.PluginConnectorRequest), and tells the leader what a started
// connector asks for on its own, and when its host died.
type Connectors struct {
	sup     *Supervisor
	agentID string
	log     *slog.Logger
	onEvent func(wire.PluginConnectorEvent)

	mu sync.Mutex
	// started are the connectors started in the host, by the connection
	// they were started on: a lost connection lost them.
	started map[string]*Conn
}

// NewConnectors makes the connector operations of sup's host; onEvent
// gets every connector event (it must not block for long).
func NewConnectors(sup *Supervisor, agentID string, log *slog.Logger, onEvent func(wire.PluginConnectorEvent)) *Connectors {
	if log == nil {
		log = slog.Default()
	}
	c := &Connectors{sup: sup, agentID: agentID, log: log, onEvent: onEvent, started: map[string]*Conn{}}
	sup.router.setConnectorHandler(c.notice)
	sup.OnLost(c.hostLost)
	return c
}

// HandleConnector carries out one connector operation. A plugin's
// exception becomes a *api.Error with its message; its trace is logged and,
// for start and task_configs, returned in the reply.
func (c *Connectors) HandleConnector(ctx context.Context, req wire.PluginConnectorRequest) (wire.PluginConnectorReply, error) {
	reply := wire.PluginConnectorReply{}
	if req.Op == wire.PluginOpStop {
		return reply, c.stop(ctx, req.Name)
	}
	conn, err := c.sup.Conn(ctx)
	if err != nil {
		return reply, api.Errorf(api.CodeUnavailable, "connector host unavailable: %v", err)
	}
	req.Config = withVersion(req.Config, req.Version)
	var configs configsReply
	switch req.Op {
	case wire.PluginOpValidate:
		err = conn.CallJSON(ctx, OpConnectorValidate, connectorConfigRequest{Config: req.Config}, &configs)
		reply.ConfigInfos, reply.Preflight = configs.Configs, configs.Preflight
	case wire.PluginOpConfigDef:
		err = conn.CallJSON(ctx, OpConnectorConfigDef, connectorClassRequest{Class: req.Class, Version: req.Version}, &configs)
		reply.ConfigInfos = configs.Configs
	case wire.PluginOpStart:
		// Recorded before the call: a host lost during the start must
		// still report the connector lost.
		c.mu.Lock()
		c.started[req.Name] = conn
		c.mu.Unlock()
		if err = conn.CallJSON(ctx, OpConnectorStart, connectorStartRequest{Name: req.Name, Config: req.Config}, nil); err != nil {
			c.forget(req.Name, conn)
		}
	case wire.PluginOpTaskConfigs:
		var resp taskConfigsReply
		err = conn.CallJSON(ctx, OpConnectorTaskConfigs, taskConfigsRequest{Name: req.Name, MaxTasks: req.MaxTasks}, &resp)
		reply.TaskConfigs = resp.Configs
	case wire.PluginOpAlterOffsets:
		var resp alterOffsetsReply
		offsets := req.Offsets
		if offsets == nil {
			offsets = []api.ConnectorOffset{}
		}
		err = conn.CallJSON(ctx, OpConnectorAlterOffsets, alterOffsetsRequest{Class: req.Class, Config: req.Config, Offsets: offsets}, &resp)
		reply.Definite = resp.Definite
	default:
		return reply, api.Errorf(api.CodeBadRequest, "unknown connector operation %q", req.Op)
	}
	return c.result(req, reply, err)
}

// withVersion is config asking for the plugin version the leader named:
// the one the connector's config resolved to when written, which replaces
// whatever connector.plugin.version the config has (a range, latest) so
// that the host loads exactly that version.
func withVersion(config map[string]string, version string) map[string]string {
	if version == "" || config[versionKey] == version {
		return config
	}
	out := maps.Clone(config)
	if out == nil {
		out = map[string]string{}
	}
	out[versionKey] = version
	return out
}

// result turns a host call's error into the reply's.
func (c *Connectors) result(req wire.PluginConnectorRequest, reply wire.PluginConnectorReply, err error) (wire.PluginConnectorReply, error) {
	if err == nil {
		return reply, nil
	}
	he, ok := errors.AsType[*HostError](err)
	if !ok {
		if errors.Is(err, ErrHostLost) {
			return reply, api.Errorf(api.CodeUnavailable, "connector %s: %v", req.Op, err)
		}
		return reply, api.Errorf(api.CodeInternal, "connector %s: %v", req.Op, err)
	}
	c.log.Warn("connector plugin failed", "op", req.Op, "connector", req.Name, "class", req.Class, "err", he.Message, "trace", he.Trace)
	code := api.CodeInternal
	switch req.Op {
	case wire.PluginOpStart, wire.PluginOpTaskConfigs:
		reply.Trace = he.Trace
	case wire.PluginOpAlterOffsets, wire.PluginOpValidate:
		// Kafka Connect answers a rejected offsets change, or a config it
		// cannot validate, with 400.
		code = api.CodeBadRequest
	}
	return reply, &api.Error{Code: code, Message: he.Message}
}

// stop stops a connector started in the live host; one not started there
// (or whose host died) is stopped already.
func (c *Connectors) stop(ctx context.Context, name string) error {
	c.mu.Lock()
	conn := c.started[name]
	c.mu.Unlock()
	if conn == nil || conn.Err() != nil {
		c.forget(name, conn)
		return nil
	}
	err := conn.CallJSON(ctx, OpConnectorStop, connectorRef{Name: name}, nil)
	if err == nil || errors.Is(err, ErrHostLost) {
		c.forget(name, conn)
		return nil
	}
	_, err = c.result(wire.PluginConnectorRequest{Op: wire.PluginOpStop, Name: name}, wire.PluginConnectorReply{}, err)
	return err
}

func (c *Connectors) forget(name string, conn *Conn) {
	c.mu.Lock()
	if c.started[name] == conn {
		delete(c.started, name)
	}
	c.mu.Unlock()
}

// notice turns the host's connector notices into events.
func (c *Connectors) notice(op string, body []byte) {
	var m connectorErrorNotice
	if err := json.Unmarshal(body, &m); err != nil {
		c.log.Warn("undecodable notice from the connector host", "op", op, "err", err)
		return
	}
	ev := wire.PluginConnectorEvent{AgentID: c.agentID, Name: m.Name}
	switch op {
	case OpConnectorReconfigure:
		ev.Kind = wire.PluginEventReconfigure
	case OpConnectorError:
		ev.Kind, ev.Message, ev.Trace = wire.PluginEventError, m.Message, m.Trace
	default:
		c.log.Warn("unknown notice from the connector host", "op", op)
		return
	}
	c.emit(ev)
}

// hostLost reports every connector started on the lost connection.
func (c *Connectors) hostLost(conn *Conn, err error) {
	c.mu.Lock()
	var lost []string
	for name, sc := range c.started {
		if sc == conn {
			lost = append(lost, name)
			delete(c.started, name)
		}
	}
	c.mu.Unlock()
	for _, name := range lost {
		c.emit(wire.PluginConnectorEvent{AgentID: c.agentID, Name: name, Kind: wire.PluginEventHostLost, Message: err.Error()})
	}
}

func (c *Connectors) emit(ev wire.PluginConnectorEvent) {
	if c.onEvent != nil {
		c.onEvent(ev)
	}
}

// Started lists the connectors started in the live host, for tests and
// status.
func (c *Connectors) Started() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.started))
	for name := range c.started {
		out = append(out, name)
	}
	return out
}
