package herder

import (
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/fleetlist"
)

// fleetStatuses are the statuses the fleet listing reads
// (fleetlist.Statuses): the connectors service's, and when each
// connector's status last changed in the status topic.
type fleetStatuses struct{ statusesPort }

func (p fleetStatuses) Changed(name string) time.Time { return p.h.statuses.State.Changed(name) }

// FleetList answers the fleet listing (fleetlist); it works once Start
// has run.
func (h *Herder) FleetList() *fleetlist.Lister { return h.fleetList }
