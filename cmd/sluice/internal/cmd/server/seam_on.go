//go:build sluicetest

package server

import (
	"context"
	"log/slog"
	"os"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/wire"
)

// testFaults returns the process's fault injector in a binary built with
// -tags sluicetest (the end-to-end tests build it so): SLUICE_TEST_HOLD_OFFSETS
// set, its agents hold offsets writes (holdOffsets) and it warns that a
// test seam is active, so a tagged binary that reached a real deployment
// says so.
func testFaults(log *slog.Logger) faults.Injector {
	marker := os.Getenv(holdOffsetsEnv)
	if marker == "" {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	log.Warn("test seam active: offsets writes are held until their deadline; never run this in production",
		"env", holdOffsetsEnv, "marker", marker)
	return holdOffsets(marker)
}

// holdOffsets makes the agent hold every offsets request that writes
// offsets (a source alter with records to write, a source reset — whose
// tombstones the agent works out itself —, a sink alter or reset; a
// fence-only request passes): it creates marker, then blocks until the
// request's deadline, answering an error. The end-to-end tests use it to
// kill an agent in the middle of an offsets write.
func holdOffsets(marker string) faults.Injector {
	return faults.Func(func(ctx context.Context, at faults.Point, subject any) error {
		if at != faults.AgentOffsets {
			return nil
		}
		var connector string
		switch req := subject.(type) {
		case wire.SourceOffsetsRequest:
			if len(req.Writes) == 0 && req.Op != wire.OffsetsOpReset {
				return nil
			}
			connector = req.Connector
		case wire.SinkOffsetsRequest:
			if len(req.Offsets) == 0 && req.Op != wire.OffsetsOpReset {
				return nil
			}
			connector = req.Connector
		default:
			return nil
		}
		if err := os.WriteFile(marker, []byte(connector+"\n"), 0o644); err != nil {
			return api.Errorf(api.CodeInternal, "%s: write marker: %v", holdOffsetsEnv, err)
		}
		<-ctx.Done()
		return api.Errorf(api.CodeTimeout, "%s: offsets request for connector %s held until its deadline", holdOffsetsEnv, connector)
	})
}
