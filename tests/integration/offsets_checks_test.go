package integration

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestOffsetsPatchChecks walks PATCH …/offsets through its checks in the
// spec's order (§5.2, with Sluice's 400s of §0): the body's shape, a missing
// or empty list (before the connector lookup, so an unknown connector gets
// the 400 and not the 404), a null entry, the 404, the STOPPED check (before
// any per-entry validation), then the framework's per-entry checks (§5.3)
// and the file source's own hook (§8). A rejected request changes nothing.
func TestOffsetsPatchChecks(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("checks")
	good := filePos("in.txt", 7)
	bigInt := `123456789012345678901234567890`

	fileSource(c, "src", "in.txt", topic, "STOPPED")
	patch(t, c, "src", body(good), http.StatusOK, msgAlterDefinite)
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "gen", "initial_state": "STOPPED",
		"config": map[string]string{"connector.class": generatorClass, "topic": topic}})
	patch(t, c, "gen", `{"offsets":[{"partition":{"stream":0},"offset":{"seq":4}}]}`, http.StatusOK, msgAlterFramework)

	writeLines(t, workPath(c, "in.txt"), lines(1, 3))
	fileSource(c, "running", "in.txt", topic, "")
	fileSource(c, "paused", "in.txt", topic, "")
	fileSource(c, "created-paused", "in.txt", topic, "PAUSED")
	fileSource(c, "stopped-then-paused", "in.txt", topic, "STOPPED")
	// Both read the whole file before the snapshot, so that their offsets
	// no longer move.
	waitOffsets(c, "running", []offset{filePos("in.txt", bytesOf(lines(1, 3)))})
	waitOffsets(c, "paused", []offset{filePos("in.txt", bytesOf(lines(1, 3)))})
	c.Must(http.StatusAccepted, "PUT", "/connectors/paused/pause", nil)
	c.Must(http.StatusAccepted, "PUT", "/connectors/stopped-then-paused/pause", nil)
	c.WaitState("paused", "PAUSED", 1, "PAUSED")
	c.WaitState("created-paused", "PAUSED", 0, "")
	c.WaitState("stopped-then-paused", "PAUSED", 0, "")

	names := []string{"src", "gen", "running", "paused", "created-paused", "stopped-then-paused"}
	before := map[string]string{}
	for _, n := range names {
		before[n] = canon(t, getOffsets(c, n))
	}

	const primitives = "Offsets may only contain primitive types as values, but field "
	tests := []struct {
		name, connector, body string
		status                int
		msg                   string
	}{
		// Body shape (spec §0: 400 with the field named).
		{"empty body", "src", ``, 400, "Invalid JSON in request body: unexpected end of JSON input"},
		{"malformed JSON", "src", `{"offsets":[`, 400, "Invalid JSON in request body: unexpected end of JSON input"},
		{"trailing garbage", "src", `{"offsets":[]} x`, 400, "Invalid JSON in request body: invalid character 'x' after top-level value"},
		{"body is a list", "src", `[]`, 400, "Invalid JSON in request body: expected a JSON object"},
		{"unknown top-level field", "src", `{"key":[]}`, 400, `Unrecognized field "key"`},
		{"field names are case-sensitive", "src", `{"Offsets":[]}`, 400, `Unrecognized field "Offsets"`},
		{"offsets is an object", "src", `{"offsets":{}}`, 400, `Invalid value for field "offsets": expected array`},
		{"offsets holds a number", "src", `{"offsets":[123]}`, 400, `Invalid value for field "offsets": expected array of objects`},
		{"unknown entry field", "src", `{"offsets":[{"key":"val"}]}`, 400, `Unrecognized field "key"`},
		{"extra field next to partition", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":1},"x":1}]}`, 400, `Unrecognized field "x"`},
		{"partition is a list", "src", `{"offsets":[{"partition":[]}]}`, 400, `Invalid value for field "partition": expected object`},
		{"body over 8 MiB", "src", `{"offsets":[{"partition":{"filename":"` + strings.Repeat("x", 8<<20) + `"},"offset":null}]}`, 413, "Request body too large (limit 8 MiB)"},
		{"offset is a string", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":"1"}]}`, 400, `Invalid value for field "offset": expected object`},

		// Missing or empty list: before the lookup.
		{"no offsets, unknown connector", "nope", `{}`, 400, msgOffsetsMissing},
		{"null offsets, unknown connector", "nope", `{"offsets":null}`, 400, msgOffsetsMissing},
		{"empty offsets, unknown connector", "nope", `{"offsets":[]}`, 400, msgOffsetsMissing},
		{"no offsets", "src", `{}`, 400, msgOffsetsMissing},
		{"empty offsets, running connector", "running", `{"offsets":[]}`, 400, msgOffsetsMissing},

		// A null entry: also before the lookup (spec §0).
		{"null entry, unknown connector", "nope", `{"offsets":[null]}`, 400, msgOffsetNull},
		{"null entry among good ones", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":1}},null]}`, 400, msgOffsetNull},

		// Unknown connector, with a valid and with an invalid entry.
		{"unknown connector", "nope", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":1}}]}`, 404, msgNotFound("nope")},
		{"unknown connector, bad entry", "nope", `{"offsets":[{"partition":null,"offset":{"position":1}}]}`, 404, msgNotFound("nope")},

		// Not STOPPED, whatever the entries hold.
		{"running", "running", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":1}}]}`, 400, msgNotStopped("running")},
		{"running, bad entry", "running", `{"offsets":[{"partition":null,"offset":{"position":{"a":1}}}]}`, 400, msgNotStopped("running")},
		{"paused", "paused", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":1}}]}`, 400, msgNotStopped("paused")},
		{"created paused", "created-paused", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":null}]}`, 400, msgNotStopped("created-paused")},
		{"stopped, then paused", "stopped-then-paused", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":1}}]}`, 400, msgNotStopped("stopped-then-paused")},

		// Framework checks (spec §5.3 and §0), with and without a hook.
		{"null partition", "src", `{"offsets":[{"partition":null,"offset":{"position":1}}]}`, 400, "The partition for a source connector offset cannot be null"},
		{"missing partition", "gen", `{"offsets":[{"offset":{"seq":1}}]}`, 400, "The partition for a source connector offset cannot be null"},
		{"null partition, null offset", "gen", `{"offsets":[{"partition":null,"offset":null}]}`, 400, "The partition for a source connector offset cannot be null"},
		{"offset value is a map", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":{"a":1}}}]}`, 400, primitives + "position contains MAP"},
		{"offset value is a list", "gen", `{"offsets":[{"partition":{"stream":0},"offset":{"seq":[1,2]}}]}`, 400, primitives + "seq contains ARRAY"},
		{"offset value beyond 64 bits", "gen", `{"offsets":[{"partition":{"stream":0},"offset":{"seq":` + bigInt + `}}]}`, 400, primitives + "seq contains class java.math.BigInteger"},
		{"negative value beyond 64 bits", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":-` + bigInt + `}}]}`, 400, primitives + "position contains class java.math.BigInteger"},
		{"partition value is a map", "gen", `{"offsets":[{"partition":{"stream":{"n":0}},"offset":{"seq":1}}]}`, 400, primitives + "stream contains MAP"},
		{"partition value is a list", "src", `{"offsets":[{"partition":{"filename":["in.txt"]},"offset":{"position":1}}]}`, 400, primitives + "filename contains ARRAY"},
		{"bad entry after a good one", "gen", `{"offsets":[{"partition":{"stream":1},"offset":{"seq":1}},{"partition":{"stream":2},"offset":{"seq":{}}}]}`, 400, primitives + "seq contains MAP"},

		// The file source's hook (spec §8): 400 with its message.
		{"hook: no position", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"pos":1}}]}`, 400, "Offset objects should either be null or contain the key 'position'"},
		{"hook: empty offset", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{}}]}`, 400, "Offset objects should either be null or contain the key 'position'"},
		{"hook: position is a string", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":"7"}}]}`, 400, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"hook: position is a decimal", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":7.0}}]}`, 400, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"hook: position is null", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":null}}]}`, 400, "The value for the 'position' key in the offset is expected to be a Long value"},
		{"hook: negative position", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":-1}}]}`, 400, "The value for the 'position' key in the offset should be a non-negative value"},
		{"hook: no filename", "src", `{"offsets":[{"partition":{"file":"in.txt"},"offset":{"position":1}}]}`, 400, "Partition objects should contain the key 'filename'"},
		{"hook: empty partition", "src", `{"offsets":[{"partition":{},"offset":{"position":1}}]}`, 400, "Partition objects should contain the key 'filename'"},
		{"hook: one bad entry rejects all", "src", `{"offsets":[{"partition":{"filename":"in.txt"},"offset":{"position":99}},{"partition":{"filename":"b.txt"},"offset":{"position":-5}}]}`, 400, "The value for the 'position' key in the offset should be a non-negative value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch(t, c, tt.connector, tt.body, tt.status, tt.msg)
		})
	}

	// Resets are refused the same way; nothing may have changed.
	for _, n := range []string{"running", "paused", "created-paused", "stopped-then-paused"} {
		expect(t, c, "DELETE", "/connectors/"+n+"/offsets", nil, http.StatusBadRequest, msgNotStopped(n))
	}
	expect(t, c, "DELETE", "/connectors/nope/offsets", nil, http.StatusNotFound, msgNotFound("nope"))
	for _, n := range names {
		if got := canon(t, getOffsets(c, n)); got != before[n] {
			t.Errorf("offsets of %s changed by rejected requests:\n got %s\nwant %s", n, got, before[n])
		}
	}
	wantOffsets(c, "src", []offset{good})
}
