package httpapi

// POST /sluice/connectors/{name}/signals: a signal for a connector's
// running task (Runtime.SignalConnector).

import (
	"context"
	"net/http"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

// signalRequest is a decoded signal for a connector.
type signalRequest struct {
	name   string
	signal api.ConnectorSignal
}

// maxSignalID bounds a signal's id: Debezium's signal table holds it in a
// varchar(64) or so.
const maxSignalID = 64

func decodeSignal(_ context.Context, r *http.Request) (any, error) {
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	req := signalRequest{name: r.PathValue("name")}
	err = fieldSet{
		"id":   stringField("id", &req.signal.ID),
		"type": stringField("type", &req.signal.Type),
		"data": func(v any) error {
			if v == nil {
				return nil
			}
			obj, ok := v.(jsonObject)
			if !ok {
				return errWrongType("data", "object")
			}
			raw, err := obj.MarshalJSON()
			req.signal.Data = raw
			return err
		},
	}.bind("", body)
	if err != nil {
		return nil, err
	}
	switch {
	case req.signal.Type == "":
		return nil, api.Errorf(api.CodeBadRequest, "Missing field \"type\": the signal's type, such as execute-snapshot or stop-snapshot")
	case len(req.signal.ID) > maxSignalID:
		return nil, api.Errorf(api.CodeBadRequest, "Invalid value for field \"id\": at most %d characters", maxSignalID)
	}
	return req, nil
}

func makeSendSignal(svc Runtime) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(signalRequest)
		return svc.SignalConnector(ctx, req.name, req.signal)
	}
}

// encodeSignalSent answers 202: the signal is written, and acted on when
// the connector's stream reaches it.
func encodeSignalSent(_ context.Context, w http.ResponseWriter, response any) error {
	return writeJSON(w, http.StatusAccepted, response)
}
