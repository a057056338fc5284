package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/fakeconnect"
)

// TestMigrationThroughTheCoordinator: POST /sluice/migrations on a real
// cluster, reading a Kafka Connect REST server in the test. Only an admin
// may; a URL the coordinator was not allowed is refused; a dry run
// answers the plan and creates nothing; a migration stops the connector
// there and creates it here at its positions — a file source carries on at
// the line after its position — recorded in the audit trail under the
// caller, whose credentials never reach Kafka Connect.
func TestMigrationThroughTheCoordinator(t *testing.T) {
	t.Parallel()
	kc := fakeconnect.Start(t)
	authFile := writeFile(t, t.TempDir(), "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
  - {name: otto, password_bcrypt: %q, grants: [{role: operator}]}
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer}]}
`, bcryptOf(t, "a"), bcryptOf(t, "o"), bcryptOf(t, "v"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}, MigrateAllowURLs: []string{kc.URL}})
	in := writeFile(t, t.TempDir(), "in.txt", []byte("first\nsecond\nthird\n"))
	topic, name := c.Name("lines"), c.Name("files")
	kc.Add(name, fakeconnect.Connector{Config: fileSourceCfg(in, topic), State: api.StateRunning, Type: api.TypeSource, Tasks: 1,
		Offsets: []api.ConnectorOffset{{Partition: map[string]any{"filename": in}, Offset: map[string]any{"position": 6}}}})
	kc.Add(c.Name("other"), fakeconnect.Connector{Config: map[string]string{"connector.class": "com.example.Missing"}, State: api.StateRunning, Type: api.TypeSource})
	body := map[string]any{"url": kc.URL, "connectors": c.Name("*")}

	for who, headers := range map[string][]string{"an operator": basicAuth("otto", "o"), "a viewer": basicAuth("vera", "v")} {
		c.Headers = headers
		if r := c.Do("POST", "/sluice/migrations", body); r.Status != http.StatusForbidden {
			t.Errorf("%s: %s", who, r)
		}
	}
	c.Headers = basicAuth("ada", "a")
	wantError(t, c.Do("POST", "/sluice/migrations", map[string]any{"url": "http://127.0.0.1:9/"}), http.StatusForbidden,
		"Kafka Connect URL http://127.0.0.1:9/ is not allowed: the coordinator reads only the URLs its --migrate-allow-url flags name")

	r := c.Must(http.StatusOK, "POST", "/sluice/migrations?dry_run=true", body)
	var plan api.MigrationResult
	if err := json.Unmarshal(r.Body, &plan); err != nil {
		t.Fatal(err)
	}
	if !plan.DryRun || len(plan.Connectors) != 2 || plan.Connectors[0].Name != name || plan.Connectors[0].Result != api.MigrationWouldMigrate ||
		plan.Connectors[0].OffsetsCount != 1 || plan.Connectors[0].Config["file"] != in || len(plan.Connectors[0].Offsets) != 1 ||
		plan.Connectors[1].Result != api.MigrationNotMigrated || plan.Connectors[1].Detail != "no Sluice agent runs class com.example.Missing" {
		t.Fatalf("plan %s", r.Body)
	}
	if names := c.Must(http.StatusOK, "GET", "/connectors", nil); strings.TrimSpace(string(names.Body)) != "[]" || kc.State(name) != api.StateRunning {
		t.Fatalf("a dry run changed something: %s here, %s there", names.Body, kc.State(name))
	}

	r = c.Must(http.StatusOK, "POST", "/sluice/migrations", body)
	var done api.MigrationResult
	if err := json.Unmarshal(r.Body, &done); err != nil {
		t.Fatal(err)
	}
	if done.DryRun || done.Connectors[0].Result != api.MigrationMigrated || done.Connectors[0].OffsetsCount != 1 || done.Connectors[0].State != api.StateRunning {
		t.Fatalf("migration %s", r.Body)
	}
	if kc.State(name) != api.StateStopped {
		t.Errorf("on Kafka Connect it is %s, want STOPPED", kc.State(name))
	}
	c.WaitState(name, api.StateRunning, 1, api.StateRunning)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		var lines []string
		for _, rec := range c.ReadTopic(topic) {
			lines = append(lines, string(rec.Value))
		}
		return strings.Join(lines, ",") == "second,third", strings.Join(lines, ",")
	})

	// Audited under the caller; Kafka Connect never saw its credentials.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := c.Must(http.StatusOK, "GET", "/sluice/audit?limit=10", nil)
		return strings.Contains(string(r.Body), `"operation":"connectors.migrate"`) && strings.Contains(string(r.Body), `"principal":"ada"`), string(r.Body)
	})
	for _, req := range kc.Requests() {
		if strings.Contains(req, "auth=") {
			t.Errorf("Kafka Connect got credentials: %s", req)
		}
	}
}
