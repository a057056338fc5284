package wire

import "github.com/sluice-io/sluice/api"

// SignalRequest asks the agent running a connector's task to hand it a
// signal (connect.SignalReceiver): what POST
// /sluice/connectors/{name}/signals sends. The native PostgreSQL task
// writes it to its signal table, where its stream reads it in order.
type SignalRequest struct {
	Term   int64               `json:"term"`
	Task   TaskID              `json:"task"`
	Signal api.ConnectorSignal `json:"signal"`
}

// SignalReply names the signal written: its id, made up by the agent when
// the request had none.
type SignalReply struct {
	ID string `json:"id"`
}
