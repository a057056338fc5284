package integration

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// The steps of a create with initial offsets, as the coordinator names
// them in its errors and its fault points (spec §0.1 steps 3–6).
const (
	coStepFence        = "fencing"
	coStepSnapshot     = "reading the previous offsets"
	coStepWriteOffsets = "writing the initial offsets"
	coStepWriteConfig  = "writing the connector config"
	coStepRestore      = "restoring the previous offsets"
	// The offsets history's steps: the pending entry before the writes,
	// its marker once the outcome is known.
	coStepHistory = "recording the offsets change"
	coStepMarker  = "marking the offsets change in the history"
)

// coRestored is spec §0.1's 500 when step failed and the snapshot was
// written back.
func coRestored(name, step string) string {
	return "Failed to create connector " + name + ": " + step + " failed (injected fault); its previous offsets were restored"
}

// coLost is spec §0.1's 500 when writing the snapshot back failed too.
func coLost(name, step string) string {
	return "Failed to create connector " + name + ": " + step + " failed (injected fault), and restoring its previous offsets failed (injected fault); the previous offsets are in the coordinator log"
}

// coUnchanged is the 500 of a failure before anything was written (fencing
// or reading the snapshot).
func coUnchanged(name, step string) string {
	return "Failed to create connector " + name + ": " + step + " failed (injected fault); nothing was changed"
}

// coFaultKind is one connector kind of the fault tests: its config, the
// offsets stored under the name before each call, and the initial ones.
type coFaultKind struct {
	kind     string
	config   map[string]string
	previous []map[string]any
	initial  []map[string]any
	// steps is the order of work the coordinator goes through.
	steps []string
}

// coFaultCase is one injected failure: the steps that fail, the answer's
// message, and whether the create went on to restore the snapshot.
type coFaultCase struct {
	name    string
	fail    []string
	message string
	rolled  bool
}

// TestCreateWithOffsetsFaults injects a failure into each step of a create
// with initial offsets (the coordinator's fault points), for a file source and a
// file sink: the answer is the exact 500 of spec §0.1, the connector does
// not exist, and the offsets under the name are exactly those from before
// the call (read by creating a STOPPED connector of that name). When the
// restore fails too, the answer says so and the initial offsets are what
// the name holds. A later create without faults succeeds.
func TestCreateWithOffsetsFaults(t *testing.T) {
	t.Parallel()
	faults := &coFaults{}
	c := sluicetest.Start(t, sluicetest.Options{Faults: faults})
	topic, other := c.Name("fault-in"), c.Name("fault-other")
	coTopic(c, topic, 2)
	coTopic(c, other, 1)
	kinds := []coFaultKind{{
		kind:     "source",
		config:   fileSourceCfg("fault.txt", c.Name("fault-out")),
		previous: []map[string]any{coSrc("fault.txt", 10), coSrc("stale.txt", 5)},
		initial:  []map[string]any{coSrc("fault.txt", 20), coSrc("new.txt", 3)},
		steps:    []string{coStepFence, coStepSnapshot, coStepHistory, coStepWriteOffsets, coStepWriteConfig},
	}, {
		kind:     "sink",
		config:   fileSinkCfg("fault-sink.txt", topic),
		previous: []map[string]any{coSink(topic, 0, 2), coSink(other, 0, 0)},
		initial:  []map[string]any{coSink(topic, 0, 6), coSink(topic, 1, 1)},
		steps:    []string{coStepSnapshot, coStepHistory, coStepWriteOffsets, coStepWriteConfig},
	}}
	for _, k := range kinds {
		t.Run(k.kind, func(t *testing.T) {
			c := coOn(c, t)
			name := c.Name("fault-" + k.kind)
			coSeed(c, name, k.config, k.previous...)
			cases := []coFaultCase{
				{"write offsets", []string{coStepWriteOffsets}, coRestored(name, coStepWriteOffsets), true},
				{"write config", []string{coStepWriteConfig}, coRestored(name, coStepWriteConfig), true},
				{"write offsets and restore", []string{coStepWriteOffsets, coStepRestore}, coLost(name, coStepWriteOffsets), true},
				{"snapshot", []string{coStepSnapshot}, coUnchanged(name, coStepSnapshot), false},
				{"history", []string{coStepHistory}, coUnchanged(name, coStepHistory), false},
			}
			if k.kind == "source" {
				cases = append(cases, coFaultCase{"fence", []string{coStepFence}, coUnchanged(name, coStepFence), false})
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					c := coOn(c, t)
					faults.Fail(tc.fail...)
					r := c.Do("POST", "/connectors", coBody(name, k.config, "", k.initial))
					seen := faults.Seen()
					faults.Fail()
					wantError(t, r, http.StatusInternalServerError, tc.message)
					// The steps ran in the spec's order up to the failure,
					// then the restore.
					last := slices.Index(k.steps, tc.fail[0])
					want := append([]string{}, k.steps[:last+1]...)
					if tc.rolled {
						want = append(want, coStepRestore, coStepMarker)
					}
					if !slices.Equal(seen, want) {
						t.Fatalf("steps %q, want %q", seen, want)
					}
					coWantAbsent(c, name)
					coWantNameOffsets(c, name, k.config, k.previous...)
				})
			}

			// Both the config write and the restore fail: the initial
			// offsets were written and could not be taken back; the answer
			// says so, and the connector does not exist.
			t.Run("write config and restore", func(t *testing.T) {
				c := coOn(c, t)
				faults.Fail(coStepWriteConfig, coStepRestore)
				r := c.Do("POST", "/connectors", coBody(name, k.config, "", k.initial))
				faults.Fail()
				wantError(t, r, http.StatusInternalServerError, coLost(name, coStepWriteConfig))
				coWantAbsent(c, name)
				coWantNameOffsets(c, name, k.config, k.initial...)
				// Put the previous offsets back for what follows.
				coSeed(c, name, k.config, k.previous...)
				coWantNameOffsets(c, name, k.config, k.previous...)
			})

			// Without faults the same create succeeds: nothing was left
			// behind that blocks it, and the stale offsets are replaced.
			r := c.Do("POST", "/connectors", coBody(name, k.config, "STOPPED", k.initial))
			coCreated(t, r, name, k.config, k.kind)
			coWantOffsets(c, name, k.initial...)
		})
	}
}

// TestCreateWithOffsetsConcurrent sends two creates of one name at once,
// each with its own config and initial offsets: exactly one answers 201,
// the other 409 "Connector <name> already exists", and the connector's
// config and offsets are the winner's. A later create with other initial
// offsets gets 409 and changes nothing.
func TestCreateWithOffsetsConcurrent(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{})
	topic := c.Name("race-in")
	coTopic(c, topic, 2)
	for round := range 3 {
		for _, kind := range []string{"source", "sink"} {
			name := c.Name("race-" + kind + "-" + itoa10(round))
			var configs [2]map[string]string
			var initial [2][]map[string]any
			for i := range 2 {
				file := "race-" + itoa10(round) + "-" + itoa10(i) + ".txt"
				if kind == "source" {
					configs[i] = fileSourceCfg(file, c.Name("race-out"))
					initial[i] = coList(coSrc(file, 10+i), coSrc("shared.txt", 100+i))
				} else {
					configs[i] = fileSinkCfg(file, topic)
					initial[i] = coList(coSink(topic, 0, 10+i), coSink(topic, 1, 100+i))
				}
			}
			var wg sync.WaitGroup
			var answers [2]sluicetest.Response
			start := make(chan struct{})
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					answers[i] = sluicetest.Do(coT{t}, c.URL, "POST", "/connectors", coBody(name, configs[i], "STOPPED", initial[i]))
				}()
			}
			close(start)
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			winner := 0
			if answers[1].Status == http.StatusCreated {
				winner = 1
			}
			loser := 1 - winner
			coCreated(t, answers[winner], name, configs[winner], kind)
			wantError(t, answers[loser], http.StatusConflict, "Connector "+name+" already exists")
			var cfg map[string]string
			c.Must(http.StatusOK, "GET", "/connectors/"+name+"/config", nil).JSON(t, &cfg)
			if cfg["file"] != configs[winner]["file"] {
				t.Fatalf("round %d %s: config %v, want the winner's %v", round, kind, cfg, configs[winner])
			}
			coWantOffsets(c, name, initial[winner]...)

			// The name exists: a third create is refused and changes
			// nothing.
			third := coList(coSrc("third.txt", 1))
			if kind == "sink" {
				third = coList(coSink(topic, 0, 1))
			}
			wantError(t, c.Do("POST", "/connectors", coBody(name, configs[loser], "STOPPED", third)),
				http.StatusConflict, "Connector "+name+" already exists")
			coWantOffsets(c, name, initial[winner]...)
		}
	}
}
