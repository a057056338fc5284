package thirdparty

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kcctl is kcctl's REST client (its KafkaConnectApi interface, a MicroProfile
// REST client): every method makes the request kcctl makes, and decodes
// the answer into the shapes of kcctl's records. Go's decoding is stricter
// than Jackson's (no coercion of "true" to a boolean), so an answer that
// decodes here decodes in kcctl. kcctl throws on any status other than 2xx;
// so does every method (failing the test).
type kcctl struct {
	t    *testing.T
	base string
	// header is extra request headers (kcctl's context may add Basic auth).
	header http.Header
}

// kcctlInfo is kcctl's KafkaConnectInfo record.
type kcctlInfo struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	KafkaClusterID string `json:"kafka_cluster_id"`
}

// kcctlConnectorState is kcctl's ConnectorState; kcctlTaskState its
// TaskState; kcctlStatus its ConnectorStatusInfo.
type (
	kcctlConnectorState struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
	}
	kcctlTaskState struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	}
	kcctlStatus struct {
		Name      string              `json:"name"`
		Connector kcctlConnectorState `json:"connector"`
		Type      string              `json:"type"`
		Tasks     []kcctlTaskState    `json:"tasks"`
	}
)

// kcctlTaskInfo is kcctl's TaskInfo, kcctlInfo its ConnectorInfo,
// kcctlTaskConfig its TaskConfig, kcctlExpand its ConnectorExpandInfo and
// kcctlTopics its TopicsInfo.
type (
	kcctlTaskInfo struct {
		Connector string `json:"connector"`
		Task      *int   `json:"task"`
	}
	kcctlConnectorInfo struct {
		Name   string            `json:"name"`
		Config map[string]string `json:"config"`
		Tasks  []kcctlTaskInfo   `json:"tasks"`
		Type   string            `json:"type"`
	}
	kcctlTaskConfig struct {
		ID     kcctlTaskInfo     `json:"id"`
		Config map[string]string `json:"config"`
	}
	kcctlExpand struct {
		Status *kcctlStatus        `json:"status"`
		Info   *kcctlConnectorInfo `json:"info"`
	}
	kcctlTopics struct {
		Topics []string `json:"topics"`
	}
)

// kcctlConfigInfos is kcctl's ConfigInfos (apply --dry-run reads the error
// count, and each config's name and errors).
type kcctlConfigInfos struct {
	Name       string   `json:"name"`
	ErrorCount int      `json:"error_count"`
	Groups     []string `json:"groups"`
	Configs    []struct {
		Definition kcctlConfigKeyInfo `json:"definition"`
		Value      struct {
			Name              string   `json:"name"`
			Value             *string  `json:"value"`
			RecommendedValues []string `json:"recommendedValues"`
			Errors            []string `json:"errors"`
			Visible           bool     `json:"visible"`
		} `json:"value"`
	} `json:"configs"`
}

// kcctlPlugin is kcctl's ConnectorPlugin.
type kcctlPlugin struct {
	Class   string `json:"class"`
	Type    string `json:"type"`
	Version string `json:"version"`
}

// kcctlConfigKeyInfo is kcctl's ConfigInfos.ConfigKeyInfo: what
// `describe plugin` prints (name, type, required, default, documentation).
type kcctlConfigKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         string   `json:"group"`
	OrderInGroup  int      `json:"orderInGroup"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"displayName"`
	Dependents    []string `json:"dependents"`
}

// kcctlOffset is kcctl's ConnectorOffset, kcctlOffsets its ConnectorOffsets.
type (
	kcctlOffset struct {
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	}
	kcctlOffsets struct {
		Offsets []kcctlOffset `json:"offsets"`
	}
)

// kcctlMessage is kcctl's AlterResetOffsetsResponse.
type kcctlMessage struct {
	Message string `json:"message"`
}

// kcctlVersion is kcctl's Version: the first two dot-separated parts of
// GET /'s version as integers (Java's Integer.parseInt, which throws on
// anything else: kcctl then fails every command that gates on it).
type kcctlVersion struct{ major, minor int }

func parseKcctlVersion(s string) (kcctlVersion, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return kcctlVersion{}, fmt.Errorf("version %q: ArrayIndexOutOfBoundsException", s)
	}
	major, err := javaParseInt(parts[0])
	if err != nil {
		return kcctlVersion{}, err
	}
	minor, err := javaParseInt(parts[1])
	if err != nil {
		return kcctlVersion{}, err
	}
	return kcctlVersion{major, minor}, nil
}

// javaParseInt is Integer.parseInt: an optional sign, then ASCII digits.
func javaParseInt(s string) (int, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, fmt.Errorf("NumberFormatException: For input string: %q", s)
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("NumberFormatException: For input string: %q", s)
	}
	return int(n), nil
}

// atLeast is Version.greaterOrEquals.
func (v kcctlVersion) atLeast(major, minor int) bool {
	return v.major > major || v.major == major && v.minor >= minor
}

// String is how kcctl prints it ("Current version: 0.1").
func (v kcctlVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }

// gate is what every gated kcctl command does first: GET / and compare.
// It fails the test with kcctl's refusal when the server is too old.
func (k kcctl) gate(what string, major, minor int) {
	k.t.Helper()
	info := k.getWorkerInfo()
	v, err := parseKcctlVersion(info.Version)
	if err != nil {
		k.t.Fatalf("%s: kcctl cannot parse GET /'s version: %v", what, err)
	}
	if !v.atLeast(major, minor) {
		k.t.Fatalf("%s requires at least Kafka Connect %d.%d. Current version: %s", what, major, minor, v)
	}
}

func (k kcctl) getWorkerInfo() (out kcctlInfo) {
	k.call(http.MethodGet, "/", nil, nil, &out)
	return out
}

func (k kcctl) getConnectors() (out []string) {
	k.call(http.MethodGet, "/connectors/", nil, nil, &out)
	return out
}

func (k kcctl) getConnectorExpandInfo(expands ...string) (out map[string]kcctlExpand) {
	k.call(http.MethodGet, "/connectors", url.Values{"expand": expands}, nil, &out)
	return out
}

func (k kcctl) getConnector(name string) (out kcctlConnectorInfo) {
	k.call(http.MethodGet, "/connectors/"+url.PathEscape(name), nil, nil, &out)
	return out
}

func (k kcctl) getConnectorConfig(name string) (out map[string]string) {
	k.call(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/config", nil, nil, &out)
	return out
}

func (k kcctl) getConnectorTasks(name string) (out []kcctlTaskConfig) {
	k.call(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/tasks", nil, nil, &out)
	return out
}

func (k kcctl) getConnectorTopics(name string) (out map[string]kcctlTopics) {
	k.call(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/topics", nil, nil, &out)
	return out
}

// updateLogLevel is patch loglevel without --scope: the classes changed.
func (k kcctl) updateLogLevel(logger, level string) (out []string) {
	k.call(http.MethodPut, "/admin/loggers/"+url.PathEscape(logger), nil, map[string]string{"level": level}, &out)
	return out
}

// updateLogLevelWithScope is patch loglevel --scope: kcctl reads the
// answer as text (a JSON list for the worker scope, nothing for cluster).
func (k kcctl) updateLogLevelWithScope(logger, scope, level string) string {
	var out json.RawMessage
	k.call(http.MethodPut, "/admin/loggers/"+url.PathEscape(logger), url.Values{"scope": {scope}}, map[string]string{"level": level}, &out)
	return string(out)
}

// createConnector is apply of a file with a name: the file's text as the
// body (kcctl reads the answer as a ConnectorStatusInfo).
func (k kcctl) createConnector(contents string) (out kcctlStatus) {
	k.call(http.MethodPost, "/connectors/", nil, json.RawMessage(contents), &out)
	return out
}

// updateConnector is apply of a connector that exists: its config map.
func (k kcctl) updateConnector(name string, config map[string]string) (out kcctlStatus) {
	k.call(http.MethodPut, "/connectors/"+url.PathEscape(name)+"/config", nil, config, &out)
	return out
}

// validateConfig is apply --dry-run: the plugin named by the simple class
// name (after the last '.').
func (k kcctl) validateConfig(plugin string, config map[string]string) (out kcctlConfigInfos) {
	k.call(http.MethodPut, "/connector-plugins/"+url.PathEscape(plugin)+"/config/validate", nil, config, &out)
	return out
}

func (k kcctl) pauseConnector(name string) {
	k.call(http.MethodPut, "/connectors/"+url.PathEscape(name)+"/pause", nil, nil, nil)
}

func (k kcctl) resumeConnector(name string) {
	k.call(http.MethodPut, "/connectors/"+url.PathEscape(name)+"/resume", nil, nil, nil)
}

func (k kcctl) restartTask(name, id string) {
	k.call(http.MethodPost, "/connectors/"+url.PathEscape(name)+"/tasks/"+url.PathEscape(id)+"/restart", nil, nil, nil)
}

func (k kcctl) deleteConnector(name string) {
	k.call(http.MethodDelete, "/connectors/"+url.PathEscape(name), nil, nil, nil)
}

func (k kcctl) getConnectorPlugins(connectorsOnly bool) (out []kcctlPlugin) {
	k.call(http.MethodGet, "/connector-plugins", url.Values{"connectorsOnly": {strconv.FormatBool(connectorsOnly)}}, nil, &out)
	return out
}

func (k kcctl) getConnectorPluginConfig(name string) (out []kcctlConfigKeyInfo) {
	k.call(http.MethodGet, "/connector-plugins/"+url.PathEscape(name)+"/config", nil, nil, &out)
	return out
}

// restartConnector is the restart without -t: a void method.
func (k kcctl) restartConnector(name string) {
	k.call(http.MethodPost, "/connectors/"+url.PathEscape(name)+"/restart", nil, nil, nil)
}

// restartConnectorAndTasks is restart -t all|failed: the client sends both
// booleans, always.
func (k kcctl) restartConnectorAndTasks(name string, includeTasks, onlyFailed bool) (out kcctlStatus) {
	q := url.Values{"includeTasks": {strconv.FormatBool(includeTasks)}, "onlyFailed": {strconv.FormatBool(onlyFailed)}}
	k.call(http.MethodPost, "/connectors/"+url.PathEscape(name)+"/restart", q, nil, &out)
	return out
}

func (k kcctl) stopConnector(name string) {
	k.call(http.MethodPut, "/connectors/"+url.PathEscape(name)+"/stop", nil, nil, nil)
}

func (k kcctl) getConnectorStatus(name string) (out kcctlStatus) {
	k.call(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", nil, nil, &out)
	return out
}

func (k kcctl) getConnectorOffsets(name string) (out kcctlOffsets) {
	k.call(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/offsets", nil, nil, &out)
	return out
}

func (k kcctl) patchConnectorOffsets(name string, offsets kcctlOffsets) (out kcctlMessage) {
	k.call(http.MethodPatch, "/connectors/"+url.PathEscape(name)+"/offsets", nil, offsets, &out)
	return out
}

func (k kcctl) deleteConnectorOffsets(name string) (out kcctlMessage) {
	k.call(http.MethodDelete, "/connectors/"+url.PathEscape(name)+"/offsets", nil, nil, &out)
	return out
}

// call sends one request as the REST client does — JSON accepted; a body,
// when there is one, as JSON with its Content-Type; none otherwise — and
// decodes a 2xx answer into out (nil: the method is void and ignores it).
func (k kcctl) call(method, path string, query url.Values, body, out any) {
	k.t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			k.t.Fatalf("encode %T: %v", body, err)
		}
		rd = bytes.NewReader(data)
	}
	u := k.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		k.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for name, values := range k.header {
		req.Header[name] = values
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		k.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		k.t.Fatalf("%s %s: read the answer: %v", method, u, err)
	}
	if resp.StatusCode/100 != 2 {
		k.t.Fatalf("%s %s: %d %s (kcctl throws)", method, u, resp.StatusCode, data)
	}
	if out == nil {
		return
	}
	if raw, ok := out.(*json.RawMessage); ok {
		*raw = data // text, read by the command itself
		return
	}
	if err := json.Unmarshal(data, out); err != nil {
		k.t.Fatalf("%s %s: kcctl cannot read %s: %v", method, u, data, err)
	}
}
