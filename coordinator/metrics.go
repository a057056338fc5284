package coordinator

import (
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
)

// newMetrics registers the coordinator's series on its registry.
func (c *Coordinator) newMetrics() error {
	m, err := metrics.New(c.cfg.Metrics)
	if err != nil {
		return fmt.Errorf("coordinator metrics: %w", err)
	}
	c.metrics = m
	return nil
}

// Metrics implements httpapi.Admin: every series of the registry.
func (s adminService) Metrics(ctx context.Context) ([]*dto.MetricFamily, error) {
	mfs, err := s.metrics.Gather()
	if err != nil {
		// As promhttp answers by default: a scrape that is partly wrong
		// fails whole, rather than passing as complete.
		return nil, api.Errorf(api.CodeInternal, "Failed to gather metrics: %v", err)
	}
	return mfs, nil
}
