package httpapi

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/api"
)

// BulkAction answers each selected name as the single-connector endpoint
// would, after allow: a refused one is its 403 result.
func (f *fake) BulkAction(ctx context.Context, action string, sel api.Selector, includeTasks, onlyFailed bool, allow func(string) error) (api.BulkResults, error) {
	out := api.BulkResults{Results: []api.BulkResult{}}
	for _, n := range sel.Names {
		r := api.BulkResult{Connector: n, Status: http.StatusAccepted}
		if err := allow(n); err != nil {
			r.Status, r.Message = http.StatusForbidden, err.Error()
		}
		out.Results = append(out.Results, r)
	}
	return out, f.record("BulkAction", action, sel, includeTasks, onlyFailed)
}

func (f *fake) OpenMaintenance(ctx context.Context, req api.MaintenanceRequest, allow func(string) error) (api.MaintenanceWindow, error) {
	return api.MaintenanceWindow{ID: "w1", Selector: req.Selector, State: req.State, Reason: req.Reason, Connectors: []api.MaintenanceConnector{}},
		f.record("OpenMaintenance", req)
}

func (f *fake) MaintenanceWindows(ctx context.Context) (api.MaintenanceList, error) {
	return api.MaintenanceList{Windows: []api.MaintenanceWindow{}}, f.record("MaintenanceWindows")
}

func (f *fake) MaintenanceWindow(ctx context.Context, id string) (api.MaintenanceWindow, error) {
	return api.MaintenanceWindow{ID: id, Connectors: []api.MaintenanceConnector{}}, f.record("MaintenanceWindow", id)
}

func (f *fake) CloseMaintenance(ctx context.Context, id string, allow func(string) error) (api.MaintenanceWindow, error) {
	return api.MaintenanceWindow{ID: id, Connectors: []api.MaintenanceConnector{}}, f.record("CloseMaintenance", id)
}

// FleetConnectors answers a row for each connector of f.expanded that
// visible lets through, and records the query.
func (f *fake) FleetConnectors(ctx context.Context, q api.FleetQuery, visible func(string) bool) (api.FleetConnectors, error) {
	out := api.FleetConnectors{Offset: q.Offset, Limit: q.Limit, Connectors: []api.FleetConnector{}}
	for _, name := range slices.Sorted(maps.Keys(f.expanded)) {
		if visible == nil || visible(name) {
			out.Connectors = append(out.Connectors, api.FleetConnector{Name: name, Agents: []string{}, Labels: map[string]string{}})
		}
	}
	out.Total = len(out.Connectors)
	return out, f.record("FleetConnectors", q)
}

// Migrate answers each name of req.Connectors (comma-separated here) as
// migrated, after allow, and records the request.
func (f *fake) Migrate(ctx context.Context, req api.MigrationRequest, dryRun bool, allow func(string) error) (api.MigrationResult, error) {
	out := api.MigrationResult{DryRun: dryRun, URL: req.URL, Connectors: []api.MigratedConnector{}}
	for _, n := range strings.Split(req.Connectors, ",") {
		r := api.MigratedConnector{Name: n, Result: api.MigrationMigrated}
		if err := allow(n); err != nil {
			r.Result, r.Detail = api.MigrationNotMigrated, err.Error()
		}
		out.Connectors = append(out.Connectors, r)
	}
	return out, f.record("Migrate", req, dryRun)
}
