// Package reqctx carries what the REST layer knows of a request, beyond
// its body, to the herder that records it: the reason a caller gave for
// an offsets change (the X-Sluice-Reason header).
package reqctx

import "context"

// ReasonHeader is the header a caller explains an offsets change with; it
// is recorded in the change's offsets history entry.
const ReasonHeader = "X-Sluice-Reason"

// MaxReasonBytes bounds a reason: it is stored with every entry.
const MaxReasonBytes = 1024

type reasonKey struct{}

// WithReason returns ctx carrying reason.
func WithReason(ctx context.Context, reason string) context.Context {
	if reason == "" {
		return ctx
	}
	return context.WithValue(ctx, reasonKey{}, reason)
}

// Reason is the reason ctx carries, "" when none.
func Reason(ctx context.Context) string {
	r, _ := ctx.Value(reasonKey{}).(string)
	return r
}
