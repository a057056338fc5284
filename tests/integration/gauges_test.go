package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestConnectorGauges reads a running generator's gauges through GET
// /sluice/connectors/{name}/gauges: each task, on the agent its status
// names, with the records of each of its streams until the bounded run is
// done, through the leader and a follower alike; a stopped connector has
// no tasks; a viewer whose grant does not
// cover the connector gets 403, and an unknown connector is Kafka
// Connect's 404.
func TestConnectorGauges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer, connectors: ["team-a-*"]}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "v"), bcryptOf(t, "a"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	c.Headers = basicAuth("ada", "a")
	vera := basicAuth("vera", "v")
	name, theirs := "team-a-"+c.Name("gen"), c.Name("gen")
	const count = 40
	mustCreate(c, name, generatorCfg(c.Name("gen-data"), "streams", "4", "tasks.max", "2", "count", strconv.Itoa(count), "rate", "100"), "")
	mustCreate(c, theirs, generatorCfg(c.Name("gen-data-2")), "STOPPED")
	st := c.WaitState(name, "RUNNING", 2, "RUNNING")
	workers := map[int]string{}
	for _, task := range st.Tasks {
		workers[task.ID] = task.WorkerID
	}

	// The generator splits its streams round-robin: task 0 has 0 and 2,
	// task 1 has 1 and 3. Each ends at count records.
	streams := map[int][]string{0: {"0", "2"}, 1: {"1", "3"}}
	var got api.ConnectorGauges
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, c.URL, "GET", "/sluice/connectors/"+name+"/gauges", nil, vera...)
		if r.Status != http.StatusOK {
			return false, r.String()
		}
		got = api.ConnectorGauges{}
		r.JSON(t, &got)
		if got.Connector != name || len(got.Tasks) != 2 {
			return false, r.String()
		}
		for i, task := range got.Tasks {
			if task.ID != i || task.WorkerID != workers[i] || task.Error != "" {
				return false, r.String()
			}
			var seen []string
			for _, g := range task.Gauges {
				switch g.Name {
				case "generator_stream_records":
					if g.Value != count {
						return false, r.String()
					}
					seen = append(seen, g.Labels["stream"])
				case "generator_stream_count":
					if g.Value != count || len(g.Labels) != 0 {
						return false, r.String()
					}
					seen = append(seen, "count")
				}
			}
			if want := append([]string{"count"}, streams[i]...); !slices.Equal(seen, want) {
				return false, fmt.Sprintf("task %d: gauges %v, want %v (sorted by name, then labels): %s", i, seen, want, r)
			}
		}
		return true, ""
	})
	if h := got.Tasks[0].Gauges[0].Help; h == "" {
		t.Errorf("gauge %s has no help", got.Tasks[0].Gauges[0].Name)
	}

	// A second coordinator, a follower, forwards the read to the leader,
	// which alone commands the agents, and answers the same.
	_, follower := c.StartExtraCoordinator()
	var through api.ConnectorGauges
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, follower, "GET", "/sluice/connectors/"+name+"/gauges", nil, vera...)
		if r.Status != http.StatusOK {
			return false, r.String()
		}
		through = api.ConnectorGauges{}
		r.JSON(t, &through)
		return len(through.Tasks) == 2 && through.Tasks[1].Error == "" && len(through.Tasks[1].Gauges) == 3, r.String()
	})
	if through.Tasks[1].WorkerID != workers[1] || through.Tasks[1].Gauges[2].Labels["stream"] != "3" {
		t.Errorf("through a follower: %+v", through)
	}

	// A stopped connector runs no task.
	if r := c.Must(http.StatusOK, "GET", "/sluice/connectors/"+theirs+"/gauges", nil); strings.TrimSpace(string(r.Body)) != `{"connector":"`+theirs+`","tasks":[]}` {
		t.Errorf("gauges of a stopped connector: %s", r)
	}
	// A viewer may read only the connectors their grant covers.
	if r := sluicetest.DoWith(t, c.URL, "GET", "/sluice/connectors/"+theirs+"/gauges", nil, vera...); r.Status != http.StatusForbidden {
		t.Errorf("a viewer without a grant on %s: %s, want 403", theirs, r)
	}
	if r := sluicetest.DoWith(t, c.URL, "GET", "/sluice/connectors/"+name+"/gauges", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("anonymous: %s, want 401", r)
	}
	r := sluicetest.DoWith(t, c.URL, "GET", "/sluice/connectors/team-a-nope/gauges", nil, vera...)
	if r.Status != http.StatusNotFound || strings.TrimSpace(string(r.Body)) != `{"error_code":404,"message":"Connector team-a-nope not found"}` {
		t.Errorf("an unknown connector: %s", r)
	}
}

// TestConnectorGaugesAgentSilent holds one agent's answer to the gauges
// command: its task is listed with the error, and the other agent's task
// with its gauges, in the same 200 answer.
func TestConnectorGaugesAgentSilent(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	silent := func(i int) faults.Injector {
		return faults.Func(func(ctx context.Context, at faults.Point, _ any) error {
			if at != faults.AgentGauges || i != 1 {
				return nil
			}
			// Silent: no answer at all, not even the error of the
			// request's own deadline, until the test ends.
			<-release
			return errors.New("released")
		})
	}
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2, AgentFaults: silent})
	t.Cleanup(func() { close(release) }) // before the cluster stops
	name := c.Name("gen")
	mustCreate(c, name, generatorCfg(c.Name("gen-data"), "streams", "2", "tasks.max", "2"), "")
	st := c.WaitState(name, "RUNNING", 2, "RUNNING")
	if st.Tasks[0].WorkerID == st.Tasks[1].WorkerID {
		t.Skipf("both tasks were placed on %s: no task of the silent agent's alone", st.Tasks[0].WorkerID)
	}
	var got api.ConnectorGauges
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/gauges", nil).JSON(t, &got)
	if len(got.Tasks) != 2 {
		t.Fatalf("answer %+v", got)
	}
	for _, task := range got.Tasks {
		switch task.WorkerID {
		case "agent-2":
			if task.Error != "agent agent-2 did not answer within 5s" || len(task.Gauges) != 0 {
				t.Errorf("the silent agent's task: %+v", task)
			}
		default:
			// An unbounded run: the stream's records, no count.
			if task.Error != "" || len(task.Gauges) != 1 || task.Gauges[0].Name != "generator_stream_records" {
				t.Errorf("the other agent's task: %+v", task)
			}
		}
	}
}
