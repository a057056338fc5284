package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/api"
)

// fake is a recording service of every resource: it remembers each call with its arguments,
// answers canned values, and fails or panics on the methods it is told to.
type fake struct {
	mu       sync.Mutex
	calls    []string
	args     map[string][]any
	errs     map[string]error
	panicOn  string
	created  bool                    // PutConnectorConfig's answer
	restart  *api.ConnectorStateInfo // RestartConnector's answer
	expanded map[string]api.ConnectorExpanded
	// hold, when set, runs in PutConnectorConfig with its context: it can
	// keep the request in the Service, and fail it.
	hold func(ctx context.Context) error
	// gather is what Metrics answers from (nil: no families).
	gather prometheus.Gatherer
}

// services is f as every service of the handler.
func (f *fake) services() Services {
	return Services{Connectors: f, Runtime: f, Plugins: f, Offsets: f, ConfigHistory: f, Agents: f, Fleet: f, Admin: f}
}

func newFake() *fake {
	return &fake{args: map[string][]any{}, errs: map[string]error{}}
}

func (f *fake) record(method string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, method)
	f.args[method] = args
	if f.panicOn == method {
		panic("boom in " + method)
	}
	return f.errs[method]
}

// called returns the arguments of the last call of method, and whether
// there was one.
func (f *fake) called(method string) ([]any, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.args[method]
	return a, ok
}

// info leaves Tasks nil on purpose: the transport must still answer [].
func info(name string) api.ConnectorInfo {
	return api.ConnectorInfo{Name: name, Config: map[string]string{"k": "v"}, Type: api.TypeSource}
}

func state(name string) api.ConnectorStateInfo {
	return api.ConnectorStateInfo{Name: name, Connector: api.ConnectorState{State: api.StateRunning, WorkerID: "w:8083"}, Type: api.TypeSource}
}

func (f *fake) ServerInfo(ctx context.Context) (api.ServerInfo, error) {
	return api.ServerInfo{Version: "1.0", Commit: "abc", KafkaClusterID: "kc"}, f.record("ServerInfo")
}

func (f *fake) Health(ctx context.Context) (api.Health, int) {
	_ = f.record("Health")
	return api.Health{Status: "starting", Message: "Worker is still starting up."}, http.StatusServiceUnavailable
}

func (f *fake) ListConnectors(ctx context.Context) ([]string, error) {
	return []string{"a", "b"}, f.record("ListConnectors")
}

func (f *fake) ExpandConnectors(ctx context.Context, status, info bool) (map[string]api.ConnectorExpanded, error) {
	return f.expanded, f.record("ExpandConnectors", status, info)
}

func (f *fake) CreateConnector(ctx context.Context, req api.CreateConnectorRequest) (api.CreatedConnector, error) {
	return api.CreatedConnector{ConnectorInfo: info(req.Name)}, f.record("CreateConnector", req)
}

func (f *fake) GetConnector(ctx context.Context, name string) (api.ConnectorInfo, error) {
	return info(name), f.record("GetConnector", name)
}

func (f *fake) GetConnectorConfig(ctx context.Context, name string) (map[string]string, error) {
	return map[string]string{"k": "v"}, f.record("GetConnectorConfig", name)
}

func (f *fake) PutConnectorConfig(ctx context.Context, name string, config map[string]string) (api.ConnectorInfo, bool, error) {
	if f.hold != nil {
		if err := f.hold(ctx); err != nil {
			return api.ConnectorInfo{}, false, err
		}
	}
	return info(name), f.created, f.record("PutConnectorConfig", name, config)
}

func (f *fake) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (api.ConnectorInfo, error) {
	return info(name), f.record("PatchConnectorConfig", name, patch)
}

func (f *fake) ConnectorStatus(ctx context.Context, name string) (api.ConnectorStateInfo, error) {
	return state(name), f.record("ConnectorStatus", name)
}

func (f *fake) TaskConfigs(ctx context.Context, name string) ([]api.TaskInfo, error) {
	return []api.TaskInfo{{ID: api.ConnectorTaskID{Connector: name, Task: 0}, Config: map[string]string{"t": "1"}}},
		f.record("TaskConfigs", name)
}

func (f *fake) TaskStatus(ctx context.Context, name string, task int) (api.TaskState, error) {
	return api.TaskState{ID: task, State: api.StateFailed, WorkerID: "w:8083", Trace: "x"}, f.record("TaskStatus", name, task)
}

func (f *fake) StopConnector(ctx context.Context, name string) error {
	return f.record("StopConnector", name)
}

func (f *fake) PauseConnector(ctx context.Context, name string) error {
	return f.record("PauseConnector", name)
}

func (f *fake) ResumeConnector(ctx context.Context, name string) error {
	return f.record("ResumeConnector", name)
}

func (f *fake) RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*api.ConnectorStateInfo, error) {
	return f.restart, f.record("RestartConnector", name, includeTasks, onlyFailed)
}

func (f *fake) RestartTask(ctx context.Context, name string, task int) error {
	return f.record("RestartTask", name, task)
}

func (f *fake) DeleteConnector(ctx context.Context, name string, resetOffsets bool) error {
	return f.record("DeleteConnector", name, resetOffsets)
}

func (f *fake) ConnectorTopics(ctx context.Context, name string) (map[string]api.ActiveTopics, error) {
	return map[string]api.ActiveTopics{name: {Topics: []string{"t1"}}}, f.record("ConnectorTopics", name)
}

func (f *fake) ResetConnectorTopics(ctx context.Context, name string) error {
	return f.record("ResetConnectorTopics", name)
}

func (f *fake) ListPlugins(ctx context.Context, connectorsOnly bool) ([]api.PluginInfo, error) {
	return []api.PluginInfo{{Class: "x.FileStreamSourceConnector", Type: api.TypeSource, Version: "1"}},
		f.record("ListPlugins", connectorsOnly)
}

func (f *fake) PluginConfig(ctx context.Context, plugin, _ string) ([]api.ConfigKeyInfo, error) {
	return nil, f.record("PluginConfig", plugin)
}

func (f *fake) ValidateConfig(ctx context.Context, plugin string, config map[string]string) (api.ConfigInfos, error) {
	return api.ConfigInfos{Name: plugin, Groups: []string{}, Configs: []api.ConfigInfo{}}, f.record("ValidateConfig", plugin, config)
}

func (f *fake) GetOffsets(ctx context.Context, name string) (api.ConnectorOffsets, error) {
	return api.ConnectorOffsets{}, f.record("GetOffsets", name)
}

func (f *fake) AlterOffsets(ctx context.Context, name string, offsets []api.ConnectorOffset) (api.Message, error) {
	return api.Message{Message: "The offsets for this connector have been altered successfully"},
		f.record("AlterOffsets", name, offsets)
}

func (f *fake) ResetOffsets(ctx context.Context, name string) (api.Message, error) {
	return api.Message{Message: "The offsets for this connector have been reset successfully"},
		f.record("ResetOffsets", name)
}

// reply is what the test server answered.
type reply struct {
	status int
	header http.Header
	body   string
}

// serve starts the handler on a real loopback server for one test.
func serve(t *testing.T, f *fake) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(NewHandler(f.services()))
	t.Cleanup(srv.Close)
	return srv
}

// do sends one request. A non-empty body is sent as application/json
// unless headers say otherwise; a header value "" removes it.
func do(t *testing.T, srv *httptest.Server, method, path, body string, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	return doReader(t, srv, method, path, rd, headers...)
}

func doReader(t *testing.T, srv *httptest.Server, method, path string, body io.Reader, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: strings.TrimSuffix(string(b), "\n")}
}

// errorBody is the exact JSON body of an error answer, written out by hand
// rather than by the code under test.
func errorBody(code int, msg string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(msg)
	return fmt.Sprintf(`{"error_code":%d,"message":%s}`, code, strings.TrimSuffix(b.String(), "\n"))
}
