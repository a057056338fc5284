package runtime

import (
	"context"
	"errors"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
)

// A running source task may take signals (connect.SignalReceiver): the
// leader's signal command (POST /sluice/connectors/{name}/signals) reaches
// it through Worker.Signal while it runs.

// takeSignals hands the signal command the plugin's source task from the
// moment it started until stopSignals.
func (t *task) takeSignals(plugin any) {
	t.mu.Lock()
	t.signals = plugin
	t.mu.Unlock()
}

// stopSignals stops the signal command reaching the task: call it before
// the plugin's task stops.
func (t *task) stopSignals() {
	t.mu.Lock()
	t.signals = nil
	t.mu.Unlock()
}

// Signal hands sig to task id, which this worker must be running: an
// api.Error says why not (the task is not here or not started: 409; its
// class takes no signals, or refuses this one: 400; it failed to write
// it: 500). It returns the signal's id.
func (w *Worker) Signal(ctx context.Context, id api.TaskID, sig connect.Signal) (string, error) {
	w.mu.Lock()
	t := w.tasks[id]
	w.mu.Unlock()
	if t == nil {
		return "", api.Errorf(api.CodeConflict, "Task %s is not running on this agent (it is starting, moving or stopping): send the signal again in a moment", id)
	}
	t.mu.Lock()
	plugin, class := t.signals, t.assignment.ConnectorConfig["connector.class"]
	t.mu.Unlock()
	if plugin == nil {
		return "", api.Errorf(api.CodeConflict, "Task %s is not running (it is starting, stopping or failed): it cannot take a signal now", id)
	}
	rcv, ok := plugin.(connect.SignalReceiver)
	if !ok {
		return "", api.Errorf(api.CodeBadRequest, "Connector %s's class %s does not take signals: only the native PostgreSQL connector (io.sluice.connect.postgres.PostgresSourceConnector) does", id.Connector, class)
	}
	if sig.ID == "" {
		sig.ID = connect.NewSignalID()
	}
	if err := rcv.Signal(ctx, sig); err != nil {
		var se *connect.SignalError
		switch {
		case errors.As(err, &se) && se.Conflict:
			return "", api.Errorf(api.CodeConflict, "Connector %s cannot take the signal: %s", id.Connector, se.Message)
		case errors.As(err, &se):
			return "", api.Errorf(api.CodeBadRequest, "Connector %s refused the signal: %s", id.Connector, se.Message)
		}
		return "", api.Errorf(api.CodeInternal, "Task %s could not write the signal: %v", id, err)
	}
	return sig.ID, nil
}
