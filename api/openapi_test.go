package api

import (
	"encoding/json"
	"testing"
)

// TestOpenAPI checks the embedded document is an OpenAPI 3.1 document of
// the REST API, with one operationId per operation, and that OpenAPI hands
// out a copy. (coordinator/internal/httpapi checks it against the routes.)
func TestOpenAPI(t *testing.T) {
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("the document: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	for _, path := range []string{"/connectors", "/connectors/{name}/offsets", "/sluice/rollouts", "/health", "/openapi.json"} {
		if doc.Paths[path] == nil {
			t.Errorf("no path %s", path)
		}
	}
	ids := map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range item {
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] != "" {
				t.Errorf("%s %s: operationId %q missing or also %s's", method, path, id, ids[id])
			}
			ids[id] = method + " " + path
		}
	}
	a := OpenAPI()
	a[0] = 'x'
	if OpenAPI()[0] == 'x' {
		t.Error("OpenAPI returns the embedded bytes, not a copy")
	}
}
