package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/go-kit/kit/endpoint"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/textcut"
)

// maxLoggedBytes bounds each piece of a request that a log line repeats.
const maxLoggedBytes = 2048

// logging is the one middleware wrapped around every endpoint. It logs each
// call (op names the operation) and turns a panic in a service into a 500,
// which is what Kafka Connect answers for an unexpected exception; left
// alone, net/http would drop the connection without an answer.
//
// Client errors (4xx) are routine for a REST API and log at INFO; server
// errors at ERROR; successes at DEBUG.
func logging(logger *slog.Logger, op string) endpoint.Middleware {
	return func(next endpoint.Endpoint) endpoint.Endpoint {
		return func(ctx context.Context, request any) (response any, err error) {
			start := time.Now()
			defer func() {
				if p := recover(); p != nil {
					if p == http.ErrAbortHandler {
						panic(p)
					}
					logger.ErrorContext(ctx, "rest endpoint panicked", "op", op,
						"panic", p, "stack", string(debug.Stack()))
					response, err = nil, api.Errorf(api.CodeInternal, "%s", fmt.Sprint(p))
				}
				took := time.Since(start)
				if err == nil {
					logger.DebugContext(ctx, "rest call", "op", op, "took", took)
					return
				}
				e := api.AsError(err)
				level := slog.LevelInfo
				if e.Code >= 500 {
					level = slog.LevelError
				}
				// A message may repeat what the client sent (a name of a
				// megabyte): the line keeps the start of it.
				logger.Log(ctx, level, "rest call failed", "op", op, "took", took,
					"code", int(e.Code), "error", textcut.Cut(e.Message, maxLoggedBytes))
			}()
			return next(ctx, request)
		}
	}
}
