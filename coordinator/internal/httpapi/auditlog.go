package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/coordinator/internal/audit"
)

// decodeAuditQuery reads GET /sluice/audit's parameters; a bad one is a 400
// naming it.
func decodeAuditQuery(_ context.Context, r *http.Request) (any, error) {
	return audit.ParseQuery(r.URL.Query(), time.Now())
}

func makeAuditLog(svc Service) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		return svc.AuditLog(ctx, request.(audit.Query))
	}
}
