package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// smallPayload is the NATS max_payload of the tests below: small enough
// that a few tens of KiB of configs or offsets need more than one message.
const smallPayload = 64 << 10

// TestOversizedConfigsStillAssigned: with every connector placed on one
// agent, a connector whose single assignment is larger than the NATS
// server's max_payload, and several whose assignments are larger only
// together, all run — as does a small one beside them. Assignments are sent
// in requests that each fit, and one that cannot fit alone travels in
// chunks.
func TestOversizedConfigsStillAssigned(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, NATSMaxPayload: smallPayload})
	connectors := []struct {
		name string
		pad  int
	}{
		{"small", 0},
		{"big", 2 * smallPayload},
		{"mid-1", smallPayload / 4},
		{"mid-2", smallPayload / 4},
		{"mid-3", smallPayload / 4},
		{"mid-4", smallPayload / 4},
	}
	for _, k := range connectors {
		cfg := generatorCfg(c.Name(k.name))
		if k.pad > 0 {
			cfg["sluice.test.padding"] = strings.Repeat("p", k.pad)
		}
		mustCreate(c, k.name, cfg, "")
	}
	for _, k := range connectors {
		c.WaitState(k.name, "RUNNING", 1, "RUNNING")
	}
	// A config change of the big one reaches its task too (a new
	// generation, sent in chunks again).
	cfg := generatorCfg(c.Name("big"), "sluice.test.padding", strings.Repeat("q", 3*smallPayload))
	c.Must(http.StatusOK, "PUT", "/connectors/big/config", cfg)
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		gens := taskGenerations(c, "big")[0]
		return len(gens) >= 2, fmt.Sprintf("task big-0 ran at generations %v, want a second one after the config change", gens)
	})
	c.WaitState("big", "RUNNING", 1, "RUNNING")
}

// bigOffsets makes n source offsets whose partitions are about size bytes
// each, named from first.
func bigOffsets(first, n, size int) []offset {
	out := make([]offset, n)
	for i := range out {
		out[i] = offset{
			Partition: map[string]any{"stream": fmt.Sprint(first + i), "pad": strings.Repeat("k", size)},
			Offset:    map[string]any{"seq": num(first + i)},
		}
	}
	return out
}

// TestOffsetsBeyondMaxPayload: offsets that together, or in one request,
// hold more than the NATS server's max_payload can still be altered and
// reset — a state Sluice accepted can always be changed again — and each
// change is still all or nothing. A PATCH with more entries than the stated
// limit is refused up front.
func TestOffsetsBeyondMaxPayload(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, NATSMaxPayload: smallPayload})
	part := 1 << 10
	each := smallPayload * 3 / 4 / part // one PATCH's worth that fits one message

	resets := []struct {
		name   string
		method string
		path   string
		status int
		msg    string
	}{
		{"delete-offsets", "DELETE", "/connectors/%s/offsets", http.StatusOK, msgResetFramework},
		{"delete-with-reset", "DELETE", "/connectors/%s?reset_offsets=true", http.StatusNoContent, ""},
	}
	for _, rc := range resets {
		t.Run(rc.name, func(t *testing.T) {
			sc := on(c, t)
			name := rc.name
			mustCreate(sc, name, generatorCfg(c.Name(name)), "STOPPED")
			// Two PATCHes that each fit one message, and together do not.
			first, second := bigOffsets(0, each, part), bigOffsets(each, each, part)
			patch(t, sc, name, body(first...), http.StatusOK, msgAlterFramework)
			patch(t, sc, name, body(second...), http.StatusOK, msgAlterFramework)
			wantOffsets(sc, name, append(append([]offset{}, first...), second...))
			r := sc.Do(rc.method, fmt.Sprintf(rc.path, name), nil)
			if r.Status != rc.status || r.Message() != rc.msg {
				t.Fatalf("%s %s: got %s, want %d %q", rc.method, fmt.Sprintf(rc.path, name), r, rc.status, rc.msg)
			}
			if rc.method == "DELETE" && rc.status == http.StatusNoContent {
				// The name's offsets are gone: a new connector of the name starts from none.
				mustCreate(sc, name, generatorCfg(c.Name(name)), "STOPPED")
			}
			wantOffsets(sc, name, []offset{})
		})
	}

	t.Run("one-patch-beyond-max-payload", func(t *testing.T) {
		sc := on(c, t)
		mustCreate(sc, "one", generatorCfg(c.Name("one")), "STOPPED")
		all := bigOffsets(0, 3*each, part)
		patch(t, sc, "one", body(all...), http.StatusOK, msgAlterFramework)
		wantOffsets(sc, "one", all)
		// Half of them removed by null offsets, in one request again.
		var removals []offset
		for _, o := range all[:len(all)/2] {
			removals = append(removals, offset{Partition: o.Partition})
		}
		patch(t, sc, "one", body(removals...), http.StatusOK, msgAlterFramework)
		wantOffsets(sc, "one", all[len(all)/2:])
		expect(t, sc, "DELETE", "/connectors/one/offsets", nil, http.StatusOK, msgResetFramework)
		wantOffsets(sc, "one", []offset{})
	})

	t.Run("initial-offsets", func(t *testing.T) {
		sc := on(c, t)
		initial := bigOffsets(0, 3*each, part)
		r := sc.Do("POST", "/connectors", map[string]any{"name": "initial", "config": generatorCfg(c.Name("initial")),
			"initial_state": "STOPPED", "initial_offsets": initial})
		if r.Status != http.StatusCreated {
			t.Fatalf("create with %d initial offsets: %s", len(initial), r)
		}
		wantOffsets(sc, "initial", initial)
		expect(t, sc, "DELETE", "/connectors/initial/offsets", nil, http.StatusOK, msgResetFramework)
		wantOffsets(sc, "initial", []offset{})
	})

	t.Run("too-many-entries", func(t *testing.T) {
		sc := on(c, t)
		mustCreate(sc, "many", generatorCfg(c.Name("many")), "STOPPED")
		patch(t, sc, "many", body(bigOffsets(0, 3, 8)...), http.StatusOK, msgAlterFramework)
		tooMany := bigOffsets(0, maxOffsetsPerRequest+1, 1)
		r := sc.Do("PATCH", "/connectors/many/offsets", body(tooMany...))
		wantError(t, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("Too many offsets in one request: %d entries (limit %d)", len(tooMany), maxOffsetsPerRequest))
		r = sc.Do("POST", "/connectors", map[string]any{"name": "many-2", "config": generatorCfg(c.Name("many-2")), "initial_offsets": tooMany})
		wantError(t, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("Too many offsets in one request: %d entries (limit %d)", len(tooMany), maxOffsetsPerRequest))
		// Nothing changed, nothing was created.
		wantOffsets(sc, "many", bigOffsets(0, 3, 8))
		sc.Must(http.StatusNotFound, "GET", "/connectors/many-2", nil)
	})
}

// maxOffsetsPerRequest is the stated limit on the entries of one PATCH
// …/offsets (or initial_offsets) body.
const maxOffsetsPerRequest = 10000
