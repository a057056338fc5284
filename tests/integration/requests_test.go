package integration

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestEndpointsBadRequests checks Sluice's answers to malformed requests
// (spec §0, §1): every one is the JSON error body, and nothing is created.
func TestEndpointsBadRequests(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen := generatorCfg(c.Name("bad"))
	mustCreate(c, "exists", gen, "STOPPED")

	exact := []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"unknown field", "POST", "/connectors", map[string]any{"name": "x", "config": gen, "extra": 1}, 400, `Unrecognized field "extra"`},
		{"field names are case-sensitive", "POST", "/connectors", map[string]any{"Name": "x", "config": gen}, 400, `Unrecognized field "Name"`},
		{"wrong type of name", "POST", "/connectors", map[string]any{"name": map[string]any{}, "config": gen}, 400, `Invalid value for field "name": expected string`},
		{"wrong type of config", "POST", "/connectors", map[string]any{"name": "x", "config": []string{"a"}}, 400, `Invalid value for field "config": expected object`},
		// A scalar binds to a string, as in Jackson; then it is no state.
		{"boolean initial_state", "POST", "/connectors", map[string]any{"name": "x", "config": gen, "initial_state": true}, 400,
			"Invalid initial_state 'true': must be one of RUNNING, PAUSED, STOPPED"},
		{"unknown path", "GET", "/nope", nil, 404, "HTTP 404 Not Found"},
		{"unknown connector subpath", "GET", "/connectors/exists/nope", nil, 404, "HTTP 404 Not Found"},
		{"wrong method", "DELETE", "/connectors", nil, 405, "HTTP 405 Method Not Allowed"},
		{"wrong method on stop", "POST", "/connectors/exists/stop", nil, 405, "HTTP 405 Method Not Allowed"},
		{"too large", "PUT", "/connectors/big/config", `{"connector.class":"` + strings.Repeat("x", 9<<20) + `"}`, 413,
			"Request body too large (limit 8 MiB)"},
	}
	for _, tt := range exact {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, c.Do(tt.method, tt.path, tt.body), tt.status, tt.msg)
		})
	}

	prefix := []struct {
		name, method, path string
		body               any
	}{
		{"malformed JSON", "POST", "/connectors", `{"name": "x", "config": `},
		{"empty body on create", "POST", "/connectors", ""},
		{"empty body on PUT config", "PUT", "/connectors/x/config", ""},
		{"array for an object", "PUT", "/connectors/x/config", `["a"]`},
	}
	for _, tt := range prefix {
		t.Run(tt.name, func(t *testing.T) {
			// An empty string is sent as an empty body with the JSON media type.
			r := c.Do(tt.method, tt.path, tt.body)
			if r.Status != 400 || !strings.HasPrefix(r.Message(), "Invalid JSON in request body: ") {
				t.Fatalf("got %s, want 400 Invalid JSON in request body: …", r)
			}
		})
	}
	if got := listNames(c); len(got) != 1 || got[0] != "exists" {
		t.Fatalf("bad requests created connectors: %v", got)
	}
}
