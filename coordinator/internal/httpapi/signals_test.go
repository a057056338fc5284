package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func (f *fake) SignalConnector(ctx context.Context, name string, sig api.ConnectorSignal) (api.SignalSent, error) {
	return api.SignalSent{Connector: name, ID: "s-1", Type: sig.Type, WorkerID: "agent-1"}, f.record("SignalConnector", name, sig)
}

// TestSendSignal: the body's data reaches the service as the JSON object
// it was, the answer is 202 with the signal's id, and a body without a
// type, with an unknown field or with data that is not an object is a 400
// naming the field.
func TestSendSignal(t *testing.T) {
	f := newFake()
	srv := httptest.NewServer(NewHandler(f.services()))
	t.Cleanup(srv.Close)

	r := do(t, srv, http.MethodPost, "/sluice/connectors/cdc/signals",
		`{"type":"execute-snapshot","data":{"data-collections":["public.orders"],"additional-conditions":[{"data-collection":"public.orders","filter":"id > 10"}]}}`)
	if r.status != http.StatusAccepted || !strings.Contains(r.body, `"id":"s-1"`) {
		t.Fatalf("answer %d %s", r.status, r.body)
	}
	args, _ := f.called("SignalConnector")
	sig := args[1].(api.ConnectorSignal)
	if args[0] != "cdc" || sig.Type != "execute-snapshot" ||
		string(sig.Data) != `{"data-collections":["public.orders"],"additional-conditions":[{"data-collection":"public.orders","filter":"id > 10"}]}` {
		t.Fatalf("the service got %v %+v (data %s)", args[0], sig, sig.Data)
	}
	for body, want := range map[string]string{
		`{"data":{}}`:                                         `Missing field \"type\"`,
		`{"type":"stop-snapshot","x":1}`:                      `Unrecognized field \"x\"`,
		`{"type":"stop-snapshot","data":[]}`:                  `Invalid value for field \"data\": expected object`,
		`{"type":"t","id":"` + strings.Repeat("x", 65) + `"}`: `at most 64 characters`,
	} {
		r := do(t, srv, http.MethodPost, "/sluice/connectors/cdc/signals", body)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, want) {
			t.Errorf("%s: answer %d %s, want 400 with %s", body, r.status, r.body, want)
		}
	}
}
