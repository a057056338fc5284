package integration

import (
	"net/http"
	"slices"
	"testing"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestSinkStoppedWhileJoiningLeavesItsGroup: a sink stopped right after it
// was resumed — its consumer still joining the group — leaves the group
// all the same, so its offsets can be reset at once. Its static member id
// is read after the consumer closed (a join in flight finishes first):
// read before, it was still empty, the member was left to its session
// timeout (45 s), and the reset answered 500 until then — about one stop
// in six here, one in a hundred when the task had run a moment.
func TestSinkStoppedWhileJoiningLeavesItsGroup(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("joining")
	c.Produce(topic, "a")
	name := c.Name("sink")
	mustCreate(c, name, fileSinkCfg("joining.txt", topic), "STOPPED")
	reset := []string{"The offsets for this connector have been reset successfully",
		"The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."}
	for round := range 30 {
		c.Must(http.StatusAccepted, http.MethodPut, "/connectors/"+name+"/resume", nil)
		c.Must(http.StatusNoContent, http.MethodPut, "/connectors/"+name+"/stop", nil)
		c.WaitState(name, "STOPPED", 0, "")
		if r := c.Do(http.MethodDelete, "/connectors/"+name+"/offsets", nil); r.Status != http.StatusOK || !slices.Contains(reset, r.Message()) {
			t.Fatalf("round %d: the reset after a stop while joining answered %s", round, r)
		}
	}
}
