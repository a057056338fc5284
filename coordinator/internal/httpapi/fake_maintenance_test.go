package httpapi

import (
	"context"
	"net/http"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// BulkAction answers each selected name as the single-connector endpoint
// would, after allow: a refused one is its 403 result.
func (f *fake) BulkAction(ctx context.Context, action string, sel v1.Selector, includeTasks, onlyFailed bool, allow func(string) error) (v1.BulkResults, error) {
	out := v1.BulkResults{Results: []v1.BulkResult{}}
	for _, n := range sel.Names {
		r := v1.BulkResult{Connector: n, Status: http.StatusAccepted}
		if err := allow(n); err != nil {
			r.Status, r.Message = http.StatusForbidden, err.Error()
		}
		out.Results = append(out.Results, r)
	}
	return out, f.record("BulkAction", action, sel, includeTasks, onlyFailed)
}

func (f *fake) OpenMaintenance(ctx context.Context, req v1.MaintenanceRequest, allow func(string) error) (v1.MaintenanceWindow, error) {
	return v1.MaintenanceWindow{ID: "w1", Selector: req.Selector, State: req.State, Reason: req.Reason, Connectors: []v1.MaintenanceConnector{}},
		f.record("OpenMaintenance", req)
}

func (f *fake) MaintenanceWindows(ctx context.Context) (v1.MaintenanceList, error) {
	return v1.MaintenanceList{Windows: []v1.MaintenanceWindow{}}, f.record("MaintenanceWindows")
}

func (f *fake) MaintenanceWindow(ctx context.Context, id string) (v1.MaintenanceWindow, error) {
	return v1.MaintenanceWindow{ID: id, Connectors: []v1.MaintenanceConnector{}}, f.record("MaintenanceWindow", id)
}

func (f *fake) CloseMaintenance(ctx context.Context, id string, allow func(string) error) (v1.MaintenanceWindow, error) {
	return v1.MaintenanceWindow{ID: id, Connectors: []v1.MaintenanceConnector{}}, f.record("CloseMaintenance", id)
}
