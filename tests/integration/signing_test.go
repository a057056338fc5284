package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// writeKey writes a record signing key file for a test.
func writeKey(t *testing.T) string {
	return writeFile(t, t.TempDir(), "record-signing.key", []byte(strings.Repeat("5a", 32)+"\n"))
}

// forge writes records no coordinator wrote, as anyone with write access
// to the topics could: a connector of team b with the attacker's file
// path, a FAILED status of a running connector, an audit record of an
// admin deleting team b's connector.
func forge(c *sluicetest.Cluster, victim string) {
	c.T.Helper()
	c.ProduceRecords(c.Prefix+"-configs",
		sluicetest.Record{Key: []byte("connector-team-b-forged"), Value: []byte(`{"properties":{"connector.class":"FileStreamSink","file":"/tmp/stolen.txt","topics":"team-b.orders","name":"team-b-forged"}}`)})
	c.ProduceRecords(c.Prefix+"-status",
		sluicetest.Record{Key: []byte("status-connector-" + victim), Value: []byte(`{"state":"FAILED","trace":"forged","worker_id":"evil","generation":999999}`)})
	c.ProduceRecords(c.Prefix+"-audit",
		sluicetest.Record{Key: []byte("team-b-1"), Value: []byte(`{"time":"2026-12-01T00:00:00Z","principal":"admin","source":"10.7.7.7:1","operation":"connector.delete","method":"DELETE","path":"/connectors/team-b-1","connector":"team-b-1","before":null,"after":null,"status":204}`)})
}

// auditConnectors are the connectors GET /sluice/audit's records name.
func auditConnectors(c *sluicetest.Cluster) []string {
	c.T.Helper()
	var log struct {
		Records []struct {
			Connector string `json:"connector"`
		} `json:"records"`
	}
	if err := json.Unmarshal(c.Must(http.StatusOK, "GET", "/sluice/audit", nil).Body, &log); err != nil {
		c.T.Fatal(err)
	}
	var out []string
	for _, r := range log.Records {
		out = append(out, r.Connector)
	}
	return out
}

// TestForgedRecordsAreIgnored: with a record signing key, a config,
// status or audit record that no coordinator wrote is ignored — by the
// running coordinator and by one that starts and reads the topics anew —
// counted in sluice_records_ignored_total and logged.
func TestForgedRecordsAreIgnored(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RecordSigningKeyFile: writeKey(t)})
	victim := c.Name("gen")
	mustCreate(c, victim, generatorCfg(c.Name("out")), "")
	c.WaitState(victim, "RUNNING", 1, "RUNNING")
	forge(c, victim)
	mustCreate(c, c.Name("after"), generatorCfg(c.Name("out2")), "STOPPED") // the forged records are read by now
	check := func(when string) {
		var names []string
		c.Must(http.StatusOK, "GET", "/connectors", nil).JSON(t, &names)
		if slices.Contains(names, "team-b-forged") {
			t.Errorf("%s: the forged connector is listed: %v", when, names)
		}
		if s, _ := c.Status(victim); s.Connector.State != "RUNNING" {
			t.Errorf("%s: the forged status was taken: %+v", when, s.Connector)
		}
		if got := auditConnectors(c); slices.Contains(got, "team-b-1") {
			t.Errorf("%s: the forged audit record is shown: %v", when, got)
		}
		m := scrapeMetrics(t, c.URL)
		for _, topic := range []string{c.Prefix + "-configs", c.Prefix + "-status"} {
			if n, _ := m.value("sluice_records_ignored_total", map[string]string{"topic": topic}); n < 1 {
				t.Errorf("%s: sluice_records_ignored_total of %s is %v", when, topic, n)
			}
		}
	}
	check("running")
	if len(c.Logged("ignoring a record no coordinator wrote", c.Prefix+"-configs")) == 0 {
		t.Error("the ignored config record was not logged")
	}
	c.StopCoordinator()
	c.StartCoordinator()
	c.WaitState(victim, "RUNNING", 1, "RUNNING")
	check("after a restart")
}

// TestUpgradeToSigningKeepsEverything: a cluster that ran without a key
// keeps its connectors, statuses and audit trail when its coordinators
// restart with one — the first leader marks where signing began — and
// from then on a forged record is ignored, across restarts.
func TestUpgradeToSigningKeepsEverything(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	old := c.Name("old")
	mustCreate(c, old, generatorCfg(c.Name("out")), "")
	c.WaitState(old, "RUNNING", 1, "RUNNING")
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+old+"/pause", nil)
	c.WaitState(old, "PAUSED", 1, "PAUSED")
	c.StopCoordinator()
	c.SetRecordSigningKey(writeKey(t))
	c.StartCoordinator()
	c.WaitState(old, "PAUSED", 1, "PAUSED")
	if got := auditConnectors(c); !slices.Contains(got, old) {
		t.Errorf("the audit trail before the upgrade is gone: %v", got)
	}
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := 0
		for _, r := range c.ReadTopic(c.Prefix + "-configs") {
			if string(r.Key) == "sluice-signing-since" {
				n++
			}
		}
		return n == 1, fmt.Sprintf("%d markers", n)
	})
	forge(c, old)
	c.StopCoordinator()
	c.StartCoordinator()
	c.WaitState(old, "PAUSED", 1, "PAUSED")
	var names []string
	c.Must(http.StatusOK, "GET", "/connectors", nil).JSON(t, &names)
	if !slices.Contains(names, old) || slices.Contains(names, "team-b-forged") {
		t.Errorf("after the upgrade and a forgery: connectors %v", names)
	}
	if got := auditConnectors(c); !slices.Contains(got, old) || slices.Contains(got, "team-b-1") {
		t.Errorf("after the upgrade and a forgery: audit %v", got)
	}
	// The restarted coordinator answers reads at once; a write waits until
	// it has taken up the leadership (until then it is forwarded to the
	// lease's address, its own, and answered 409).
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		leading, _ := c.Coordinator.Leader()
		return leading, "the restarted coordinator has not taken up the leadership"
	})
	c.Must(http.StatusAccepted, "PUT", "/connectors/"+old+"/resume", nil)
	c.WaitState(old, "RUNNING", 1, "RUNNING")
}
