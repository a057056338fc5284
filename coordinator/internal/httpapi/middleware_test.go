package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/logging/logtest"
)

// TestLogging: one record per endpoint call, at a level that follows the
// status class, naming the operation.
func TestLogging(t *testing.T) {
	var buf logtest.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := newFake()
	f.errs["GetConnector"] = api.Errorf(api.CodeNotFound, "Connector a not found")
	f.errs["ConnectorStatus"] = api.Errorf(api.CodeInternal, "store is down")
	srv := httptest.NewServer(NewHandler(f.services(), WithLogger(logger), WithLogger(nil)))
	defer srv.Close()

	do(t, srv, "GET", "/connectors", "")
	do(t, srv, "GET", "/connectors/a", "")
	do(t, srv, "GET", "/connectors/a/status", "")

	type record struct {
		Level, Msg, Op, Error string
		Code                  int
	}
	var got []record
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got = append(got, r)
	}
	want := []record{
		{Level: "DEBUG", Msg: "rest call", Op: "list_connectors"},
		{Level: "INFO", Msg: "rest call failed", Op: "get_connector", Code: 404, Error: "Connector a not found"},
		{Level: "ERROR", Msg: "rest call failed", Op: "connector_status", Code: 500, Error: "store is down"},
	}
	if len(got) != len(want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestWriteError: a code that is no error status is answered as the bug it
// is (500), and an empty message is null, as upstream shows a message-less
// exception.
func TestWriteError(t *testing.T) {
	tests := []struct {
		err  *api.Error
		want string
		code int
	}{
		{&api.Error{Code: 0, Message: "x"}, `{"error_code":500,"message":"x"}`, 500},
		{&api.Error{Code: 200, Message: "x"}, `{"error_code":500,"message":"x"}`, 500},
		{&api.Error{Code: api.CodeBadRequest}, `{"error_code":400,"message":null}`, 400},
		{&api.Error{Code: api.CodeConflict, Message: "a <b> & c"}, `{"error_code":409,"message":"a <b> & c"}`, 409},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		writeError(rec, tt.err)
		if body := strings.TrimSpace(rec.Body.String()); rec.Code != tt.code || body != tt.want {
			t.Errorf("writeError(%+v) = %d %s, want %d %s", tt.err, rec.Code, body, tt.code, tt.want)
		}
	}
}
