package api

import "encoding/json"

// ConnectorSignal is the body of POST /sluice/connectors/{name}/signals: a
// signal for the connector's running task, in Debezium's terms — the
// native PostgreSQL connector writes it to its signal table
// (signal.data.collection), where its stream reads it in order with the
// changes around it. Sluice only.
type ConnectorSignal struct {
	// ID names the signal (unique in the signal table); Sluice makes one
	// up when it is empty.
	ID string `json:"id,omitempty"`
	// Type is the signal's type: execute-snapshot or stop-snapshot.
	Type string `json:"type"`
	// Data is the signal's data, a JSON object: for execute-snapshot
	// {"data-collections": ["public.orders"], "type": "incremental",
	// "additional-conditions": [{"data-collection": "public.orders",
	// "filter": "region = 'EU'"}]}.
	Data json.RawMessage `json:"data,omitempty"`
}

// SignalSent is the answer of POST /sluice/connectors/{name}/signals: the
// signal is durably written, and the connector acts on it when its stream
// reaches it (GET /sluice/connectors/{name}/gauges shows the progress of
// a snapshot it starts).
type SignalSent struct {
	Connector string `json:"connector"`
	// ID is the signal's id, made up by Sluice when the request had none.
	ID   string `json:"id"`
	Type string `json:"type"`
	// Task and WorkerID are the task that wrote it and its agent.
	Task     int    `json:"task"`
	WorkerID string `json:"worker_id"`
}
