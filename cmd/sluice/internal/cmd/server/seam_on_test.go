//go:build sluicetest

package server

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestTaggedBinaryHoldsOffsets: with -tags sluicetest and the variable set,
// the agent warns that a test seam is active, lets a fence-only request
// through and holds a write until its deadline, leaving the marker.
func TestTaggedBinaryHoldsOffsets(t *testing.T) {
	inj, marker, logs := seamFaults(t)
	if inj == nil {
		t.Fatalf("%s set: no offsets hook", holdOffsetsEnv)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "test seam active") || !strings.Contains(logs, holdOffsetsEnv) {
		t.Fatalf("no warning that a test seam is active: %q", logs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := inj.Fault(ctx, faults.AgentOffsets, wire.SourceOffsetsRequest{Connector: "c", FenceIDs: []string{"g-c-0"}}); err != nil {
		t.Fatalf("a fence-only request was held: %v", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("a fence-only request left the marker: %v", err)
	}
	value := "{}"
	err := inj.Fault(ctx, faults.AgentOffsets, wire.SourceOffsetsRequest{Connector: "c", Writes: []wire.OffsetWrite{{Key: `["c",{}]`, Value: &value}}})
	if !api.IsCode(err, api.CodeTimeout) || ctx.Err() == nil {
		t.Fatalf("a write: got %v (context %v), want it held until its deadline", err, ctx.Err())
	}
	if data, err := os.ReadFile(marker); err != nil || string(data) != "c\n" {
		t.Fatalf("marker after a held write: %q, %v", data, err)
	}
}
