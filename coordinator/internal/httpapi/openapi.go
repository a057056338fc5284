package httpapi

// GET /openapi.json: the OpenAPI document of this API (docs/rest-api.md,
// "OpenAPI document"). The document is the api module's (api.OpenAPI), so
// that a client holds the one a server serves; a test checks it against
// routes() and the api types.

import (
	"context"
	"net/http"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
)

// openAPIPath is the path the document is served at.
const openAPIPath = "/openapi.json"

// openAPIBody is the document as served, read once.
var openAPIBody = api.OpenAPI()

// makeOpenAPI answers the document; it asks no service, so any coordinator
// answers it, also while it starts (answeredAtOnce).
func makeOpenAPI(Admin) endpoint.Endpoint {
	return func(context.Context, any) (any, error) { return openAPIBody, nil }
}

// encodeOpenAPI writes the document's bytes as they are, as JSON.
func encodeOpenAPI(_ context.Context, w http.ResponseWriter, response any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(response.([]byte))
	return nil
}
