package plugins

import (
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

const nativeClass = "io.sluice.connect.postgres.PostgresSourceConnector"

// switchClass stops connector pg, gives it class (and extra keys) with its
// offsets kept, and resumes it.
func (d *debezium) switchClass(class string, extra map[string]string) {
	d.t.Helper()
	d.c.Must(http.StatusNoContent, "PUT", "/connectors/pg/stop", nil)
	sluicetest.Eventually(d.t, 30*time.Second, func() (bool, string) {
		r := d.c.Do("GET", "/connectors/pg/status", nil)
		return strings.Contains(string(r.Body), `"STOPPED"`), "status " + string(r.Body)
	})
	var info struct {
		Config map[string]string `json:"config"`
	}
	d.c.Must(http.StatusOK, "GET", "/connectors/pg", nil).JSON(d.t, &info)
	cfg := maps.Clone(info.Config)
	cfg["connector.class"] = class
	maps.Copy(cfg, extra)
	d.c.Must(http.StatusOK, "PUT", "/connectors/pg/config", cfg)
	d.c.Must(http.StatusAccepted, "PUT", "/connectors/pg/resume", nil)
}

// TestNativePostgresTakesOverFromDebeziumAndBack: a Debezium connector is
// stopped mid-stream and its class changed to the native connector's: it
// goes on from Debezium's offset with no snapshot, no loss and no
// duplicate; changed back to Debezium's class, Debezium goes on from the
// native connector's offset the same way. The consumer sees every change
// once.
func TestNativePostgresTakesOverFromDebeziumAndBack(t *testing.T) {
	c := start(t, 1)
	d := newDebezium(t, c, map[string]string{"message.prefix.exclude.list": "__sluice_heartbeat"})
	d.waitOps(90*time.Second, "r,r,r")
	d.sql("INSERT INTO " + d.table + " VALUES (4, 'four')")
	d.waitOps(60*time.Second, "r,r,r,c")
	d.waitStreamedOffset(nil)

	d.switchClass(nativeClass, map[string]string{"sluice.heartbeat.wal.interval.ms": "200"})
	c.WaitState("pg", "RUNNING", 1, "RUNNING")
	d.sql("INSERT INTO "+d.table+" VALUES (5, 'five')", "UPDATE "+d.table+" SET name = 'TWO' WHERE id = 2")
	d.waitOps(60*time.Second, "r,r,r,c,c,u")
	native := d.waitStreamedOffset(nil)
	if _, ok := native["lsn_commit"]; !ok {
		t.Fatalf("the native connector's offset %v: want Debezium's keys (lsn_commit)", native)
	}

	cfg := map[string]string{}
	d.switchClass(debeziumClass, cfg)
	c.WaitState("pg", "RUNNING", 1, "RUNNING")
	d.sql("DELETE FROM " + d.table + " WHERE id = 3")
	d.waitOps(90*time.Second, "r,r,r,c,c,u,d")
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		got := d.ops()
		return got == "r,r,r,c,c,u,d", "events " + got
	})
}

// TestNativePostgresAgentKilledMidStream: the agent running the native
// connector's task is killed (SIGKILL) while changes stream; the task
// resumes on the other agent from the last committed offset and every
// change arrives. Without exactly-once support delivery is at least once
// (the duplicates are counted); with it, records and offsets commit
// together and a read_committed consumer sees each change once.
func TestNativePostgresAgentKilledMidStream(t *testing.T) {
	postgres(t)
	sluiceBinary(t)
	for _, eos := range []bool{false, true} {
		t.Run(map[bool]string{false: "at least once", true: "exactly once"}[eos], func(t *testing.T) {
			killMidStream(t, eos)
		})
	}
}

func killMidStream(t *testing.T, exactlyOnce bool) {
	opts := procs.Options{Agents: 2}
	extra := map[string]string{"connector.class": nativeClass, "sluice.heartbeat.wal.interval.ms": "500"}
	if exactlyOnce {
		opts.CoordinatorArgs = []string{"--exactly-once-source-support=enabled"}
		opts.AgentArgs = []string{"--exactly-once-source-support=enabled"}
		extra["exactly.once.support"] = "required"
	}
	c := procs.Start(t, opts)
	d := newDebezium(t, c, extra)
	d.waitOps(60*time.Second, "r,r,r")
	dups := d.killMidStream(c, 60*time.Second)
	if exactlyOnce && dups > 0 {
		t.Fatalf("%d duplicates with exactly-once support", dups)
	}
}

// TestNativePostgresAgentKilledMidSnapshot: the agent taking the native
// connector's snapshot is killed (SIGKILL) part way; the task, on the other
// agent, takes the snapshot again from a new slot — every row is read, the
// interrupted attempt's reads counted as repeats — and the changes after it
// stream once each, with no gap between the snapshot and the stream.
func TestNativePostgresAgentKilledMidSnapshot(t *testing.T) {
	postgres(t)
	sluiceBinary(t)
	c := procs.Start(t, procs.Options{Agents: 2,
		CoordinatorArgs: []string{"--exactly-once-source-support=enabled"}, AgentArgs: []string{"--exactly-once-source-support=enabled"}})
	const rows = 200_000
	d := newDebezium(t, c, map[string]string{"connector.class": nativeClass, "exactly.once.support": "required",
		"snapshot.max.threads": "2", "sluice.heartbeat.wal.interval.ms": "500"})
	d.waitOps(60*time.Second, "r,r,r")
	// Rows added after the connector's first snapshot (of 3 rows): stopped,
	// its offsets reset and its slot dropped, it takes a snapshot of them
	// all, during which its agent is killed.
	d.sql(fmt.Sprintf("INSERT INTO %s SELECT g, 'row ' || g FROM generate_series(4, %d) g", d.table, rows))
	d.c.Must(http.StatusNoContent, "PUT", "/connectors/pg/stop", nil)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := d.c.Do("GET", "/connectors/pg/status", nil)
		return strings.Contains(string(r.Body), `"STOPPED"`), "status " + string(r.Body)
	})
	d.c.Must(http.StatusOK, "DELETE", "/connectors/pg/offsets", nil)
	d.sql("SELECT pg_drop_replication_slot('" + d.table + "')")
	d.c.Must(http.StatusAccepted, "PUT", "/connectors/pg/resume", nil)

	count := func() map[float64]int {
		n := map[float64]int{}
		for _, ev := range d.events() {
			if after, _ := ev["after"].(map[string]any); after != nil {
				if id, ok := after["id"].(float64); ok && ev["op"] == "r" {
					n[id]++
				}
			}
		}
		return n
	}
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		n := len(count())
		return n > 3 && n < rows/2, fmt.Sprintf("%d rows read", n)
	})
	placed := c.WaitRunning("pg", 1).Tasks[0].WorkerID
	c.Agent(placed).Kill()
	t.Logf("killed %s mid-snapshot", placed)
	c.WaitTask("pg", func(state, worker string) bool { return state == "RUNNING" && worker != placed }, "the task RUNNING on the other agent")
	var reads map[float64]int
	sluicetest.Eventually(t, 120*time.Second, func() (bool, string) {
		reads = count()
		return len(reads) == rows, fmt.Sprintf("%d of %d rows read", len(reads), rows)
	})
	repeats := 0
	for _, n := range reads {
		repeats += n - 1
	}
	t.Logf("every one of %d rows read; %d reads repeated (the interrupted attempt's and the first snapshot's 3)", rows, repeats)

	d.sql(fmt.Sprintf("INSERT INTO %s VALUES (%d, 'after'), (%d, 'after')", d.table, rows+1, rows+2))
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		n := 0
		for _, ev := range d.events() {
			if after, _ := ev["after"].(map[string]any); ev["op"] == "c" && after != nil && after["id"].(float64) > rows {
				n++
			}
		}
		return n == 2, fmt.Sprintf("%d inserts after the snapshot streamed, want 2", n)
	})
}

// TestNativePostgresValidate: validating a config through the REST API
// names each key the native connector cannot honour — a Debezium key it
// does not support, a value it does not — and, with the config whole, asks
// the database whether the user may replicate; creating a connector with
// such a config is refused with the same messages.
func TestNativePostgresValidate(t *testing.T) {
	host, port := postgres(t)
	c := sluicetest.Start(t, sluicetest.Options{})
	role := strings.ReplaceAll(c.Name("noreplication"), "-", "_")
	sqlAs := func(stmt string) {
		t.Helper()
		d := &debezium{t: t, host: host, port: port}
		d.sql(stmt)
	}
	sqlAs("DROP ROLE IF EXISTS " + role)
	sqlAs("CREATE ROLE " + role + " LOGIN")
	t.Cleanup(func() {
		_ = exec.Command("psql", "-h", host, "-p", port, "-U", "postgres", "-c", "DROP ROLE IF EXISTS "+role).Run()
	})
	base := map[string]string{"name": "v", "connector.class": nativeClass, "database.hostname": host, "database.port": port,
		"database.user": "postgres", "database.dbname": "postgres", "topic.prefix": "v", "slot.name": "unused_v", "publication.name": "unused_v"}

	cfg := maps.Clone(base)
	cfg["plugin.name"], cfg["column.mask.with.8.chars"] = "decoderbufs", "public.t.c"
	n, errs := validateErrors(t, c, "PostgresSource", cfg)
	if n != 2 || !strings.Contains(strings.Join(errs["plugin.name"], " "), "use one of pgoutput") ||
		!strings.Contains(strings.Join(errs["column.mask.with.8.chars"], " "), "not supported by the native PostgreSQL connector") {
		t.Fatalf("unsupported key and value: %d errors %v", n, errs)
	}
	cfg = maps.Clone(base)
	cfg["database.user"] = role
	n, errs = validateErrors(t, c, "PostgresSource", cfg)
	// Not a superuser either: it may not create a publication for all
	// tables, which publication.autocreate.mode's default asks.
	if n != 2 || !strings.Contains(strings.Join(errs["database.user"], " "), "has neither REPLICATION nor SUPERUSER") ||
		!strings.Contains(strings.Join(errs["publication.autocreate.mode"], " "), "needs a superuser") {
		t.Fatalf("a role that may not replicate: %d errors %v", n, errs)
	}
	if n, errs = validateErrors(t, c, "PostgresSource", base); n != 0 {
		t.Fatalf("a config that works: %d errors %v", n, errs)
	}
	r := c.Do("POST", "/connectors", map[string]any{"name": "v", "config": cfg})
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "has neither REPLICATION nor SUPERUSER") {
		t.Fatalf("create with a role that may not replicate: %s", r)
	}
}

// TestNativePostgresMoveFromDebezium: `sluice move` of a running Debezium
// connector to a new name with the native class takes its position along:
// the native connector goes on from it, no snapshot, no change lost or
// repeated.
func TestNativePostgresMoveFromDebezium(t *testing.T) {
	c := start(t, 1)
	d := newDebezium(t, c, nil)
	d.waitOps(90*time.Second, "r,r,r")
	d.sql("INSERT INTO " + d.table + " VALUES (4, 'four')")
	d.waitOps(60*time.Second, "r,r,r,c")
	d.waitStreamedOffset(nil)
	var moved struct {
		To      string `json:"to"`
		Offsets []any  `json:"offsets"`
	}
	c.Must(http.StatusOK, "POST", "/sluice/connectors/pg/move", map[string]any{"to": "pg-native",
		"config": map[string]string{"connector.class": nativeClass}}).JSON(t, &moved)
	if moved.To != "pg-native" || len(moved.Offsets) != 1 {
		t.Fatalf("move: %+v", moved)
	}
	c.WaitState("pg-native", "RUNNING", 1, "RUNNING")
	d.sql("INSERT INTO "+d.table+" VALUES (5, 'five')", "DELETE FROM "+d.table+" WHERE id = 1")
	d.waitOps(60*time.Second, "r,r,r,c,c,d")
	sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
		got := d.ops()
		return got == "r,r,r,c,c,d", "events " + got
	})
}

// TestNativePostgresGauges: the native connector's gauges — a snapshot's
// progress by table, the slot's state — are read through the coordinator
// (GET /sluice/connectors/{name}/gauges), without scraping the agent.
func TestNativePostgresGauges(t *testing.T) {
	c := sluicetest.Start(t, sluicetest.Options{})
	d := newDebezium(t, c, map[string]string{"connector.class": nativeClass, "sluice.heartbeat.wal.interval.ms": "200"})
	d.waitOps(60*time.Second, "r,r,r")
	table := "public." + d.table
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		var ans struct {
			Tasks []struct {
				Gauges []struct {
					Name   string            `json:"name"`
					Labels map[string]string `json:"labels"`
					Value  float64           `json:"value"`
				} `json:"gauges"`
			} `json:"tasks"`
		}
		r := c.Must(http.StatusOK, "GET", "/sluice/connectors/pg/gauges", nil)
		r.JSON(t, &ans)
		rows, status := -1.0, ""
		for _, task := range ans.Tasks {
			for _, g := range task.Gauges {
				switch {
				case g.Name == "postgres_snapshot_rows" && g.Labels["table"] == table:
					rows = g.Value
				case g.Name == "postgres_slot_wal_status":
					status = g.Labels["status"]
				}
			}
		}
		return rows == 3 && status == "reserved", string(r.Body)
	})
}
