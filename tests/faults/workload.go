package faults

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// The workload: an application appends numbered lines ("line 0000001") to
// in.txt at a steady rate; a FileStreamSource connector reads them into a
// one-partition topic; a FileStreamSink connector writes them to out.txt,
// each line tagged with the agent that wrote it. Every line is countable at
// every hop, so a fault's losses, duplicates and zombie writes show.
//
// The tag: the sink's InsertField adds the static field agent with the
// value ${env:FAULTS_AGENT}, a placeholder each agent resolves from its own
// environment (the env config provider) when it starts the task. out.txt
// is one file all agents append to, so its order is the order the lines
// were written in, whichever agent wrote them.

// Rate is the workload's lines per second.
const Rate = 100

// Workload is a running workload and what it saw.
type Workload struct {
	t         testing.TB
	In, Out   string
	Topic     string
	Source    string
	Sink      string
	cancel    context.CancelFunc // stops the writer
	unwatch   context.CancelFunc // stops the watcher
	done      chan struct{}
	mu        sync.Mutex
	written   []time.Time // written[n-1]: when line n was appended
	seen      map[int]time.Time
	watchDone chan struct{}
}

// StartWorkload creates the topic and the two connectors (through
// coordinator 0), starts writing lines and watching the sink, and waits
// until both tasks run on agent-1 and the lines flow.
func StartWorkload(c *Cluster) *Workload {
	t := c.T
	t.Helper()
	w := &Workload{t: t, In: filepath.Join(c.WorkDir, "in.txt"), Out: filepath.Join(c.WorkDir, "out.txt"),
		Topic: c.Prefix + "-lines", Source: c.Prefix + "-src", Sink: c.Prefix + "-sink",
		done: make(chan struct{}), watchDone: make(chan struct{}), seen: map[int]time.Time{}}
	sluicetest.CreateTopic(t, c.Broker.Addr, w.Topic, 1)
	f, err := os.OpenFile(w.In, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wctx, unwatch := context.WithCancel(context.Background())
	w.cancel, w.unwatch = cancel, unwatch
	go w.write(ctx, f)
	go w.watch(wctx)
	t.Cleanup(w.Stop)

	json := "org.apache.kafka.connect.json.JsonConverter"
	leader := c.WaitLeader(30 * time.Second)
	c.MustAt(leader, http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": w.Source, "config": map[string]string{
		"connector.class": "FileStreamSource", "file": w.In, "topic": w.Topic,
		"value.converter": json, "value.converter.schemas.enable": "false",
	}})
	c.MustAt(leader, http.StatusCreated, http.MethodPost, "/connectors", map[string]any{"name": w.Sink, "config": map[string]string{
		"connector.class": "FileStreamSink", "file": w.Out, "topics": w.Topic,
		"value.converter": json, "value.converter.schemas.enable": "false",
		"transforms":                    "line,agent",
		"transforms.line.type":          "org.apache.kafka.connect.transforms.HoistField$Value",
		"transforms.line.field":         "line",
		"transforms.agent.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.agent.static.field": "agent",
		"transforms.agent.static.value": "${env:FAULTS_AGENT}",
	}})
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		src, sink := c.Placement(leader, w.Source), c.Placement(leader, w.Sink)
		return src[0] == "agent-1" && sink[0] == "agent-1", fmt.Sprintf("source on %v, sink on %v", src, sink)
	})
	w.WaitFlowing(time.Now(), 30*time.Second)
	return w
}

// write appends a line every 1/Rate s until ctx ends.
func (w *Workload) write(ctx context.Context, f *os.File) {
	defer close(w.done)
	defer f.Close()
	tick := time.NewTicker(time.Second / Rate)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		n := len(w.written) + 1
		if _, err := fmt.Fprintf(f, "line %07d\n", n); err != nil {
			w.mu.Unlock()
			return
		}
		w.written = append(w.written, time.Now())
		w.mu.Unlock()
	}
}

// sinkLine is one line of out.txt.
type sinkLine struct {
	N     int    // the line's number, 0 when unreadable
	Agent string // who wrote it
}

// parseSink reads out.txt's complete lines. The sink writes each value as
// Kafka's FileStreamSink does, a map as Java's HashMap.toString:
// {agent=agent-1, line=line 0000005} (the order is the HashMap's).
func parseSink(data []byte) []sinkLine {
	s := string(data)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	} else {
		return nil
	}
	var out []sinkLine
	for _, l := range strings.Split(s, "\n") {
		var sl sinkLine
		if inner, ok := strings.CutPrefix(l, "{"); ok && strings.HasSuffix(inner, "}") {
			for _, kv := range strings.Split(strings.TrimSuffix(inner, "}"), ", ") {
				switch k, v, _ := strings.Cut(kv, "="); k {
				case "agent":
					sl.Agent = v
				case "line":
					sl.N = lineNumber(v)
				}
			}
		}
		out = append(out, sl)
	}
	return out
}

// lineNumber is n of "line <n>", or 0.
func lineNumber(s string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "line "))
	if err != nil || !strings.HasPrefix(s, "line ") {
		return 0
	}
	return n
}

// watch notes when each line first shows in out.txt, reading what was
// appended every 20 ms.
func (w *Workload) watch(ctx context.Context) {
	defer close(w.watchDone)
	var off int64
	var partial []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
		f, err := os.Open(w.Out)
		if err != nil {
			continue
		}
		_, _ = f.Seek(off, io.SeekStart)
		data, _ := io.ReadAll(f)
		f.Close()
		off += int64(len(data))
		data = append(partial, data...)
		i := strings.LastIndexByte(string(data), '\n')
		if i < 0 {
			partial = data
			continue
		}
		partial = append([]byte(nil), data[i+1:]...)
		now := time.Now()
		w.mu.Lock()
		for _, l := range parseSink(data[:i+1]) {
			if _, ok := w.seen[l.N]; !ok && l.N > 0 {
				w.seen[l.N] = now
			}
		}
		w.mu.Unlock()
	}
}

// Written is how many lines were written.
func (w *Workload) Written() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.written)
}

// FlowSince is how long after from the sink first held a line written at
// or after from; ok is false while it holds none.
func (w *Workload) FlowSince(from time.Time) (time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := time.Time{}
	for n := len(w.written); n >= 1 && !w.written[n-1].Before(from); n-- {
		if at, ok := w.seen[n]; ok && (first.IsZero() || at.Before(first)) {
			first = at
		}
	}
	if first.IsZero() {
		return 0, false
	}
	return max(first.Sub(from), 0), true
}

// WaitFlowing waits until a line written after from reached the sink.
func (w *Workload) WaitFlowing(from time.Time, timeout time.Duration) {
	w.t.Helper()
	sluicetest.Eventually(w.t, timeout, func() (bool, string) {
		_, ok := w.FlowSince(from)
		return ok, "no line written since the start reached the sink"
	})
}

// Stop stops writing and watching.
func (w *Workload) Stop() {
	w.cancel()
	w.unwatch()
	<-w.done
	<-w.watchDone
}

// Drain stops writing and waits up to timeout until the sink holds every
// line written (or gives up: the loss is then counted).
func (w *Workload) Drain(timeout time.Duration) {
	w.cancel()
	<-w.done
	n := w.Written()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		all := true
		for i := 1; i <= n && all; i++ {
			_, all = w.seen[i]
		}
		w.mu.Unlock()
		if all {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // late duplicates
	w.unwatch()
	<-w.watchDone
}
