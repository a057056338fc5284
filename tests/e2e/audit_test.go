package e2e

import (
	"encoding/json"
	"github.com/sluice-io/sluice/sluicetest/procs"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestAuditCLI: the writes sent to a coordinator process are in its audit
// topic (--audit-topic), and `sluice audit` prints them, newest first, as
// a table or as JSON; a bad parameter is the server's 400, printed as the
// CLI's error.
func TestAuditCLI(t *testing.T) {
	t.Parallel()
	c := procs.Start(t, procs.Options{Agents: 1})
	name := c.Name("gen")
	c.Must(http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": name,
		"config": map[string]string{"connector.class": "GeneratorSource", "topic": c.Name("data"), "rate": "1"}})
	c.Must(http.StatusAccepted, http.MethodPut, "/connectors/"+name+"/pause", nil)
	c.Must(http.StatusNotFound, http.MethodPut, "/connectors/"+c.Name("nope")+"/pause", nil)

	out, errOut, code := sluiceCLI(t, "audit", "--url", c.URL, "--connector", name)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") ||
		!strings.Contains(lines[1], "connector.pause") || !strings.Contains(lines[1], "RUNNING -> PAUSED") ||
		!strings.Contains(lines[2], "connector.create") || !strings.Contains(lines[2], "created RUNNING") {
		t.Fatalf("sluice audit: exit %d, stdout:\n%s\nstderr: %s", code, out, errOut)
	}

	out, errOut, code = sluiceCLI(t, "audit", "--url", c.URL, "--since", "1h", "--limit", "1", "--json")
	var log api.AuditLog
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != 0 {
		t.Fatalf("sluice audit --json: exit %d, %v, stdout:\n%s\nstderr: %s", code, err, out, errOut)
	}
	if len(log.Records) != 1 || !log.More || log.Records[0].Status != http.StatusNotFound || log.Records[0].Error == "" {
		t.Fatalf("sluice audit --limit 1 --json: %s", out)
	}

	_, errOut, code = sluiceCLI(t, "audit", "--url", c.URL, "--since", "soon")
	if code == 0 || !strings.Contains(errOut, "400: Invalid since 'soon'") {
		t.Fatalf("sluice audit --since soon: exit %d, stderr %s", code, errOut)
	}
}
