package httpapi

// POST /sluice/migrations: the coordinator reads a Kafka Connect cluster
// and moves its connectors into Sluice (coordinator/internal/migrations).
// The route is an admin's, and each connector's name must be one the
// caller's admin grants cover, as the move of a connector's is.

import (
	"context"
	"net/http"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

// migrationRequest is a decoded POST /sluice/migrations.
type migrationRequest struct {
	req    api.MigrationRequest
	dryRun bool
}

func decodeMigration(_ context.Context, r *http.Request) (any, error) {
	dryRun, err := dryRunParam(r, "POST /sluice/migrations")
	if err != nil {
		return nil, err
	}
	body, err := readJSON(r)
	if err != nil {
		return nil, err
	}
	var req api.MigrationRequest
	err = fieldSet{
		"url":           stringField("url", &req.URL),
		"connectors":    stringField("connectors", &req.Connectors),
		"leave_stopped": boolField("leave_stopped", &req.LeaveStopped),
		"delete_source": boolField("delete_source", &req.DeleteSource),
		"stop_timeout":  stringField("stop_timeout", &req.StopTimeout),
		"user":          stringField("user", &req.User),
		"password":      stringField("password", &req.Password),
		"dry_run":       boolField("dry_run", &req.DryRun),
	}.bind("", body)
	if err != nil {
		return nil, err
	}
	if req.URL == "" {
		return nil, badRequest("Give \"url\": the Kafka Connect REST URL to migrate from")
	}
	if req.Password != "" && req.User == "" {
		return nil, badRequest("\"password\" needs a \"user\"")
	}
	// dry_run in the body or the query, as a move takes it.
	req.DryRun = req.DryRun || dryRun
	return migrationRequest{req: req, dryRun: req.DryRun}, nil
}

func makeMigrate(svc Fleet) endpoint.Endpoint {
	return func(ctx context.Context, request any) (any, error) {
		req := request.(migrationRequest)
		return svc.Migrate(ctx, req.req, req.dryRun, grantCheck(ctx, admin))
	}
}
