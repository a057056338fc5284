package main

import (
	"github.com/sluice-io/sluice/sluicetest/procs"

	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Figures of scenario 6.
const (
	figRollTotal   = "roll 3 agents (drain → SIGKILL → start → uncordon), total"
	figRollMoved   = "tasks moved by the roll"
	figRollDownMed = "moved task not producing, median of the moves"
	figRollDownP95 = "moved task not producing, p95 of the moves"
)

// The load of scenario 6: rollTasks generator tasks (one stream each, so
// a stream's records are one task's) at rollRate records per second each.
// At 50/s a running task writes a record every 20 ms: that is the
// resolution of a downtime measured from its records' timestamps.
const (
	rollAgents = 3
	rollTasks  = 60
	rollRate   = 50
)

// rollResult is one run of scenario 6.
type rollResult struct {
	total float64   // seconds from the first drain to the last uncordon
	down  []float64 // per moved task instance, seconds it wrote nothing
	// spacing is the median time between two records of a stream outside
	// the moves: what a downtime includes of the normal cadence.
	spacing float64
}

// scenarioRolling is scenario 6 (Sluice only: Kafka Connect has no drain):
// 3 agents with 20 generator tasks each (defaults: at-least-once source,
// agent lease 10s); each agent in turn is drained until its drain is done,
// killed with SIGKILL, started again with the same id, seen registered
// again (a later started_at in GET /sluice/agents) and uncordoned.
//
// Tasks moved are the "task started" lines the agents log during the roll:
// one per task instance started, and in a roll every start is a move.
// A moved task's downtime is measured on the data itself: the generator
// stamps each record when it makes it, and each task owns one stream, so
// the downtime of a move is the gap in its stream's record timestamps that
// spans the new instance's "task started" time (same host, same clock):
// from the last record the old instance wrote before it was revoked to the
// first record the new one wrote. It covers revoke, stop and final commit,
// the new assignment, the start and the first write, plus up to one record
// spacing (20 ms) of the normal cadence.
func (b *bench) scenarioRolling() error {
	const scen = "6 rolling upgrade"
	var total, moved, med, p95, spacing []float64
	runs, err := rollRuns()
	if err != nil {
		return err
	}
	for run := range runs {
		r, err := b.rollRun(run)
		if err != nil {
			return fmt.Errorf("run %d: %w", run+1, err)
		}
		total = append(total, r.total)
		moved = append(moved, float64(len(r.down)))
		med = append(med, median(r.down))
		p95 = append(p95, percentile(r.down, 0.95))
		spacing = append(spacing, r.spacing)
		b.logf("  run %d: roll took %.1fs, %d tasks moved, not producing per move: median %.3fs, p95 %.3fs, max %.3fs (record spacing %.3fs)",
			run+1, r.total, len(r.down), median(r.down), percentile(r.down, 0.95), slices.Max(r.down), r.spacing)
	}
	note := fmt.Sprintf("%d generator tasks at %d records/s each; per-run values are the median (p95) over the run's moves; record spacing %.0f ms",
		rollTasks, rollRate, median(spacing)*1000)
	b.add(scen, sysSluice, figRollTotal, "s", "lower", total, "")
	b.add(scen, sysSluice, figRollMoved, "tasks", "info", moved, "")
	b.add(scen, sysSluice, figRollDownMed, "s", "lower", med, note+"; goal ≤ 1 s")
	b.add(scen, sysSluice, figRollDownP95, "s", "lower", p95, "")
	return nil
}

// rollRuns is how many rolls scenario 6 makes: BENCH_ROLL_RUNS, default 1.
// One roll takes about two minutes and already yields some 80 moves for
// the per-move figures; BENCH_RUNS (3 rounds elsewhere) would triple it.
func rollRuns() (int, error) { return envInt("BENCH_ROLL_RUNS", 1) }

// rollRun starts a fresh cluster, fills it with rollTasks tasks evenly
// spread, rolls every agent and measures the moves.
func (b *bench) rollRun(run int) (rollResult, error) {
	var r rollResult
	c, err := b.startCluster(sysSluice, fmt.Sprintf("roll%d", run), rollAgents, nil)
	if err != nil {
		return r, err
	}
	defer c.close()
	topic := c.name("roll")
	if err := b.kafka.createTopic(topic, 6); err != nil {
		return r, err
	}
	name := c.name("gen")
	if _, err := c.rest().Connectors().Create(context.Background(), api.CreateConnectorRequest{Name: name, Config: map[string]string{
		"connector.class": generator, "topic": topic, "streams": strconv.Itoa(rollTasks),
		"tasks.max": strconv.Itoa(rollTasks), "count": "-1", "rate": strconv.Itoa(rollRate), "record.bytes": "100",
	}}); err != nil {
		return r, c.failed("create "+name, err)
	}
	if _, err := c.waitAll([]string{name}, 2*time.Minute, "RUNNING", allRunning(rollTasks)); err != nil {
		return r, err
	}
	if err := c.evenOut(); err != nil {
		return r, err
	}
	time.Sleep(2 * time.Second) // a steady flow before the first drain

	marks := c.marks()
	t0 := time.Now()
	drained := 0
	for _, nd := range c.nodes {
		n, err := c.roll(nd)
		if err != nil {
			return r, err
		}
		drained += n
	}
	r.total = time.Since(t0).Seconds()
	// Every moved task writes on for a while after the last uncordon, so
	// that each move's gap is closed by a record of its new instance.
	time.Sleep(2 * time.Second)
	if _, err := c.waitAll([]string{name}, time.Minute, "RUNNING", allRunning(rollTasks)); err != nil {
		return r, err
	}
	starts, err := c.rollStarts(marks)
	if err != nil {
		return r, err
	}
	stamps, err := b.kafka.streamStamps(b.brokers, topic, b.runID+"-roll-reader")
	if err != nil {
		return r, err
	}
	if len(starts) != drained {
		return r, fmt.Errorf("the agents started %d task instances during the roll, their drains report %d moved", len(starts), drained)
	}
	r.down, r.spacing, err = moveGaps(starts, stamps)
	return r, err
}

// agents reads GET /sluice/agents, by id.
func (c *cluster) agents() (map[string]api.AgentInfo, error) {
	list, err := c.rest().Fleet().Agents(context.Background())
	if err != nil {
		return nil, c.failed("GET /sluice/agents", err)
	}
	out := make(map[string]api.AgentInfo, len(list.Agents))
	for _, a := range list.Agents {
		out[a.ID] = a
	}
	return out, nil
}

// evenOut makes sure every agent starts the roll with the same number of
// tasks: one POST /sluice/rebalance if the placement is not even already.
func (c *cluster) evenOut() error {
	even := func() (bool, string) {
		ags, err := c.agents()
		if err != nil {
			return false, err.Error()
		}
		loads := map[string]int{}
		for id, a := range ags {
			loads[id] = len(a.Tasks)
		}
		for _, n := range loads {
			if n != rollTasks/rollAgents {
				return false, fmt.Sprint("loads ", loads)
			}
		}
		return len(loads) == rollAgents, fmt.Sprint("loads ", loads)
	}
	if ok, _ := even(); ok {
		return nil
	}
	if _, err := c.rest().Fleet().Rebalance(context.Background(), api.RebalanceOptions{}); err != nil {
		return c.failed("POST /sluice/rebalance", err)
	}
	return waitFor(2*time.Minute, fmt.Sprintf("%d tasks on each agent", rollTasks/rollAgents), even)
}

// roll drains agent nd until its drain is done, kills it, starts it again
// with the same arguments, waits until it registered again (a later
// started_at) and uncordons it. It returns how many tasks the drain moved.
func (c *cluster) roll(nd *node) (int, error) {
	ags, err := c.agents()
	if err != nil {
		return 0, err
	}
	before := ags[nd.id].StartedAt
	t0 := time.Now()
	fleet := c.rest().Fleet()
	if _, err := fleet.Drain(context.Background(), nd.id, false); err != nil {
		return 0, c.failed("drain "+nd.id, err)
	}
	var st api.DrainStatus
	if err := waitFor(3*time.Minute, "drain of "+nd.id+" done", func() (bool, string) {
		var err error
		if st, err = fleet.DrainStatus(context.Background(), nd.id); err != nil {
			return false, err.Error()
		}
		return st.State == api.DrainDone, fmt.Sprintf("%s, %d moved, %d remaining", st.State, st.Moved, len(st.Remaining))
	}); err != nil {
		return 0, err
	}
	drained := time.Since(t0)
	if err := nd.p.kill(); err != nil {
		return 0, err
	}
	if err := nd.p.restart(); err != nil {
		return 0, err
	}
	p := nd.p
	if err := waitFor(time.Minute, nd.id+" registered again", func() (bool, string) {
		if !p.Running() {
			return false, nd.id + " exited:\n" + p.Tail(20)
		}
		ags, err := c.agents()
		if err != nil {
			return false, err.Error()
		}
		a := ags[nd.id]
		return a.Registered && a.StartedAt.After(before), fmt.Sprintf("registered %v, started at %v", a.Registered, a.StartedAt)
	}); err != nil {
		return 0, err
	}
	if _, err := fleet.Uncordon(context.Background(), nd.id); err != nil {
		return 0, c.failed("uncordon "+nd.id, err)
	}
	c.b.logf("  %s: drained (%d moved) in %.2fs, back and uncordoned after %.2fs", nd.id, st.Moved, drained.Seconds(), time.Since(t0).Seconds())
	return st.Moved, nil
}

// taskStart is one task instance an agent started: its task number (the
// generator stream it owns) and when.
type taskStart struct {
	task int
	at   time.Time
}

// startLineRE picks the time and the task out of an agent's text log line
// "time=… level=INFO msg="task started" … connector_task=<connector>-<n>".
var startLineRE = regexp.MustCompile(`^time=(\S+) .*msg="task started".*\bconnector_task=("[^"]*"|\S+)`)

// rollStarts are the task instances the agents started after marks.
func (c *cluster) rollStarts(marks map[*node]int64) ([]taskStart, error) {
	var out []taskStart
	for _, nd := range c.nodes {
		for _, l := range nd.p.LogLinesSince(procs.Mark(marks[nd])) {
			if !strings.Contains(l, `msg="task started"`) {
				continue
			}
			m := startLineRE.FindStringSubmatch(l)
			if m == nil {
				return nil, fmt.Errorf("%s: unparsable task start %q", nd.id, l)
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if err != nil {
				return nil, fmt.Errorf("%s: time of %q: %w", nd.id, l, err)
			}
			id := strings.Trim(m[2], `"`)
			n, err := strconv.Atoi(id[strings.LastIndex(id, "-")+1:])
			if err != nil {
				return nil, fmt.Errorf("%s: task number of %q: %w", nd.id, id, err)
			}
			out = append(out, taskStart{task: n, at: at})
		}
	}
	return out, nil
}

// streamStamps reads every record of a generator topic and returns, per
// stream, its records' timestamps in order.
func (k *kafka) streamStamps(brokers, topic, clientID string) (map[int][]time.Time, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends, err := k.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(brokers, clientID, nil),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := map[int][]time.Time{}
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s: %d partitions not read to their end: %w", topic, len(left), err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("read %s: %w", topic, ferr)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			var v struct {
				Stream int `json:"stream"`
			}
			if json.Unmarshal(rec.Value, &v) == nil {
				out[v.Stream] = append(out[v.Stream], rec.Timestamp)
			}
			if end, ok := left[rec.Partition]; ok && rec.Offset+1 >= end {
				delete(left, rec.Partition)
			}
		})
	}
	for _, ts := range out {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return out, nil
}

// moveGaps measures each start's downtime in its stream's timestamps: the
// gap between the last record before the start and the first at or after
// it. It also returns the median gap between records that spans no start.
func moveGaps(starts []taskStart, stamps map[int][]time.Time) (down []float64, spacing float64, err error) {
	if len(starts) == 0 {
		return nil, 0, fmt.Errorf("no task started during the roll")
	}
	moveAt := map[int]map[int]bool{} // stream → indexes of the records after a gap of a move
	for _, s := range starts {
		ts := stamps[s.task]
		i, _ := slices.BinarySearchFunc(ts, s.at, time.Time.Compare) // the first at or after the start
		if i == 0 || i == len(ts) {
			return nil, 0, fmt.Errorf("task %d started at %v: %d records of its stream, none before or none after", s.task, s.at, len(ts))
		}
		down = append(down, ts[i].Sub(ts[i-1]).Seconds())
		if moveAt[s.task] == nil {
			moveAt[s.task] = map[int]bool{}
		}
		moveAt[s.task][i] = true
	}
	var normal []float64
	for st, ts := range stamps {
		for i := 1; i < len(ts); i++ {
			if !moveAt[st][i] {
				normal = append(normal, ts[i].Sub(ts[i-1]).Seconds())
			}
		}
	}
	return down, median(normal), nil
}
