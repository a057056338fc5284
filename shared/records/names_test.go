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
		group, connector string
		task             int
		want             string // "" when the id carries a hash
	}{
		{"sluice", "orders-sink", 0, "sluice-orders-sink-0"},
		{"prod.eu_1", "orders.sink_v2", 12, "prod.eu_1-orders.sink_v2-12"},
		{"sluice", "orders sink", 0, ""},
		{"sluice", "orders/sink", 0, ""},
		{"sluice", "zähler", 3, ""},
		{"team a", "orders", 0, ""},
		{"sluice", long, 2147483647, ""},
		{long, "orders", 1, ""},
	} {
		got := records.SinkInstanceID(tc.group, tc.connector, tc.task)
		if !legalInstanceID.MatchString(got) {
			t.Errorf("SinkInstanceID(%.20q, %.20q, %d) = %q: not a legal group.instance.id", tc.group, tc.connector, tc.task, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("SinkInstanceID(%q, %q, %d) = %q, want %q", tc.group, tc.connector, tc.task, got, tc.want)
		}
		if again := records.SinkInstanceID(tc.group, tc.connector, tc.task); again != got {
			t.Errorf("SinkInstanceID(%.20q, %.20q, %d) is %q, then %q: not stable", tc.group, tc.connector, tc.task, got, again)
		}
	}
	// Names that read the same once spelt legally stay apart, and so do
	// tasks and clusters: two clusters' same-named sinks share the consumer
	// group connect-<name>, never a member id.
	seen := map[string]string{}
	for _, group := range []string{"sluice", "sluice-eu", "a b", "a_b"} {
		for _, name := range []string{"a b", "a/b", "a_b", "a:b", "orders"} {
			for task := range 3 {
				id := records.SinkInstanceID(group, name, task)
				key := group + " / " + name
				if prev, ok := seen[id]; ok {
					t.Errorf("%s task %d and %s share the instance id %q", key, task, prev, id)
				}
				seen[id] = key
			}
		}
	}
}

// TestIsSinkInstanceOf: a cluster tells its sink's members (any task, the
// hashed spelling too) from another cluster's, another connector's and a
// dynamic member's.
func TestIsSinkInstanceOf(t *testing.T) {
	long := strings.Repeat("y", 300)
	for _, tc := range []struct {
		group, connector string
	}{{"sluice", "orders"}, {"sluice", "orders sink"}, {"team a", "zähler"}, {"sluice", long}} {
		for _, task := range []int{0, 7, 12} {
			if id := records.SinkInstanceID(tc.group, tc.connector, task); !records.IsSinkInstanceOf(id, tc.group, tc.connector) {
				t.Errorf("%s (task %d of %.20q in %q) is not recognised", id, task, tc.connector, tc.group)
			}
		}
	}
	for _, id := range []string{
		"sluice-eu-orders-0",   // another cluster's
		"sluice-orders-sink-0", // another connector's
		"sluice-orders-",
		"sluice-orders-x",
		"sluice-orders-007", // not how a task number is spelt
		"connect-orders-0",
		"",
	} {
		if records.IsSinkInstanceOf(id, "sluice", "orders") {
			t.Errorf("%q taken for a task of sluice's orders", id)
		}
	}
}
