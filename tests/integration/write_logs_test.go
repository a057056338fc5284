package integration

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// writeLogged is the "rest write" lines the cluster logged for operation
// on connector.
func writeLogged(c *sluicetest.Cluster, operation, connector string) []string {
	return c.Logged(`msg="rest write"`, "operation="+operation+" ", "connector="+connector+" ")
}

// wantWriteLine checks that exactly one INFO "rest write" line was logged
// for operation on connector, by process, naming principal and status, with
// a duration.
func wantWriteLine(t *testing.T, c *sluicetest.Cluster, operation, connector, process, principal string, status int) {
	t.Helper()
	lines := writeLogged(c, operation, connector)
	if len(lines) != 1 {
		t.Fatalf("%s of %s: %d rest write lines, want 1:\n%s", operation, connector, len(lines), strings.Join(lines, "\n"))
	}
	l := lines[0]
	for _, part := range []string{"level=INFO ", "process=" + process + " ", "principal=" + principal + " ",
		fmt.Sprintf("status=%d ", status), "duration=", "logger=io.sluice.coordinator.rest"} {
		if !strings.Contains(l, part) {
			t.Errorf("%s of %s: line %q lacks %q", operation, connector, l, part)
		}
	}
}

// TestWriteLogs: a create, a pause and a delete each log one INFO line with
// the operation, connector, principal ("anonymous" without
// authentication), status and duration, on the coordinator the client sent
// it to: a pause sent to a follower is logged there, not again by the
// leader that executed it. A write that fails logs no such line.
func TestWriteLogs(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, LogLevel: slog.LevelInfo})
	_, followerURL := c.StartExtraCoordinator()
	name := c.Name("gen")

	mustCreate(c, name, generatorCfg(c.Name("gen-out")), "")
	wantWriteLine(t, c, "connector.create", name, "coordinator", "anonymous", http.StatusCreated)

	// A follower just started forwards writes once it has read the lease.
	sluicetest.WaitKnowsLeader(t, followerURL)
	if r := sluicetest.Do(t, followerURL, http.MethodPut, "/connectors/"+name+"/pause", nil); r.Status != http.StatusAccepted {
		t.Fatalf("pause through the follower: %s", r)
	}
	wantWriteLine(t, c, "connector.pause", name, "coordinator-2", "anonymous", http.StatusAccepted)

	c.Must(http.StatusNoContent, http.MethodDelete, "/connectors/"+name, nil)
	wantWriteLine(t, c, "connector.delete", name, "coordinator", "anonymous", http.StatusNoContent)

	missing := c.Name("missing")
	if r := c.Do(http.MethodPut, "/connectors/"+missing+"/pause", nil); r.Status != http.StatusNotFound {
		t.Fatalf("pause of a connector that does not exist: %s", r)
	}
	if lines := c.Logged(`msg="rest write"`, "connector="+missing+" "); len(lines) != 0 {
		t.Fatalf("a failed write logged as a write: %q", lines)
	}
}

// TestWriteLogsPrincipal: with authentication each write's line names the
// caller who made it.
func TestWriteLogsPrincipal(t *testing.T) {
	t.Parallel()
	authFile := writeFile(t, t.TempDir(), "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: otto, password_bcrypt: %q, grants: [{role: operator}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "o"), bcryptOf(t, "a"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, LogLevel: slog.LevelInfo, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	c.Headers = basicAuth("otto", "o")
	name := c.Name("gen")

	mustCreate(c, name, generatorCfg(c.Name("gen-out")), "")
	wantWriteLine(t, c, "connector.create", name, "coordinator", "otto", http.StatusCreated)
	c.Must(http.StatusAccepted, http.MethodPut, "/connectors/"+name+"/pause", nil)
	wantWriteLine(t, c, "connector.pause", name, "coordinator", "otto", http.StatusAccepted)
	c.Headers = basicAuth("ada", "a")
	c.Must(http.StatusNoContent, http.MethodDelete, "/connectors/"+name, nil)
	wantWriteLine(t, c, "connector.delete", name, "coordinator", "ada", http.StatusNoContent)
}
