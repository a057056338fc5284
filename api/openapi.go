package api

import (
	"bytes"
	_ "embed" // the OpenAPI document
)

// openAPIDocument is openapi.json, generated from the REST server's route
// table and this package's types (coordinator/internal/httpapi,
// TestOpenAPIDocument).
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPI returns the OpenAPI 3.1 document of the whole REST API: Kafka
// Connect's endpoints, Sluice's /sluice/… endpoints, /admin/loggers and the
// health and metrics endpoints, each with its parameters, bodies, answers
// (errors included, as ErrorBody), examples and the least role it needs
// (x-sluice-role). Coordinators serve the same bytes at GET /openapi.json.
// The slice is a copy: the caller may change it.
func OpenAPI() []byte {
	return bytes.Clone(openAPIDocument)
}
