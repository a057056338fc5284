package httpapi

// Response encoders: they pick the status code of each route (spec §1) and
// write JSON; encodeError writes every non-2xx answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/sluice-io/sluice/api"
)

// encodeJSON answers 200 with the response as JSON.
func encodeJSON(_ context.Context, w http.ResponseWriter, response any) error {
	return writeJSON(w, http.StatusOK, response)
}

// encodeNoBody answers status with no body: 204 for Kafka Connect's void
// methods, 202 for pause, resume and topics reset.
func encodeNoBody(status int) func(context.Context, http.ResponseWriter, any) error {
	return func(_ context.Context, w http.ResponseWriter, _ any) error {
		w.WriteHeader(status)
		return nil
	}
}

// encodeServerInfo answers GET /, with Sluice's own version also in the
// X-Sluice-Version header: the body's version is the Kafka Connect level.
func encodeServerInfo(ctx context.Context, w http.ResponseWriter, response any) error {
	if info, ok := response.(api.ServerInfo); ok && info.SluiceVersion != "" {
		w.Header().Set(api.VersionHeader, info.SluiceVersion)
	}
	return encodeJSON(ctx, w, response)
}

func encodeHealth(_ context.Context, w http.ResponseWriter, response any) error {
	h := response.(healthResponse)
	status := h.status
	if status == 0 {
		status = http.StatusOK
	}
	return writeJSON(w, status, h.body)
}

func encodeCreated(ctx context.Context, w http.ResponseWriter, response any) error {
	created := response.(api.CreatedConnector)
	setLocation(ctx, w, created.Name)
	return writeJSON(w, http.StatusCreated, created)
}

func encodePutConfig(ctx context.Context, w http.ResponseWriter, response any) error {
	resp := response.(putConfigResponse)
	if !resp.created {
		return writeJSON(w, http.StatusOK, resp.info)
	}
	setLocation(ctx, w, resp.info.Name)
	return writeJSON(w, http.StatusCreated, resp.info)
}

// encodeRestart: a nil state means the old connector-only restart, a void
// method upstream (204); with flags, 202 and the state shown.
func encodeRestart(_ context.Context, w http.ResponseWriter, response any) error {
	st := response.(*api.ConnectorStateInfo)
	if st == nil {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return writeJSON(w, http.StatusAccepted, st)
}

// baseURLKey holds the request's scheme and host, for Location headers,
// which JAX-RS makes absolute against the request's base URI.
type baseURLKey struct{}

func putBaseURL(ctx context.Context, r *http.Request) context.Context {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return context.WithValue(ctx, baseURLKey{}, scheme+"://"+r.Host)
}

// setLocation points at the new connector. The name is path-escaped as one
// segment ("/" too), so the URL leads back to the same connector.
func setLocation(ctx context.Context, w http.ResponseWriter, name string) {
	base, _ := ctx.Value(baseURLKey{}).(string)
	w.Header().Set("Location", base+"/connectors/"+url.PathEscape(name))
}

// encodeError is the go-kit error encoder of every route: the status is the
// error's code and the body {"error_code","message"} (spec §1). Errors that
// are not *api.Error are a 500 with their text, as api.AsError says.
func encodeError(_ context.Context, err error, w http.ResponseWriter) {
	writeError(w, api.AsError(err))
}

func writeError(w http.ResponseWriter, e *api.Error) {
	status, body := errorReply(e)
	_ = writeJSON(w, status, body) // ErrorBody always marshals
}

// errorReply is the status and body that answer e.
func errorReply(e *api.Error) (int, api.ErrorBody) {
	status := int(e.Code)
	if status < 400 || status > 599 {
		// A code that is no error status would make a success out of a
		// failure (or panic in WriteHeader); answer what it is, a bug.
		status = http.StatusInternalServerError
	}
	body := api.ErrorBody{ErrorCode: status}
	if e.Message != "" {
		// Upstream shows null for an exception without a message.
		msg := e.Message
		body.Message = &msg
	}
	return status, body
}

// writeJSON marshals before writing anything, so that a value that does
// not marshal still leaves room for a clean 500. A failed write is not
// returned: the header is out, and the client has gone.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	data, err := marshalJSON(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
	return nil
}

// marshalJSON is v as every answer writes it, with a final newline.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Jackson does not escape <, > and &; messages and configs must read
	// the same as upstream's.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
