package api

import (
	"context"
	"net/http"
	"net/url"
)

// Connectors is the connector endpoints of the Kafka Connect REST API
// (/connectors/…) and Sluice's lag of a sink. Get one from
// Client.Connectors.
type Connectors struct{ c *Client }

// List is GET /connectors: the connectors' names.
func (g *Connectors) List(ctx context.Context) ([]string, error) {
	var names []string
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/connectors", safe: true}, &names)
	return names, err
}

// ListExpanded is GET /connectors?expand=…: every connector with its
// status, its info, or both, by name.
func (g *Connectors) ListExpanded(ctx context.Context, status, info bool) (map[string]ConnectorExpanded, error) {
	q := url.Values{}
	if status {
		q.Add("expand", "status")
	}
	if info {
		q.Add("expand", "info")
	}
	if len(q) == 0 {
		// An unknown expand value still makes the answer a map, of
		// empty entries: the caller asked for the map's shape.
		q.Add("expand", "")
	}
	out := map[string]ConnectorExpanded{}
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: "/connectors", query: q, safe: true}, &out)
	return out, err
}

// Get is GET /connectors/{name}: its config, tasks and type.
func (g *Connectors) Get(ctx context.Context, name string) (ConnectorInfo, error) {
	var out ConnectorInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s", name), safe: true}, &out)
	return out, err
}

// Config is GET /connectors/{name}/config.
func (g *Connectors) Config(ctx context.Context, name string) (map[string]string, error) {
	var out map[string]string
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s/config", name), safe: true}, &out)
	return out, err
}

// Create is POST /connectors: a connector of req.Config, in
// req.InitialState (RUNNING, PAUSED or STOPPED; empty: RUNNING) and at
// req.InitialOffsets when not nil (KIP-980, KIP-995). A nil
// InitialOffsets leaves the field out, so the offsets a deleted connector
// of the name left are kept; a non-nil empty one sends [], which wipes
// them. Not retried once sent: a create applied by an attempt whose answer
// was lost would answer the next 409 "already exists".
func (g *Connectors) Create(ctx context.Context, req CreateConnectorRequest) (CreatedConnector, error) {
	body := createBody{Name: req.Name, Config: req.Config, InitialState: req.InitialState}
	if req.InitialOffsets != nil {
		body.InitialOffsets = &req.InitialOffsets
	}
	var out CreatedConnector
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: "/connectors", body: body}, &out)
	return out, err
}

// createBody is POST /connectors's body as the client sends it: an empty
// initial_offsets list is sent, an absent one left out.
type createBody struct {
	Name           string             `json:"name"`
	Config         map[string]string  `json:"config"`
	InitialState   string             `json:"initial_state,omitempty"`
	InitialOffsets *[]ConnectorOffset `json:"initial_offsets,omitempty"`
}

// PutConfig is PUT /connectors/{name}/config: it creates the connector, or
// replaces its config; created says which, as the answering attempt saw
// it (an attempt sent again after a lost answer finds the connector made
// by the first, and says false).
func (g *Connectors) PutConfig(ctx context.Context, name string, config map[string]string) (info ConnectorInfo, created bool, err error) {
	ans, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/connectors/%s/config", name), body: nonNilConfig(config), safe: true}, &info)
	return info, ans.status == http.StatusCreated, err
}

// PatchConfig is PATCH /connectors/{name}/config (KIP-477): patch is merged
// into the config, a nil value removes its key.
func (g *Connectors) PatchConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error) {
	if patch == nil {
		patch = map[string]*string{}
	}
	var out ConnectorInfo
	_, err := g.c.do(ctx, call{method: http.MethodPatch, path: pathf("/connectors/%s/config", name), body: patch, safe: true}, &out)
	return out, err
}

// Delete is DELETE /connectors/{name}. Not retried once sent (a second
// attempt would answer 404).
func (g *Connectors) Delete(ctx context.Context, name string) error {
	_, err := g.c.do(ctx, call{method: http.MethodDelete, path: pathf("/connectors/%s", name)}, nil)
	return err
}

// DeleteResettingOffsets is DELETE /connectors/{name}?reset_offsets=true:
// the connector and its offsets, in one call.
func (g *Connectors) DeleteResettingOffsets(ctx context.Context, name string) error {
	q := url.Values{"reset_offsets": {"true"}}
	_, err := g.c.do(ctx, call{method: http.MethodDelete, path: pathf("/connectors/%s", name), query: q}, nil)
	return err
}

// Status is GET /connectors/{name}/status.
func (g *Connectors) Status(ctx context.Context, name string) (ConnectorStateInfo, error) {
	var out ConnectorStateInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s/status", name), safe: true}, &out)
	return out, err
}

// Pause is PUT /connectors/{name}/pause (answered at once; the tasks pause
// after).
func (g *Connectors) Pause(ctx context.Context, name string) error {
	return g.put(ctx, name, "pause")
}

// Resume is PUT /connectors/{name}/resume.
func (g *Connectors) Resume(ctx context.Context, name string) error {
	return g.put(ctx, name, "resume")
}

// Stop is PUT /connectors/{name}/stop (KIP-875): it returns once the stop
// is durable.
func (g *Connectors) Stop(ctx context.Context, name string) error {
	return g.put(ctx, name, "stop")
}

// put sends one of the bodiless, idempotent PUT /connectors/{name}/{verb}.
func (g *Connectors) put(ctx context.Context, name, verb string) error {
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/connectors/%s/", name) + verb, safe: true}, nil)
	return err
}

// RestartOptions are the query parameters of a restart (KIP-745).
type RestartOptions struct {
	// IncludeTasks restarts the tasks too; OnlyFailed only the instances
	// that are FAILED.
	IncludeTasks bool
	OnlyFailed   bool
}

// query is o as a restart's query parameters.
func (o RestartOptions) query() url.Values {
	q := url.Values{}
	if o.IncludeTasks {
		q.Set("includeTasks", "true")
	}
	if o.OnlyFailed {
		q.Set("onlyFailed", "true")
	}
	return q
}

// Restart is POST /connectors/{name}/restart. With either option it returns
// the status the restart is shown with (202); without, the connector
// alone restarts and the status is nil (204).
func (g *Connectors) Restart(ctx context.Context, name string, opts RestartOptions) (*ConnectorStateInfo, error) {
	var out ConnectorStateInfo
	ans, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/connectors/%s/restart", name), query: opts.query()}, &out)
	if err != nil || ans.status == http.StatusNoContent || len(ans.body) == 0 {
		return nil, err
	}
	return &out, nil
}

// Tasks is GET /connectors/{name}/tasks: the tasks' configs.
func (g *Connectors) Tasks(ctx context.Context, name string) ([]TaskInfo, error) {
	var out []TaskInfo
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s/tasks", name), safe: true}, &out)
	return out, err
}

// TaskStatus is GET /connectors/{name}/tasks/{task}/status.
func (g *Connectors) TaskStatus(ctx context.Context, name string, task int) (TaskState, error) {
	var out TaskState
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s/tasks/%s/status", name, task), safe: true}, &out)
	return out, err
}

// RestartTask is POST /connectors/{name}/tasks/{task}/restart.
func (g *Connectors) RestartTask(ctx context.Context, name string, task int) error {
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/connectors/%s/tasks/%s/restart", name, task)}, nil)
	return err
}

// Topics is GET /connectors/{name}/topics (KIP-558): the topics the
// connector used since it was created or its topics were reset.
func (g *Connectors) Topics(ctx context.Context, name string) ([]string, error) {
	var out map[string]ActiveTopics
	if _, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/connectors/%s/topics", name), safe: true}, &out); err != nil {
		return nil, err
	}
	topics := []string{}
	for _, at := range out {
		topics = append(topics, at.Topics...)
	}
	return topics, nil
}

// ResetTopics is PUT /connectors/{name}/topics/reset.
func (g *Connectors) ResetTopics(ctx context.Context, name string) error {
	_, err := g.c.do(ctx, call{method: http.MethodPut, path: pathf("/connectors/%s/topics/reset", name), safe: true}, nil)
	return err
}

// Lag is GET /sluice/connectors/{name}/lag: a sink connector's consumer
// lag, per partition. Sluice only.
func (g *Connectors) Lag(ctx context.Context, name string) (ConnectorLag, error) {
	var out ConnectorLag
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/lag", name), safe: true}, &out)
	return out, err
}

// Gauges is GET /sluice/connectors/{name}/gauges: the gauges each of the
// connector's tasks reports of itself (a replication slot's lag, a
// snapshot's progress), a task whose agent did not answer with its Error
// set. Sluice only.
func (g *Connectors) Gauges(ctx context.Context, name string) (ConnectorGauges, error) {
	var out ConnectorGauges
	_, err := g.c.do(ctx, call{method: http.MethodGet, path: pathf("/sluice/connectors/%s/gauges", name), safe: true}, &out)
	return out, err
}

// Signal is POST /sluice/connectors/{name}/signals: a signal (Debezium's
// execute-snapshot, stop-snapshot) for the connector's running task. It is
// not sent again when its outcome is unknown: the signal may have been
// written. Sluice only.
func (g *Connectors) Signal(ctx context.Context, name string, sig ConnectorSignal) (SignalSent, error) {
	var out SignalSent
	_, err := g.c.do(ctx, call{method: http.MethodPost, path: pathf("/sluice/connectors/%s/signals", name), body: sig}, &out)
	return out, err
}

// nonNilConfig sends a nil config as {}: null is no config map.
func nonNilConfig(config map[string]string) map[string]string {
	if config == nil {
		return map[string]string{}
	}
	return config
}
