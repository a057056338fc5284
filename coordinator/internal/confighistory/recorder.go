package confighistory

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// Change says what a config write is, for its history entries: the
// operation (an api.Config* constant), a detail, and who asked when it is
// not the request's caller (a rollout's creator). The writer that records
// the entries notes their ids in it (Recorded).
type Change struct {
	Operation string
	Detail    string
	// Principal, when set, names who asked instead of the caller of the
	// context.
	Principal string

	mu       sync.Mutex
	recorded []string
}

// Recorded are the ids of the entries recorded for the writes made under
// this change so far.
func (c *Change) Recorded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.recorded...)
}

func (c *Change) note(ids ...string) {
	c.mu.Lock()
	c.recorded = append(c.recorded, ids...)
	c.mu.Unlock()
}

type changeKey struct{}

// WithChange returns ctx carrying ch: the config writes made under ctx are
// recorded as ch says. Without one, a write is recorded by what it does:
// a create, a put or a delete.
func WithChange(ctx context.Context, ch *Change) context.Context {
	return context.WithValue(ctx, changeKey{}, ch)
}

// OrChange returns ctx carrying ch unless it carries a change already:
// the operation that asked for a write names it (a restore's PUT is a
// restore, not a put).
func OrChange(ctx context.Context, ch *Change) context.Context {
	if ChangeFrom(ctx) != nil {
		return ctx
	}
	return WithChange(ctx, ch)
}

// ChangeFrom is the change ctx carries, nil when none.
func ChangeFrom(ctx context.Context) *Change {
	ch, _ := ctx.Value(changeKey{}).(*Change)
	return ch
}

// Appender writes entries (Log.Append).
type Appender interface {
	Append(ctx context.Context, entries ...api.ConfigHistoryEntry) ([]api.ConfigHistoryEntry, error)
}

// Configs are the connectors' configs as this coordinator follows them
// (store.ConfigState).
type Configs interface {
	Get(name string) (store.Connector, bool)
}

// RecorderConfig is what a Recorder works with.
type RecorderConfig struct {
	Log     Appender
	Configs Configs
	// SecretKeys are the keys of config whose values are secrets: those
	// its connector's plugin, the framework or its converters declare
	// PASSWORD.
	SecretKeys func(ctx context.Context, config map[string]string) []string
	// Principal names the caller of ctx, as the audit trail does.
	Principal func(ctx context.Context) string
	Logger    *slog.Logger
}

// Recorder records the config writes made through it.
type Recorder struct{ cfg RecorderConfig }

// NewRecorder makes a Recorder.
func NewRecorder(cfg RecorderConfig) *Recorder {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.SecretKeys == nil {
		cfg.SecretKeys = func(context.Context, map[string]string) []string { return nil }
	}
	return &Recorder{cfg: cfg}
}

// appendTimeout bounds making and writing the entries of a change
// already made.
const appendTimeout = 30 * time.Second

// Apply runs apply with cmds and, once it committed them, records an entry
// for each connector config they create, replace or delete. The config
// each had before is read before apply runs; the caller holds the
// connectors' locks, so nothing changes them in between. A failed record
// is logged, not returned: the change is made, and a failure would say it
// was not.
func (r *Recorder) Apply(ctx context.Context, apply func(ctx context.Context, cmds ...store.Command) error, cmds ...store.Command) error {
	type write struct {
		name  string
		after map[string]string
		del   bool
	}
	var writes []write
	for _, cmd := range cmds {
		switch c := cmd.(type) {
		case store.CreateConnector:
			writes = append(writes, write{name: c.Name, after: c.Config})
		case store.PutConnectorConfig:
			writes = append(writes, write{name: c.Name, after: c.Config})
		case store.DeleteConnector:
			writes = append(writes, write{name: c.Name, del: true})
		}
	}
	before := make([]map[string]string, len(writes))
	for i, w := range writes {
		if c, ok := r.cfg.Configs.Get(w.name); ok {
			before[i] = c.Config
		}
	}
	if err := apply(ctx, cmds...); err != nil || len(writes) == 0 {
		return err
	}
	// The change is made: its entries are made and written even when the
	// caller went away (a Java plugin's secret keys are asked of an agent).
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), appendTimeout)
	defer cancel()
	ch := ChangeFrom(ctx)
	principal := r.cfg.Principal(ctx)
	if ch != nil && ch.Principal != "" {
		principal = ch.Principal
	}
	var entries []api.ConfigHistoryEntry
	for i, w := range writes {
		if w.del && before[i] == nil || !w.del && before[i] != nil && maps.Equal(before[i], w.after) {
			// A delete of what was never written (a rollback's), or a
			// config written again as it was: no change to record.
			continue
		}
		what := &Change{Operation: api.ConfigPut}
		switch {
		case ch != nil:
			what = &Change{Operation: ch.Operation, Detail: ch.Detail}
		case w.del:
			what.Operation = api.ConfigDelete
		case before[i] == nil:
			what.Operation = api.ConfigCreate
		}
		var secretBefore, secretAfter []string
		if before[i] != nil {
			secretBefore = r.cfg.SecretKeys(actx, before[i])
		}
		if w.after != nil {
			secretAfter = r.cfg.SecretKeys(actx, w.after)
		}
		entries = append(entries, newEntry(w.name, what, principal, before[i], w.after, secretBefore, secretAfter))
	}
	if len(entries) == 0 {
		return nil
	}
	written, err := r.cfg.Log.Append(actx, entries...)
	if err != nil {
		for _, e := range entries {
			r.cfg.Logger.Error("a config change was made but its config history entry could not be written", "connector", e.Connector, "operation", e.Operation, "err", err)
		}
		return nil
	}
	if ch != nil {
		for _, e := range written {
			ch.note(e.ID)
		}
	}
	return nil
}
