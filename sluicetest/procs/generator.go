package procs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/records"

	"github.com/sluice-io/sluice/sluicetest"
)

// Helpers for failure tests driven by the generator source, whose records
// are numbered per stream: value {"stream":<s>,"seq":<n>,"payload":"…"},
// key "<s>", source partition {"stream":<s>}, source offset {"seq":<n>}.
// Numbered records make loss and duplication countable.

// GeneratorClass is the generator source connector's class.
const GeneratorClass = "io.sluice.connect.generator.GeneratorSourceConnector"

// Generator describes a generator source connector.
type Generator struct {
	Topic       string
	Streams     int
	Tasks       int
	Count       int64 // records per stream; -1 for no limit
	Rate        int   // records per second per task
	RecordBytes int   // 0: the generator's default
}

// Config is the connector config for g.
func (g Generator) Config() map[string]string {
	cfg := map[string]string{
		"connector.class": GeneratorClass,
		"topic":           g.Topic,
		"streams":         strconv.Itoa(g.Streams),
		"tasks.max":       strconv.Itoa(g.Tasks),
		"count":           strconv.FormatInt(g.Count, 10),
		"rate":            strconv.Itoa(g.Rate),
	}
	if g.RecordBytes > 0 {
		cfg["record.bytes"] = strconv.Itoa(g.RecordBytes)
	}
	return cfg
}

// Seqs is what a topic holds of a generator's streams: for each stream,
// how many copies of each sequence number.
type Seqs struct {
	Records int
	Copies  map[int64]map[int64]int // stream → seq → copies
	// Bad lists records that are not the generator's (or whose key does
	// not name their stream).
	Bad []string
}

// ParseSeqs decodes generator records.
func ParseSeqs(recs []sluicetest.Record) Seqs {
	s := Seqs{Records: len(recs), Copies: map[int64]map[int64]int{}}
	for _, r := range recs {
		var v struct {
			Stream *int64 `json:"stream"`
			Seq    *int64 `json:"seq"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Stream == nil || v.Seq == nil || string(r.Key) != strconv.FormatInt(*v.Stream, 10) {
			s.Bad = append(s.Bad, fmt.Sprintf("p%d@%d key=%q value=%.80q", r.Partition, r.Offset, r.Key, r.Value))
			continue
		}
		m := s.Copies[*v.Stream]
		if m == nil {
			m = map[int64]int{}
			s.Copies[*v.Stream] = m
		}
		m[*v.Seq]++
	}
	return s
}

// Duplicates counts the copies beyond the first of every record.
func (s Seqs) Duplicates() int {
	n := 0
	for _, m := range s.Copies {
		for _, c := range m {
			n += c - 1
		}
	}
	return n
}

// Max returns the highest sequence number of stream, -1 if none.
func (s Seqs) Max(stream int64) int64 {
	hi := int64(-1)
	for seq := range s.Copies[stream] {
		hi = max(hi, seq)
	}
	return hi
}

// Check lists what is wrong with s for streams 0..streams-1: records that
// are not the generator's, any sequence number in [0, upTo[stream]] that is
// missing, and — when exactlyOnce — any duplicate and any sequence number
// beyond a gap (read_committed data of an exactly-once source is a gapless
// prefix of every stream). It returns nil when all is well.
func (s Seqs) Check(streams int, upTo map[int64]int64, exactlyOnce bool) []string {
	var problems []string
	if len(s.Bad) > 0 {
		problems = append(problems, fmt.Sprintf("%d records not from the generator, e.g. %s", len(s.Bad), s.Bad[0]))
	}
	for st := int64(0); st < int64(streams); st++ {
		m := s.Copies[st]
		var missing, dups []int64
		for seq := int64(0); seq <= upTo[st]; seq++ {
			if m[seq] == 0 {
				missing = append(missing, seq)
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("stream %d: %d of seq 0..%d missing: %s", st, len(missing), upTo[st], Sample(missing)))
		}
		if !exactlyOnce {
			continue
		}
		for seq, c := range m {
			if c > 1 {
				dups = append(dups, seq)
			}
		}
		if len(dups) > 0 {
			slices.Sort(dups)
			problems = append(problems, fmt.Sprintf("stream %d: %d seq written more than once: %s", st, len(dups), Sample(dups)))
		}
		if hi := s.Max(st); hi >= 0 && int64(len(m)) != hi+1 {
			problems = append(problems, fmt.Sprintf("stream %d: %d distinct seq up to %d: not a gapless prefix", st, len(m), hi))
		}
	}
	for st := range s.Copies {
		if st < 0 || st >= int64(streams) {
			problems = append(problems, fmt.Sprintf("records of unknown stream %d", st))
		}
	}
	sort.Strings(problems)
	return problems
}

// Sample shows the first few of xs, for a failure message.
func Sample(xs []int64) string {
	if len(xs) > 10 {
		return fmt.Sprintf("%v…", xs[:10])
	}
	return fmt.Sprint(xs)
}

// CommittedSeqs reads the offsets topic itself (read_committed) and returns
// the last committed seq of every stream of the generator connector; a
// stream with no committed offset is absent.
func (c *Cluster) CommittedSeqs(connector string) map[int64]int64 {
	c.T.Helper()
	return c.CommittedSeqsIn(c.Prefix+"-offsets", connector)
}

// CommittedSeqsIn is CommittedSeqs in another offsets topic (a
// connector's own).
func (c *Cluster) CommittedSeqsIn(topic, connector string) map[int64]int64 {
	c.T.Helper()
	out := map[int64]int64{}
	for _, r := range c.ReadTopic(topic) {
		conn, part, ok := records.DecodeOffsetKey(r.Key)
		if !ok || conn != connector {
			continue
		}
		stream, ok := intOf(part["stream"])
		if !ok {
			continue
		}
		if r.Value == nil {
			delete(out, stream)
			continue
		}
		off, err := records.DecodeOffsetValue(r.Value)
		if err != nil {
			c.T.Fatalf("offsets of %s: undecodable value %q: %v", connector, r.Value, err)
		}
		if seq, ok := intOf(off["seq"]); ok {
			// One partition per key, read in offset order: the last wins.
			out[stream] = seq
		}
	}
	return out
}

func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case float64:
		return int64(x), x == float64(int64(x))
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// RESTSeqs reads the committed seq of every stream through GET
// …/offsets: the coordinator's view, cheap enough to poll. ok is false when
// the coordinator did not answer 200.
func (c *Cluster) RESTSeqs(connector string) (seqs map[int64]int64, ok bool) {
	c.T.Helper()
	r := c.Do(http.MethodGet, "/connectors/"+connector+"/offsets", nil)
	if r.Status != http.StatusOK {
		return nil, false
	}
	var body struct {
		Offsets []struct {
			Partition map[string]json.Number `json:"partition"`
			Offset    map[string]json.Number `json:"offset"`
		} `json:"offsets"`
	}
	r.JSON(c.T, &body)
	seqs = map[int64]int64{}
	for _, o := range body.Offsets {
		st, err1 := o.Partition["stream"].Int64()
		seq, err2 := o.Offset["seq"].Int64()
		if err1 == nil && err2 == nil {
			seqs[st] = seq
		}
	}
	return seqs, true
}

// WaitComplete waits up to timeout until every one of streams streams of
// the generator connector committed seq count-1, polling GET …/offsets.
func (c *Cluster) WaitComplete(connector string, streams int, count int64, timeout time.Duration) {
	c.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		seqs, ok := c.RESTSeqs(connector)
		done := ok
		for st := int64(0); done && st < int64(streams); st++ {
			done = seqs[st] == count-1
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			c.T.Fatalf("%s not complete after %v: committed seqs %v (answered: %v), want %d per stream", connector, timeout, seqs, ok, count-1)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// CommittedRecords sums topic's last stable offsets: the records (and
// transaction markers) readable read_committed.
func (c *Cluster) CommittedRecords(topic string) int64 {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(sluicetest.ClientOpts(c.Brokers, c.Prefix+"-test-offsets")...)
	if err != nil {
		c.T.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		c.T.Fatalf("list committed offsets of %s: %v", topic, err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			n += o.Offset
		}
	})
	return n
}

// WaitCommittedRecords waits until topic's last stable offsets sum to at
// least n.
func (c *Cluster) WaitCommittedRecords(topic string, n int64, timeout time.Duration) {
	c.T.Helper()
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		got := c.CommittedRecords(topic)
		return got >= n, fmt.Sprintf("%s holds %d committed records, want ≥ %d", topic, got, n)
	})
}

// Placement returns the worker of every task of connector name that is
// RUNNING, by task number.
func (c *Cluster) Placement(name string) map[int]string {
	c.T.Helper()
	s, ok := c.Status(name)
	out := map[int]string{}
	if !ok {
		return out
	}
	for _, ts := range s.Tasks {
		if ts.State == "RUNNING" {
			out[ts.ID] = ts.WorkerID
		}
	}
	return out
}

// WaitMoved waits up to timeout until all tasks tasks of connector name are
// RUNNING, none on an agent of away, and returns their placement.
func (c *Cluster) WaitMoved(name string, tasks int, timeout time.Duration, away ...string) map[int]string {
	c.T.Helper()
	var placed map[int]string
	sluicetest.Eventually(c.T, timeout, func() (bool, string) {
		s, ok := c.Status(name)
		if !ok {
			return false, "no status"
		}
		placed = map[int]string{}
		for _, ts := range s.Tasks {
			if ts.State != "RUNNING" || slices.Contains(away, ts.WorkerID) {
				return false, fmt.Sprintf("task %d is %s on %q, want RUNNING away from %v (%.200s)", ts.ID, ts.State, ts.WorkerID, away, ts.Trace)
			}
			placed[ts.ID] = ts.WorkerID
		}
		return len(placed) == tasks, fmt.Sprintf("%d of %d tasks have a status", len(placed), tasks)
	})
	return placed
}

// FencedLines returns the lines that agent p logged after m saying that
// task (e.g. "conn-0") failed or stopped because a newer producer fenced
// its transactional id.
func FencedLines(p *Proc, m Mark, task string) []string {
	var out []string
	for _, l := range p.LogLinesSince(m, "task="+task+" ") {
		if !strings.Contains(l, `msg="task failed"`) && !strings.Contains(l, `msg="task stopped with errors"`) {
			continue
		}
		low := strings.ToLower(l)
		if strings.Contains(low, "fenced") || strings.Contains(low, "invalid_producer_epoch") || strings.Contains(low, "invalid_txn_state") {
			out = append(out, l)
		}
	}
	return out
}
