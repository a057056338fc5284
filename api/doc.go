// Package api is Sluice's REST API as Go, importing the standard library
// only: the entities the coordinator answers with (the Kafka Connect REST
// API's and Sluice's own /sluice/… ones), the one error type that crosses
// a process boundary (Error, its Code the HTTP status), and Client, a
// typed client of every endpoint with TLS, credentials, retries on the
// answers that leave a request unapplied, and context deadlines.
//
//	c, err := api.NewClient(api.Config{Address: "127.0.0.1:8083"})
//	...
//	st, err := c.Connectors().Status(ctx, "orders-sink")
//	var e *api.Error
//	if errors.As(err, &e) && e.Code == api.CodeNotFound { … }
//
// docs/client.md is the guide: configuration, errors, retries and the
// compatibility promise.
package api
