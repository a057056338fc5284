package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/coordinator/internal/audit"
)

// msgWrite is the message of a successful write's log line, one for every
// operation so that a log query finds them all.
const msgWrite = "rest write"

// logWrite logs a successful write a client sent this coordinator at INFO,
// with what an operator asks of a change: which operation, on which
// connector, by whom, with what answer, and how long it took (the whole
// request as the client waited for it, its audit record included).
// Failures are not logged here: the endpoint middleware logs them where
// they happen, with the error (middleware.go).
func logWrite(ctx context.Context, logger *slog.Logger, in audit.Input, took time.Duration) {
	if in.Status >= 300 || !logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	attrs := make([]slog.Attr, 0, 5)
	attrs = append(attrs, slog.String("operation", in.Operation))
	if in.Connector != "" {
		attrs = append(attrs, slog.String("connector", in.Connector))
	}
	attrs = append(attrs, slog.String("principal", in.Principal), slog.Int("status", in.Status), slog.Duration("duration", took))
	logger.LogAttrs(ctx, slog.LevelInfo, msgWrite, attrs...)
}
