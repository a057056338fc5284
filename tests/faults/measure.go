package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// restProbe sends a REST write every 250 ms, each in its own goroutine (a
// hanging request does not delay the next), and records how each ended.
// The write is PUT /connectors/<probe>/config on a connector created
// STOPPED, with a counter in its config: it needs the leader and the config
// topic, and runs nothing. Requests carry an Authorization header, so a
// coordinator that forwards one somewhere shows the credential it would
// hand over.
type restProbe struct {
	c    *Cluster
	name string
	cfg  map[string]string

	mu    sync.Mutex
	avoid map[int]bool // coordinators not to send to (the faulted one)
	tries []probeTry
	stop  chan struct{}
	done  chan struct{}
}

// probeTry is one write.
type probeTry struct {
	Start, End time.Time
	Status     int // 0: no answer; -200: a 200 that is not Sluice's answer
}

// probeAuth is the credential every probe write carries.
const probeAuth = "Bearer faults-probe-credential"

// startRESTProbe creates the probe connector and starts writing.
func startRESTProbe(c *Cluster) *restProbe {
	c.T.Helper()
	p := &restProbe{c: c, name: c.Prefix + "-probe", avoid: map[int]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	p.cfg = map[string]string{"connector.class": "FileStreamSink", "topics": c.Prefix + "-probe",
		"file": filepath.Join(c.WorkDir, "probe.txt")}
	c.MustAt(c.WaitLeader(30*time.Second), http.StatusCreated, http.MethodPost, "/connectors",
		map[string]any{"name": p.name, "config": p.cfg, "initial_state": "STOPPED"})
	go p.loop()
	c.T.Cleanup(p.Stop)
	return p
}

// Avoid stops sending to coordinator i.
func (p *restProbe) Avoid(i int) {
	p.mu.Lock()
	p.avoid[i] = true
	p.mu.Unlock()
}

func (p *restProbe) loop() {
	defer close(p.done)
	client := &http.Client{Timeout: 20 * time.Second}
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		target := -1
		for i, proc := range p.c.Coordinators {
			if !p.avoid[i] && proc.Running() {
				target = i
				break
			}
		}
		p.mu.Unlock()
		if target < 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := map[string]string{"faults.probe": strconv.Itoa(n)}
			for k, v := range p.cfg {
				cfg[k] = v
			}
			body, _ := json.Marshal(cfg)
			try := probeTry{Start: time.Now()}
			req, _ := http.NewRequest(http.MethodPut, p.c.CoordinatorURL(target)+"/connectors/"+p.name+"/config", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", probeAuth)
			if resp, err := client.Do(req); err == nil {
				answer, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				try.Status = resp.StatusCode
				// Only Sluice's answer counts: it names the connector
				// (whoever else answered 200 did not write it).
				if try.Status == http.StatusOK && !bytes.Contains(answer, []byte(`"`+p.name+`"`)) {
					try.Status = -http.StatusOK
				}
			}
			try.End = time.Now()
			p.mu.Lock()
			p.tries = append(p.tries, try)
			p.mu.Unlock()
		}()
	}
}

// Stop stops writing and waits for the writes in flight.
func (p *restProbe) Stop() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// WorksSince is how long after from REST writes worked for good: the end
// of the first successful write sent after the last failed one (of those
// sent at or after from). ok is false while the last one answered failed,
// or none succeeded yet. Writes that work at first and fail later (a leader
// that carries on until its lease runs out) count from their recovery.
func (p *restProbe) WorksSince(from time.Time) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var lastFail time.Time
	for _, tr := range p.tries {
		if !tr.Start.Before(from) && tr.Status != http.StatusOK && tr.Start.After(lastFail) {
			lastFail = tr.Start
		}
	}
	var best time.Time
	for _, tr := range p.tries {
		if tr.Start.Before(from) || tr.Status != http.StatusOK || !tr.Start.After(lastFail) {
			continue
		}
		if best.IsZero() || tr.End.Before(best) {
			best = tr.End
		}
	}
	if best.IsZero() {
		return 0, false
	}
	return best.Sub(from), true
}

// Failed counts the writes sent at or after from that did not succeed.
func (p *restProbe) Failed(from time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, tr := range p.tries {
		if !tr.Start.Before(from) && tr.Status != http.StatusOK {
			n++
		}
	}
	return n
}

// Counts are what one hop (the topic, or the sink file) holds of the lines
// written: lines missing, extra copies, and lines written by an old
// instance of the task after its successor's first.
type Counts struct {
	Lost, Duplicated, OldAfterNew int
	// Instances is how many task instances wrote (producers, or agents).
	Instances int
	Bad       int // unreadable records or lines
}

// count tallies lines (line numbers, 0 for unreadable) written by
// instances (an id per line, in the order they were written) against the
// written lines 1..written.
func count(nums []int, instances []string, written int) Counts {
	var c Counts
	copies := map[int]int{}
	for _, n := range nums {
		if n <= 0 || n > written {
			c.Bad++
			continue
		}
		copies[n]++
	}
	for n := 1; n <= written; n++ {
		switch k := copies[n]; {
		case k == 0:
			c.Lost++
		case k > 1:
			c.Duplicated += k - 1
		}
	}
	c.OldAfterNew, c.Instances = oldAfterNew(instances)
	return c
}

// oldAfterNew counts the entries of ids (instance ids in write order) that
// come from an instance older (first seen earlier) than the newest one
// seen before them, and returns how many instances there were.
func oldAfterNew(ids []string) (old, instances int) {
	order := map[string]int{}
	newest := -1
	for _, id := range ids {
		o, ok := order[id]
		if !ok {
			o = len(order)
			order[id] = o
		}
		if o < newest {
			old++
		}
		newest = max(newest, o)
	}
	return old, len(order)
}

// TopicCounts reads the workload's topic (read_committed, what a consumer
// sees) and counts its lines; an instance is a producer id and epoch (a
// new source task instance has a new producer id, or with exactly-once the
// same transactional producer with a bumped epoch).
func (w *Workload) TopicCounts(brokers string) Counts {
	w.t.Helper()
	var nums []int
	var ids []string
	for _, r := range sluicetest.ReadLog(w.t, brokers, "faults-reader", w.Topic, true) {
		if r.Attrs.IsControl() {
			continue
		}
		var s string
		n := 0
		if json.Unmarshal(r.Value, &s) == nil {
			n = lineNumber(s)
		}
		nums = append(nums, n)
		ids = append(ids, fmt.Sprintf("%d/%d", r.ProducerID, r.ProducerEpoch))
	}
	return count(nums, ids, w.Written())
}

// SinkCounts reads out.txt and counts its lines; an instance is the agent
// that wrote the line.
func (w *Workload) SinkCounts() Counts {
	data, _ := os.ReadFile(w.Out)
	var nums []int
	var ids []string
	for _, l := range parseSink(data) {
		nums = append(nums, l.N)
		ids = append(ids, l.Agent)
	}
	return count(nums, ids, w.Written())
}
