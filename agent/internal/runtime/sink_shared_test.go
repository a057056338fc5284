package runtime

import (
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/shared/records"
)

// TestForeignMembers: of a sink's group, the members that are not the
// cluster's tasks of the connector — another cluster's, a dynamic member
// (a Kafka Connect worker's) — are named; the cluster's own are not.
func TestForeignMembers(t *testing.T) {
	id := func(s string) *string { return &s }
	members := []kadm.DescribedGroupMember{
		{MemberID: "m1", InstanceID: id(records.SinkInstanceID("prod", "orders", 0))},
		{MemberID: "m2", InstanceID: id(records.SinkInstanceID("prod", "orders", 3))},
		{MemberID: "m3", InstanceID: id(records.SinkInstanceID("staging", "orders", 0))},
		{MemberID: "m4", ClientID: "connector-consumer-orders-0", ClientHost: "/10.0.0.7"},
	}
	want := []string{"dynamic connector-consumer-orders-0@/10.0.0.7", "staging-orders-0"}
	if got := foreignMembers(members, "prod", "orders"); !reflect.DeepEqual(got, want) {
		t.Errorf("foreign members: %q, want %q", got, want)
	}
	if got := foreignMembers(members[:2], "prod", "orders"); len(got) != 0 {
		t.Errorf("the cluster's own tasks: %q, want none", got)
	}
}
