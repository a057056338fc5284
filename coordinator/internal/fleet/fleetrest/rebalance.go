package fleetrest

import (
	"context"
	"errors"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/rebalance"
)

// Rebalance answers POST /sluice/rebalance: the moves that even out tasks
// across the live, uncordoned agents; with dryRun only the plan, else the
// rebalance starts (202) and GET /sluice/rebalance follows it. The
// rebalance controller (fleet/rebalance) plans and drives it.
func (s *Service) Rebalance(ctx context.Context, maxMoves int, dryRun bool) (api.Rebalance, error) {
	if err := s.mustLead(); err != nil {
		return api.Rebalance{}, err
	}
	r, err := s.cfg.Rebalances.Start(ctx, maxMoves, dryRun)
	if running := (*rebalance.RunningError)(nil); errors.As(err, &running) {
		return api.Rebalance{}, api.Errorf(api.CodeConflict, "Rebalance %s is still running: follow it with GET /sluice/rebalance", running.ID)
	}
	if err != nil {
		return api.Rebalance{}, s.cfg.WriteFailed(err, "Failed to start a rebalance")
	}
	return rebalanceView(r), nil
}

// RebalanceStatus answers GET /sluice/rebalance: the rebalance in
// progress, or the last one.
func (s *Service) RebalanceStatus(ctx context.Context) (api.Rebalance, error) {
	r := s.cfg.Fleet.Rebalance()
	if r == nil {
		return api.Rebalance{}, api.Errorf(api.CodeNotFound, "No rebalance was started")
	}
	return rebalanceView(*r), nil
}
