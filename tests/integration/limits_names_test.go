package integration

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// Kafka's limits that a connector name must respect through the ids it
// derives: a transactional id (<group.id>-<name>-<task>) as franz-go, the
// Kafka client every Sluice process uses, accepts it.
const maxTransactionalIDBytes = 16382

// maxNameBytes is the longest name whose tasks' transactional ids fit, for
// any task number up to tasks.max's 10 digits.
func maxNameBytes(c *sluicetest.Cluster) int {
	return maxTransactionalIDBytes - len(c.GroupID) - 2 - 10
}

// msgNameTooLong is the 400 for a name of n bytes that starts with prefix.
func msgNameTooLong(c *sluicetest.Cluster, shown string, n int) string {
	return fmt.Sprintf("Connector name '%s' is too long: %d bytes, and at most %d are allowed, so that the transactional ids of its tasks (<group.id>-<name>-<task>) stay within %d bytes",
		shown, n, maxNameBytes(c), maxTransactionalIDBytes)
}

const msgDotName = "Connector name '%s' is not allowed: '.' and '..' cannot be addressed in a URL"

// TestNameLimits: a name a URL cannot address ('.' and '..'), or one so long
// that its tasks' transactional ids would exceed Kafka's limit, is a 400 on
// create and on a PUT …/config that creates, naming the limit and showing
// only the start of the name; nothing is created. The longest allowed name
// works: its task runs.
func TestNameLimits(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen := generatorCfg(c.Name("names"))
	long := func(n int) string { return strings.Repeat("n", n) }
	shown := strings.Repeat("n", 64) + "…"
	tests := []struct {
		name, connector string
		put             bool // PUT /connectors/<name>/config rather than POST
		msg             string
	}{
		{"dot", ".", false, fmt.Sprintf(msgDotName, ".")},
		{"dot dot", "..", false, fmt.Sprintf(msgDotName, "..")},
		{"dot after trimming", "  . ", false, fmt.Sprintf(msgDotName, ".")},
		{"a million bytes", long(1_000_000), false, msgNameTooLong(c, shown, 1_000_000)},
		{"100,000 bytes", long(100_000), false, msgNameTooLong(c, shown, 100_000)},
		{"one byte over", long(maxNameBytes(c) + 1), false, msgNameTooLong(c, shown, maxNameBytes(c)+1)},
		{"one byte over by PUT", long(maxNameBytes(c) + 1), true, msgNameTooLong(c, shown, maxNameBytes(c)+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := listNames(c)
			var r sluicetest.Response
			if tt.put {
				r = c.Do("PUT", "/connectors/"+tt.connector+"/config", gen)
			} else {
				r = c.Do("POST", "/connectors", map[string]any{"name": tt.connector, "config": gen})
			}
			wantError(t, r, http.StatusBadRequest, tt.msg)
			if after := listNames(c); !slices.Equal(before, after) {
				t.Errorf("connectors changed from %v to %v", before, after)
			}
		})
	}

	// A name too long for the request line never reaches the name check:
	// the server refuses the headers first, naming their limit.
	t.Run("100,000 bytes by PUT", func(t *testing.T) {
		before := listNames(c)
		r := c.Do("PUT", "/connectors/"+long(100_000)+"/config", gen)
		wantError(t, r, http.StatusRequestHeaderFieldsTooLarge, "Request headers too large (limit 64 KiB)")
		if after := listNames(c); !slices.Equal(before, after) {
			t.Errorf("connectors changed from %v to %v", before, after)
		}
	})

	t.Run("sink group id too long", func(t *testing.T) {
		group := long(40_000)
		r := c.Do("POST", "/connectors", map[string]any{"name": "long-group",
			"config": cfgWith(fileSinkCfg("out.txt", c.Name("names")), "consumer.override.group.id", group)})
		wantError(t, r, http.StatusBadRequest, "The consumer group id '"+shown+"' of connector 'long-group' is too long: 40000 bytes, and Kafka allows at most 32767")
		expect(t, c, "GET", "/connectors/long-group", nil, http.StatusNotFound, msgNotFound("long-group"))
	})

	t.Run("the longest name runs", func(t *testing.T) {
		c := on(c, t)
		name := long(maxNameBytes(c))
		mustCreate(c, name, cfgWith(gen, "tasks.max", "1"), "")
		c.WaitState(name, "RUNNING", 1, "RUNNING")
	})
}
