package records_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/shared/records"
)

// legalInstanceID is Kafka's rule for a group.instance.id (its topic-name
// rule): 1 to 249 characters of [a-zA-Z0-9._-].
var legalInstanceID = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

func TestSinkInstanceID(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		connector string
		task      int
		want      string // "" when the id carries a hash
	}{
		{"orders-sink", 0, "connect-orders-sink-0"},
		{"orders.sink_v2", 12, "connect-orders.sink_v2-12"},
		{"orders sink", 0, ""},
		{"orders/sink", 0, ""},
		{"zähler", 3, ""},
		{long, 2147483647, ""},
	} {
		got := records.SinkInstanceID(tc.connector, tc.task)
		if !legalInstanceID.MatchString(got) {
			t.Errorf("SinkInstanceID(%.20q, %d) = %q: not a legal group.instance.id", tc.connector, tc.task, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("SinkInstanceID(%q, %d) = %q, want %q", tc.connector, tc.task, got, tc.want)
		}
		if tc.want == "" && !strings.HasPrefix(got, "connect-") {
			t.Errorf("SinkInstanceID(%.20q, %d) = %q, want the connect- prefix", tc.connector, tc.task, got)
		}
	}
	// Names that read the same once spelt legally stay apart, and so do tasks.
	seen := map[string]string{}
	for _, name := range []string{"a b", "a/b", "a_b", "a:b"} {
		for task := range 3 {
			id := records.SinkInstanceID(name, task)
			if prev, ok := seen[id]; ok {
				t.Errorf("%q task %d and %s share the instance id %q", name, task, prev, id)
			}
			seen[id] = name
		}
	}
}
