package plugins

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestNativePostgresSignals: an incremental snapshot asked for through the
// REST API (POST /sluice/connectors/{name}/signals) and through the CLI
// (`sluice snapshot`) reads the table while the connector streams, its
// reads marked source.snapshot "incremental"; a signal the connector cannot
// act on is refused with the reason, and one for a stopped connector or a
// connector of another class says so.
func TestNativePostgresSignals(t *testing.T) {
	postgres(t)
	bin := sluiceBinary(t)
	c := sluicetest.Start(t, sluicetest.Options{})
	signals := strings.ReplaceAll(c.Name("signals"), "-", "_")
	d := &debezium{t: t}
	d.host, d.port = postgres(t)
	d.sql("DROP TABLE IF EXISTS "+signals, "CREATE TABLE "+signals+" (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
	t.Cleanup(func() { d.sql("DROP TABLE IF EXISTS " + signals) })
	d = newDebezium(t, c, map[string]string{"connector.class": nativeClass, "snapshot.mode": "no_data",
		"signal.data.collection": "public." + signals, "incremental.snapshot.chunk.size": "2", "sluice.heartbeat.wal.interval.ms": "200"})
	c.WaitState("pg", "RUNNING", 1, "RUNNING")
	table := "public." + d.table

	r := c.Must(http.StatusAccepted, "POST", "/sluice/connectors/pg/signals",
		map[string]any{"type": "execute-snapshot", "data": map[string]any{"data-collections": []string{table}}})
	var sent struct {
		ID, Type string
		WorkerID string `json:"worker_id"`
	}
	r.JSON(t, &sent)
	if sent.ID == "" || sent.Type != "execute-snapshot" || sent.WorkerID == "" {
		t.Fatalf("answer %s", r.Body)
	}
	d.waitOps(60*time.Second, "r,r,r")
	for _, ev := range d.events() {
		if src, _ := ev["source"].(map[string]any); src["snapshot"] != "incremental" {
			t.Fatalf("a read's source %v: want snapshot incremental", src)
		}
	}
	// The call is in the audit trail, with who made it.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		a := c.Must(http.StatusOK, "GET", "/sluice/audit?connector=pg", nil)
		return strings.Contains(string(a.Body), `"operation":"connector.signal"`) &&
			strings.Contains(string(a.Body), `"path":"/sluice/connectors/pg/signals"`), string(a.Body)
	})
	// The stream goes on, and a second snapshot, asked for by the CLI,
	// reads the table again with the change in it.
	d.sql("UPDATE " + d.table + " SET name = 'TWO' WHERE id = 2")
	d.waitOps(60*time.Second, "r,r,r,u")
	out, err := exec.Command(bin, "snapshot", "pg", "--tables", table, "--url", c.URL).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "signal ") || !strings.Contains(string(out), "written by pg's task 0") {
		t.Fatalf("sluice snapshot: %v\n%s", err, out)
	}
	d.waitOps(60*time.Second, "r,r,r,u,r,r,r")
	if ev := d.events()[5]; fmt.Sprint(ev["after"].(map[string]any)["name"]) != "TWO" {
		t.Fatalf("the second snapshot read %v", ev["after"])
	}
	// The gauges show the snapshot done.
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		g := c.Must(http.StatusOK, "GET", "/sluice/connectors/pg/gauges", nil)
		return strings.Contains(string(g.Body), `"name":"postgres_incremental_snapshot_done","help":`) &&
			strings.Contains(string(g.Body), `"labels":{"table":"`+table+`"},"value":1`), string(g.Body)
	})

	for _, tt := range []struct {
		body any
		want string
	}{
		{map[string]any{"type": "execute-snapshot", "data": map[string]any{"data-collections": []string{table}, "type": "blocking"}},
			`snapshot type \"blocking\" is not supported by the native connector`},
		{map[string]any{"type": "execute-snapshot", "data": map[string]any{"data-collections": []string{"public.nope"}}},
			"match no table the connector captures"},
		{map[string]any{"type": "pause-snapshot"}, `signal type \"pause-snapshot\" is not supported`},
	} {
		r := c.Do("POST", "/sluice/connectors/pg/signals", tt.body)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tt.want) {
			t.Errorf("%v: %d %s, want 400 with %s", tt.body, r.Status, r.Body, tt.want)
		}
	}
	// The REST spelling of the CLI prints the server's answer.
	out, err = exec.Command(bin, "connector", "snapshot-stop", "pg", "--url", c.URL).CombinedOutput()
	var stop map[string]any
	if err != nil || json.Unmarshal(out, &stop) != nil || stop["type"] != "stop-snapshot" || stop["connector"] != "pg" {
		t.Fatalf("sluice connector snapshot-stop: %v\n%s", err, out)
	}
	// The signal table's rows are change events, as Debezium emits them:
	// the signals, and the watermarks of each chunk.
	var kinds []string
	for _, rec := range c.ReadTopic(d.prefix + ".public." + signals) {
		var ev struct {
			After struct{ Type string } `json:"after"`
		}
		if json.Unmarshal(rec.Value, &ev) == nil {
			kinds = append(kinds, ev.After.Type)
		}
	}
	if got := strings.Join(kinds, ","); !strings.HasPrefix(got, "execute-snapshot,snapshot-window-open,snapshot-window-close,snapshot-window-open") {
		t.Errorf("the signal table's events: %s", got)
	}

	c.Must(http.StatusNoContent, "PUT", "/connectors/pg/stop", nil)
	if r := c.Do("POST", "/sluice/connectors/pg/signals", map[string]any{"type": "stop-snapshot"}); r.Status != http.StatusConflict ||
		!strings.Contains(string(r.Body), "Connector pg is stopped") {
		t.Errorf("a stopped connector: %d %s", r.Status, r.Body)
	}
	// Takeovers that would drop a snapshot in flight are refused when the
	// task starts: Debezium's own in the offsets under the native class,
	// and the native connector's under another class.
	stored := d.offset()
	for _, tt := range []struct {
		key, value, class, want string
	}{
		{"incremental_snapshot_collections", `[{"incremental_snapshot_collections_id":"public.x"}]`, nativeClass,
			"holds a Debezium incremental snapshot in progress"},
		{"sluice_offsets_held_by", nativeClass, "GeneratorSource", "work in progress that only " + nativeClass + " can continue"},
	} {
		off := maps.Clone(stored)
		off[tt.key] = tt.value
		c.Must(http.StatusOK, "PATCH", "/connectors/pg/offsets",
			map[string]any{"offsets": []any{map[string]any{"partition": map[string]any{"server": d.prefix}, "offset": off}}})
		cfg := map[string]string{}
		c.Must(http.StatusOK, "GET", "/connectors/pg/config", nil).JSON(t, &cfg)
		cfg["connector.class"] = tt.class
		if tt.class == "GeneratorSource" {
			cfg["topic"] = c.Name("gen-pg")
		}
		c.Must(http.StatusOK, "PUT", "/connectors/pg/config", cfg)
		c.Must(http.StatusAccepted, "PUT", "/connectors/pg/resume", nil)
		st := c.WaitState("pg", "RUNNING", 1, "FAILED")
		if !strings.Contains(st.Tasks[0].Trace, tt.want) {
			t.Errorf("%s: trace %s, want %q", tt.key, st.Tasks[0].Trace, tt.want)
		}
		c.Must(http.StatusNoContent, "PUT", "/connectors/pg/stop", nil)
	}

	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "gen", "config": map[string]string{
		"connector.class": "GeneratorSource", "topic": c.Name("gen"), "count": "5", "rate": "100"}})
	c.WaitState("gen", "RUNNING", 1, "RUNNING")
	if r := c.Do("POST", "/sluice/connectors/gen/signals", map[string]any{"type": "stop-snapshot"}); r.Status != http.StatusBadRequest ||
		!strings.Contains(string(r.Body), "does not take signals") {
		t.Errorf("a connector of another class: %d %s", r.Status, r.Body)
	}
}
