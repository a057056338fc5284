package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestOpenAPIOnCluster: every coordinator of a cluster with REST
// authentication answers GET /openapi.json with the api module's
// document, as JSON. Without credentials it is refused exactly where GET
// /health is, and answered where --rest-auth-open-probes opens the probes
// (a follower started with it).
func TestOpenAPIOnCluster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer}]}
`, bcryptOf(t, "v"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	c.Headers = basicAuth("vera", "v")
	c.ChangeCoordinatorConfig(func(cfg *coordinator.Config) { cfg.RESTSecurity.OpenProbes = true })
	_, followerURL := c.StartExtraCoordinator()

	for _, tc := range []struct {
		name, url string
		open      bool
	}{{"leader", c.URL, false}, {"follower with open probes", followerURL, true}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, headers := range [][]string{nil, basicAuth("vera", "v")} {
				got := sluicetest.DoWith(t, tc.url, http.MethodGet, "/openapi.json", nil, headers...)
				health := sluicetest.DoWith(t, tc.url, http.MethodGet, "/health", nil, headers...)
				connectors := sluicetest.DoWith(t, tc.url, http.MethodGet, "/connectors", nil, headers...)
				if headers == nil && connectors.Status != http.StatusUnauthorized {
					t.Errorf("GET /connectors without credentials: %s", connectors)
				}
				if headers == nil && !tc.open {
					if got.Status != http.StatusUnauthorized || health.Status != http.StatusUnauthorized {
						t.Errorf("without credentials: %s (GET /health %d), want 401 for both", got, health.Status)
					}
					continue
				}
				if got.Status != http.StatusOK || !bytes.Equal(got.Body, api.OpenAPI()) {
					t.Fatalf("credentials %v: %d, %d bytes; want 200 and api.OpenAPI()", headers != nil, got.Status, len(got.Body))
				}
				if ct := got.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				if health.Status == http.StatusUnauthorized {
					t.Errorf("GET /health is 401 where the document is open")
				}
			}
		})
	}
}

// openAPIOperation is what TestOpenAPIAnswersOnCluster reads of an
// operation of the document.
type openAPIOperation struct {
	OperationID string `json:"operationId"`
	RequestBody *struct {
		Content map[string]struct {
			Example any `json:"example"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]json.RawMessage `json:"responses"`
}

// TestOpenAPIAnswersOnCluster sends every operation of the document to a
// running cluster, with its request example as the body, on connectors,
// tasks, plugins, agents, windows, rollouts and history entries that do
// not exist (and the creates and fleet operations on what the examples
// name): every status the cluster answers is one the document lists for
// the operation, an operation that lists 404 answers it for what does not
// exist, and no example body is refused as malformed.
func TestOpenAPIAnswersOnCluster(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]openAPIOperation `json:"paths"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	unknown := strings.NewReplacer("{name}", "no-such-connector", "{task}", "0", "{plugin}", "NoSuchPlugin")
	var calls []string
	for path, item := range doc.Paths {
		for method := range item {
			calls = append(calls, path+" "+method)
		}
	}
	slices.Sort(calls) // the same order every run
	for _, call := range calls {
		path, method, _ := strings.Cut(call, " ")
		op := doc.Paths[path][method]
		target := unknown.Replace(path)
		switch {
		case strings.Contains(path, "/history/{id}"):
			target = strings.Replace(target, "{id}", "1796119200123-c98a176d316d2399", 1)
		case strings.HasPrefix(path, "/admin/loggers/"):
			target = "/admin/loggers/io.sluice.openapi"
		default:
			target = strings.Replace(target, "{id}", "no-such-id", 1)
		}
		var body any
		if op.RequestBody != nil {
			if media, ok := op.RequestBody.Content["application/json"]; ok && media.Example != nil {
				body = media.Example
			}
		}
		got := c.Do(strings.ToUpper(method), target, body)
		if _, listed := op.Responses[strconv.Itoa(got.Status)]; !listed {
			t.Errorf("%s (%s %s): answered %s, which the document does not list", op.OperationID, strings.ToUpper(method), target, got)
		}
		// A 404 the document lists is the answer for what does not exist
		// (a logger's is for an unknown level, and a name that is no
		// logger becomes one).
		if _, lists404 := op.Responses["404"]; lists404 && strings.Contains(path, "{") &&
			!strings.HasPrefix(path, "/admin/loggers/") && got.Status < 300 {
			t.Errorf("%s (%s %s): answered %s for what does not exist; the document lists 404", op.OperationID, strings.ToUpper(method), target, got)
		}
		msg := got.Message()
		for _, malformed := range []string{"Invalid JSON", "Unrecognized field", "Invalid value for field", "Unknown query parameter"} {
			if got.Status == http.StatusBadRequest && strings.HasPrefix(msg, malformed) {
				t.Errorf("%s: the document's example was refused: %s", op.OperationID, got)
			}
		}
	}
}
