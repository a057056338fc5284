package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// The tests of issue 7: three `sluice coordinator` processes of one group,
// one leader elected through the NATS JetStream lease, followers that
// forward writes and catch up before reads, and what a leader change may
// and may not do.

// fileSource is a file source connector's config.
func fileSource(file, topic string) map[string]string {
	return map[string]string{
		"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
		"file":            file,
		"topic":           topic,
	}
}

// stoppedSource is the body of a POST /connectors that creates a file
// source STOPPED: a config record and a target state, no task.
func stoppedSource(name, topic string) map[string]any {
	return map[string]any{"name": name, "initial_state": "STOPPED", "config": fileSource(name+".txt", topic)}
}

// others returns the coordinator indexes other than i.
func others(c *procs.Cluster, i int) []int {
	var out []int
	for j := range c.Coordinators {
		if j != i {
			out = append(out, j)
		}
	}
	return out
}

// TestLeaderForwardsWritesAndSurvivesKill runs three coordinators and two
// agents and checks that:
//
//  1. exactly one coordinator leads and all name it in GET /health;
//  2. a write through any coordinator is answered (followers forward it)
//     and a read through any other one right after sees it;
//  3. a file source → sink keeps running while the leader is killed with
//     SIGKILL in the middle of a stream of creates and offset PATCHes sent
//     round-robin through the coordinators: every request either succeeded
//     and its effect is visible through every surviving coordinator, or
//     failed with an error (409 or 5xx) and had no effect, or was answered
//     as forwarded to the leader as it died (outcome unknown, reported);
//  4. a new leader is elected (another id, a higher term) and no task is
//     restarted by the change: no new "task started" line, the same
//     worker_id, every line delivered exactly once.
func TestLeaderForwardsWritesAndSurvivesKill(t *testing.T) {
	t.Parallel()
	begin := time.Now()
	since := func() time.Duration { return time.Since(begin).Round(time.Millisecond) }
	c := startLeaderCluster(t, procs.Options{})
	li, lease := c.WaitLeader(30*time.Second, -1)
	t.Logf("%v: %s leads, term %d (brokers %s)", since(), c.Coordinators[li].Name(), lease.Term, c.Brokers)
	fs := others(c, li)

	// Writes through each coordinator; reads right after through the others.
	topic := c.Name("lines")
	for i := range c.Coordinators {
		name := c.Name(fmt.Sprintf("w%d", i))
		c.MustAt(i, http.StatusCreated, http.MethodPost, "/connectors", stoppedSource(name, topic))
		for _, j := range others(c, i) {
			c.MustAt(j, http.StatusOK, http.MethodGet, "/connectors/"+name, nil)
		}
	}
	c.MustAt(fs[0], http.StatusNoContent, http.MethodDelete, "/connectors/"+c.Name("w0"), nil)
	c.MustAt(fs[1], http.StatusNotFound, http.MethodGet, "/connectors/"+c.Name("w0"), nil)
	if err := os.WriteFile(filepath.Join(c.WorkDir, c.Name("w1")+".txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.MustAt(fs[1], http.StatusAccepted, http.MethodPut, "/connectors/"+c.Name("w1")+"/resume", nil)
	c.WaitRunningAt(fs[0], c.Name("w1"), 1)
	c.MustAt(fs[0], http.StatusNoContent, http.MethodPut, "/connectors/"+c.Name("w1")+"/stop", nil)
	t.Logf("%v: writes through every coordinator, read-your-writes through the others", since())

	// A file source → topic → file sink, created through the followers.
	c.CreateTopic(topic, 1)
	in, out := filepath.Join(c.WorkDir, "in.txt"), filepath.Join(c.WorkDir, "out.txt")
	w := startLineWriter(t, in, 50, 20*time.Millisecond)
	src, sink := c.Name("src"), c.Name("sink")
	c.MustAt(fs[0], http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": src, "config": fileSource(in, topic)})
	c.MustAt(fs[1], http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": sink,
		"config": map[string]string{"connector.class": "FileStreamSink", "file": out, "topics": topic}})
	placed := map[string]string{src + "-0": c.WaitRunningAt(fs[1], src, 1)[0], sink + "-0": c.WaitRunningAt(fs[0], sink, 1)[0]}
	waitDelivered(t, out, w, w.Count(), false)
	target := c.Name("patched")
	c.MustAt(li, http.StatusCreated, http.MethodPost, "/connectors", stoppedSource(target, topic))
	t.Logf("%v: streaming, tasks on %v", since(), placed)

	// The stream of writes, and the kill in its middle.
	marks := c.Marks()
	st := startWriteStream(c, target, topic)
	st.waitDone(8)
	killedAt := time.Now()
	c.Coordinators[li].Kill()
	t.Logf("%v: killed %s after %d requests", since(), c.Coordinators[li].Name(), st.count())
	ni, lease2 := c.WaitLeader(30*time.Second, li)
	t.Logf("%v: %s leads, term %d, %v after the kill", since(), c.Coordinators[ni].Name(), lease2.Term, time.Since(killedAt).Round(time.Millisecond))
	if lease2.ID == lease.ID || lease2.Term <= lease.Term {
		t.Errorf("lease after the kill %+v, before %+v: want another id and a higher term", lease2, lease)
	}
	st.waitSucceededAfter(killedAt, 6, 60*time.Second)
	reqs := st.stop()
	checkWriteStream(t, c, reqs, target, killedAt)

	// The tasks kept running where they were, through the leader change.
	c.WaitAgentsRegistered(0, lease2.Term, 30*time.Second)
	sluicetest.Consistently(t, 2*c.Options().Lease, func() (bool, string) {
		for _, name := range []string{src, sink} {
			s, ok := c.StatusAt(ni, name)
			if !ok || len(s.Tasks) != 1 || s.Tasks[0].State != "RUNNING" || s.Tasks[0].WorkerID != placed[name+"-0"] {
				return false, fmt.Sprintf("after the leader change %s is %+v, was RUNNING on %s", name, s, placed[name+"-0"])
			}
		}
		return true, ""
	})
	if starts := c.TaskStarts(marks); len(starts) != 0 {
		t.Errorf("tasks started after the leader was killed: %v", starts)
	}
	lines := w.Stop()
	waitDelivered(t, out, w, len(lines), true)
	t.Logf("%v: %d lines delivered exactly once; no task restarted", since(), len(lines))
}

// streamReq is one request of a write stream and its answer.
type streamReq struct {
	N     int
	Coord int
	Kind  string // "create" or "patch"
	Key   string // the connector created, or the source partition patched
	At    time.Time
	Took  time.Duration
	Resp  sluicetest.Response
	Err   error
}

func (r streamReq) String() string {
	ans := fmt.Sprint(r.Err)
	if r.Err == nil {
		ans = r.Resp.String()
	}
	return fmt.Sprintf("#%d %s %s through coordinator-%d at %s (%v): %s", r.N, r.Kind, r.Key, r.Coord,
		r.At.Format("15:04:05.000"), r.Took.Round(time.Millisecond), strings.TrimSpace(ans))
}

// writeStream sends creates (of stopped file sources) and offset PATCHes
// (of one new source partition each, on a stopped connector) in turn,
// round-robin through the running coordinators, one at a time.
type writeStream struct {
	c    *procs.Cluster
	mu   sync.Mutex
	reqs []streamReq
	quit chan struct{}
	done chan struct{}
}

func startWriteStream(c *procs.Cluster, target, topic string) *writeStream {
	s := &writeStream{c: c, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for n, coord := 0, 0; ; n++ {
			select {
			case <-s.quit:
				return
			case <-time.After(20 * time.Millisecond): // pacing only
			}
			for !c.Coordinators[coord%len(c.Coordinators)].Running() {
				coord++
			}
			i := coord % len(c.Coordinators)
			coord++
			r := streamReq{N: n, Coord: i, At: time.Now()}
			if n%2 == 0 {
				r.Kind, r.Key = "create", c.Name(fmt.Sprintf("s%d", n))
				r.Resp, r.Err = c.TryAt(i, http.MethodPost, "/connectors", stoppedSource(r.Key, topic))
			} else {
				r.Kind, r.Key = "patch", fmt.Sprintf("p%d", n)
				r.Resp, r.Err = c.TryAt(i, http.MethodPatch, "/connectors/"+target+"/offsets", map[string]any{"offsets": []map[string]any{{
					"partition": map[string]any{"filename": r.Key}, "offset": map[string]any{"position": n}}}})
			}
			r.Took = time.Since(r.At)
			s.mu.Lock()
			s.reqs = append(s.reqs, r)
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *writeStream) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func (s *writeStream) waitDone(n int) {
	sluicetest.Eventually(s.c.T, 60*time.Second, func() (bool, string) {
		return s.count() >= n, fmt.Sprintf("%d requests done", s.count())
	})
}

// waitSucceededAfter waits until n requests sent after t succeeded.
func (s *writeStream) waitSucceededAfter(t time.Time, n int, timeout time.Duration) {
	sluicetest.Eventually(s.c.T, timeout, func() (bool, string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		ok := 0
		for _, r := range s.reqs {
			if r.At.After(t) && r.Err == nil && r.Resp.Status < 300 {
				ok++
			}
		}
		return ok >= n, fmt.Sprintf("%d requests succeeded since the kill", ok)
	})
}

// stop ends the stream and returns every request, in order.
func (s *writeStream) stop() []streamReq {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]streamReq(nil), s.reqs...)
}

// forwardIOError begins a follower's answer to a write its leader received
// but died before answering (Kafka Connect's forwarding failure).
const forwardIOError = "IO Error trying to forward REST request: "

// checkWriteStream checks every request of a stream against what every
// running coordinator shows afterwards: a success must be visible
// everywhere, an error answer (409, 5xx) or a refused connection must have
// had no effect. A request whose connection broke when its coordinator was
// killed, or that a follower forwarded to the leader as it was killed (the
// follower says so), has an unknown outcome; it is only reported. All coordinators must
// agree.
func checkWriteStream(t *testing.T, c *procs.Cluster, reqs []streamReq, target string, killedAt time.Time) {
	t.Helper()
	type view struct {
		names   map[string]bool
		offsets map[string]string
	}
	var views []view
	var viewers []int
	for i, p := range c.Coordinators {
		if !p.Running() {
			continue
		}
		v := view{names: map[string]bool{}, offsets: map[string]string{}}
		var names []string
		c.MustAt(i, http.StatusOK, http.MethodGet, "/connectors", nil).JSON(t, &names)
		for _, n := range names {
			v.names[n] = true
		}
		var offs struct {
			Offsets []struct {
				Partition map[string]any `json:"partition"`
				Offset    map[string]any `json:"offset"`
			} `json:"offsets"`
		}
		c.MustAt(i, http.StatusOK, http.MethodGet, "/connectors/"+target+"/offsets", nil).JSON(t, &offs)
		for _, o := range offs.Offsets {
			v.offsets[fmt.Sprint(o.Partition["filename"])] = fmt.Sprint(o.Offset["position"])
		}
		views, viewers = append(views, v), append(viewers, i)
	}
	effect := func(v view, r streamReq) bool {
		if r.Kind == "create" {
			return v.names[r.Key]
		}
		return v.offsets[r.Key] == fmt.Sprint(r.N)
	}
	classes := map[string]int{}
	var ambiguous []string
	for _, r := range reqs {
		seen := effect(views[0], r)
		for k, v := range views[1:] {
			if effect(v, r) != seen {
				t.Errorf("coordinators disagree on %s: %s says %v, %s says %v", r, c.Coordinators[viewers[0]].Name(), seen,
					c.Coordinators[viewers[k+1]].Name(), !seen)
			}
		}
		class := "ok"
		switch {
		case r.Err == nil && r.Resp.Status < 300:
			if !seen {
				t.Errorf("request succeeded but its effect is not visible: %s", r)
			}
		case r.Err == nil && r.Resp.Status == http.StatusInternalServerError && strings.HasPrefix(r.Resp.Message(), forwardIOError):
			// The follower forwarded it and the leader died before it
			// answered: the follower says the outcome is unknown.
			class = "500 forwarded, outcome unknown"
			ambiguous = append(ambiguous, fmt.Sprintf("%s → effect visible: %v", r, seen))
		case r.Err == nil && (r.Resp.Status == http.StatusConflict || r.Resp.Status >= 500):
			class = fmt.Sprintf("%d %s", r.Resp.Status, r.Resp.Message())
			if seen {
				t.Errorf("request failed but had its effect: %s", r)
			}
		case r.Err == nil:
			class = fmt.Sprint(r.Resp.Status)
			t.Errorf("unexpected answer: %s", r)
		case isRefused(r.Err):
			class = "connection refused"
			if seen {
				t.Errorf("request was refused a connection but had its effect: %s", r)
			}
		default:
			class = "transport error (outcome unknown)"
			ambiguous = append(ambiguous, fmt.Sprintf("%s → effect visible: %v", r, seen))
		}
		classes[class]++
	}
	var summary []string
	for k, n := range classes {
		summary = append(summary, fmt.Sprintf("%d× %s", n, k))
	}
	sort.Strings(summary)
	t.Logf("%d requests (%d before the kill): %s", len(reqs), countBefore(reqs, killedAt), strings.Join(summary, "; "))
	for _, a := range ambiguous {
		t.Logf("outcome unknown to the client: %s", a)
	}
	if t.Failed() {
		for _, r := range reqs {
			t.Logf("  %s", r)
		}
	}
}

func countBefore(reqs []streamReq, t time.Time) int {
	n := 0
	for _, r := range reqs {
		if r.At.Before(t) {
			n++
		}
	}
	return n
}
