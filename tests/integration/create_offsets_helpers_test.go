package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/sluicetest"
)

// Helpers of the create-with-initial-offsets tests (spec §0.1, issue 5).
// Their names start with "co" so they never collide with other files of
// the package.

// coAltered is the offsets_status message of a create whose connector's
// own hook took part (the file connectors, spec §5.6 and §8).
const coAltered = "The offsets for this connector have been altered successfully"

// coSrc is a file source entry: partition {"filename": file}, offset
// {"position": pos}.
func coSrc(file string, pos int) map[string]any {
	return map[string]any{"partition": map[string]any{"filename": file}, "offset": map[string]any{"position": pos}}
}

// coSink is a sink entry for topic-partition at offset at.
func coSink(topic string, partition, at int) map[string]any {
	return map[string]any{
		"partition": map[string]any{"kafka_topic": topic, "kafka_partition": partition},
		"offset":    map[string]any{"kafka_offset": at},
	}
}

// coList makes an initial_offsets list; coList() is the empty list [].
func coList(entries ...map[string]any) []map[string]any {
	if entries == nil {
		return []map[string]any{}
	}
	return entries
}

// coBody is a POST /connectors body. initial is left out when nil.
func coBody(name string, config map[string]string, state string, initial []map[string]any) map[string]any {
	b := map[string]any{"name": name, "config": config}
	if state != "" {
		b["initial_state"] = state
	}
	if initial != nil {
		b["initial_offsets"] = initial
	}
	return b
}

// coCreated checks a 201 answer of a create with initial_offsets: the
// ConnectorInfo of a new connector plus offsets_status (spec §0.1).
func coCreated(t testing.TB, r sluicetest.Response, name string, config map[string]string, kind string) {
	t.Helper()
	cfg := map[string]string{"name": name}
	for k, v := range config {
		cfg[k] = v
	}
	want, _ := json.Marshal(map[string]any{"name": name, "config": cfg, "tasks": []any{}, "type": kind,
		"offsets_status": map[string]string{"message": coAltered}})
	wantJSON(t, r, http.StatusCreated, string(want))
}

// coOffsets is GET /connectors/{name}/offsets (which must answer 200),
// canonical.
func coOffsets(c *sluicetest.Cluster, name string) string {
	c.T.Helper()
	var body struct {
		Offsets []map[string]any `json:"offsets"`
	}
	c.Must(http.StatusOK, "GET", "/connectors/"+name+"/offsets", nil).JSON(c.T, &body)
	return sluicetest.CanonOffsets(c.T, body.Offsets)
}

// coWantOffsets fails unless connector name's offsets are exactly want.
func coWantOffsets(c *sluicetest.Cluster, name string, want ...map[string]any) {
	c.T.Helper()
	if got, exp := coOffsets(c, name), sluicetest.CanonOffsets(c.T, want); got != exp {
		c.T.Fatalf("offsets of %s:\n got  %s\n want %s", name, got, exp)
	}
}

// coNameOffsets reads the offsets stored under a name that has no
// connector, as the issue prescribes: create a STOPPED connector of that
// name with config (no initial_offsets), GET its offsets, delete it again
// (keeping the offsets).
func coNameOffsets(c *sluicetest.Cluster, name string, config map[string]string) string {
	c.T.Helper()
	c.Must(http.StatusCreated, "POST", "/connectors", coBody(name, config, "STOPPED", nil))
	got := coOffsets(c, name)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)
	return got
}

// coWantNameOffsets fails unless the name's offsets (coNameOffsets) are
// exactly want.
func coWantNameOffsets(c *sluicetest.Cluster, name string, config map[string]string, want ...map[string]any) {
	c.T.Helper()
	if got, exp := coNameOffsets(c, name, config), sluicetest.CanonOffsets(c.T, want); got != exp {
		c.T.Fatalf("offsets under the name %s:\n got  %s\n want %s", name, got, exp)
	}
}

// coWantAbsent fails unless connector name does not exist.
func coWantAbsent(c *sluicetest.Cluster, name string) {
	c.T.Helper()
	wantError(c.T, c.Do("GET", "/connectors/"+name, nil), http.StatusNotFound, "Connector "+name+" not found")
	var names []string
	c.Must(http.StatusOK, "GET", "/connectors", nil).JSON(c.T, &names)
	for _, n := range names {
		if n == name {
			c.T.Fatalf("GET /connectors lists %s: %v", name, names)
		}
	}
}

// coSeed leaves exactly entries as the offsets stored under name, with no
// connector of that name: a STOPPED connector is created, its offsets reset
// and then altered with PATCH, and it is deleted (offsets outlive a deleted
// connector).
func coSeed(c *sluicetest.Cluster, name string, config map[string]string, entries ...map[string]any) {
	c.T.Helper()
	c.Must(http.StatusCreated, "POST", "/connectors", coBody(name, config, "STOPPED", nil))
	c.Must(http.StatusOK, "DELETE", "/connectors/"+name+"/offsets", nil)
	c.Must(http.StatusOK, "PATCH", "/connectors/"+name+"/offsets", map[string]any{"offsets": entries})
	coWantOffsets(c, name, entries...)
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)
}

// coTopic creates topic with the given partitions and waits until it is
// usable.
func coTopic(c *sluicetest.Cluster, topic string, partitions int32) {
	c.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := kafkautil.EnsureTopics(ctx, c.Admin(), kafkautil.TopicSpec{Name: topic, Partitions: partitions}); err != nil {
		c.T.Fatal(err)
	}
}

// coLines returns n lines "<prefix>-NN".
func coLines(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", prefix, i)
	}
	return out
}

// coBytes is the byte length of lines written by writeLines.
func coBytes(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// coWaitTopic waits until topic holds exactly want (values in order) and
// source connector name's offsets are exactly offsets (the file read to
// its end), so nothing more can come.
func coWaitTopic(c *sluicetest.Cluster, name, topic string, want []string, offsets ...map[string]any) {
	c.T.Helper()
	exp := sluicetest.CanonOffsets(c.T, offsets)
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		off := coOffsets(c, name)
		var got []string
		for _, r := range c.ReadTopic(topic) {
			got = append(got, string(r.Value))
		}
		return off == exp && strings.Join(got, "\n") == strings.Join(want, "\n"),
			fmt.Sprintf("offsets %s (want %s); topic %s holds %q, want %q", off, exp, topic, got, want)
	})
}

// coWaitSinkFile waits until sink connector name committed offset end on
// topic partition 0 and its file holds exactly want.
func coWaitSinkFile(c *sluicetest.Cluster, name, topic string, end int, path string, want []string) {
	c.T.Helper()
	exp := sluicetest.CanonOffsets(c.T, []map[string]any{coSink(topic, 0, end)})
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		off := coOffsets(c, name)
		data, _ := os.ReadFile(path)
		got := strings.TrimSuffix(string(data), "\n")
		return off == exp && got == strings.Join(want, "\n"),
			fmt.Sprintf("offsets %s (want %s); %s holds %q, want %q", off, exp, filepath.Base(path), got, want)
	})
}

// coFaults is a harness fault injector whose failing steps a test sets:
// every step in the set fails with errCoInjected. Steps are named as the
// coordinator names them in its errors (coStepOf); the other fault points
// (the status writer, the agents) pass unseen.
type coFaults struct {
	mu    sync.Mutex
	steps map[string]bool
	seen  []string
}

// errCoInjected is the error (and so the cause text) of an injected failure.
var errCoInjected = errors.New("injected fault")

// coStepOf names the fault points of the coordinator's steps as its errors
// and answers name the steps.
var coStepOf = map[faults.Point]string{
	faults.CreateFence:          coStepFence,
	faults.CreateSnapshot:       coStepSnapshot,
	faults.CreateWriteOffsets:   coStepWriteOffsets,
	faults.CreateWriteConfig:    coStepWriteConfig,
	faults.CreateRestore:        coStepRestore,
	faults.OffsetsHistoryBegin:  coStepHistory,
	faults.OffsetsApply:         "changing the offsets",
	faults.OffsetsHistoryMarker: coStepMarker,
	faults.MoveStop:             "stopping the old connector",
	faults.MoveRead:             "reading the old connector's positions",
	faults.MoveCreate:           "creating the new connector at those positions",
	faults.MoveClear:            "removing the old connector's positions",
	faults.MoveDelete:           "deleting the old connector",
	faults.MoveStart:            "starting the new connector in the old one's state",
}

// Fault implements faults.Injector, as sluicetest.Options.Faults.
func (f *coFaults) Fault(_ context.Context, at faults.Point, _ any) error {
	step, ok := coStepOf[at]
	if !ok {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, step)
	if f.steps[step] {
		return errCoInjected
	}
	return nil
}

// Fail makes exactly the given steps fail from now on (none: all pass), and
// forgets the steps seen so far.
func (f *coFaults) Fail(steps ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps = map[string]bool{}
	for _, s := range steps {
		f.steps[s] = true
	}
	f.seen = nil
}

// Seen returns the steps the hook was asked about since the last Fail.
func (f *coFaults) Seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// coOn is c reporting to t, for use inside t's subtest.
func coOn(c *sluicetest.Cluster, t testing.TB) *sluicetest.Cluster {
	cc := *c
	cc.T = t
	return &cc
}

// coWaitGroupGone waits until group has no members (a deleted sink's task
// left it), so offsets can be changed again.
func coWaitGroupGone(c *sluicetest.Cluster, group string) {
	c.T.Helper()
	adm := c.Admin()
	sluicetest.Eventually(c.T, 30*time.Second, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		groups, err := adm.DescribeGroups(ctx, group)
		if err != nil {
			return false, err.Error()
		}
		g := groups[group]
		return len(g.Members) == 0, fmt.Sprintf("group %s is %s with %d members (%v)", group, g.State, len(g.Members), g.Err)
	})
}

// coT lets sluicetest.Do run on another goroutine: a failure is reported with
// Errorf (safe from any goroutine) and ends that goroutine only.
type coT struct{ t testing.TB }

// Helper implements sluicetest.Do's test interface.
func (g coT) Helper() {}

// Fatalf reports the failure and ends the calling goroutine.
func (g coT) Fatalf(format string, args ...any) {
	g.t.Errorf(format, args...)
	runtime.Goexit()
}
