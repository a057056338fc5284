package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/coordinator/internal/audit"
	"github.com/sluice-io/sluice/coordinator/internal/auth"
)

// decodeAuditQuery reads GET /sluice/audit's parameters; a bad one is a 400
// naming it.
func decodeAuditQuery(_ context.Context, r *http.Request) (any, error) {
	return audit.ParseQuery(r.URL.Query(), time.Now())
}

// makeAuditLog answers GET /sluice/audit with the records the caller may
// see: those of the connectors its admin grants cover, and — for an admin
// of every connector only — the records that name no connector (agents,
// cluster-wide operations). An admin of team a's connectors reads team a's
// trail, never another team's configs.
func makeAuditLog(svc Admin) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		q := request.(audit.Query)
		if p := auth.Caller(ctx); p != nil {
			q.Visible = func(connector string) bool {
				if connector == "" {
					return p.Unrestricted(auth.RoleAdmin)
				}
				return p.Allows(auth.RoleAdmin, connector)
			}
		}
		return svc.AuditLog(ctx, q)
	}
}
