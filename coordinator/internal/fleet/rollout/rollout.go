// Package rollout drives health-gated config rollouts (POST
// /sluice/rollouts, docs/operations.md, "Health-gated config rollouts") on the leader: a
// patch is merged into many connectors' configs batch by batch, each batch
// held to a health gate before the next starts.
//
//	batch pending ─► applying (start generation, each connector's
//	  was_running recorded) ─► each connector: after written unless
//	  already there, and marked, in ONE transaction
//	  ─► verifying ─► healthy for running_for ─► done ─► next batch
//	                 └► unhealthy (a FAILED task beyond the limit, or the
//	                    bound passes) ─► failed: pause, or roll back
//
// The rollout and its progress live in the fleet topic. Every step is one
// store.Stores.Apply of the step's transition (store/fleetcommands.go) and
// the config it writes, so a new leader resumes at the step the last one
// committed, and never finds a config written that its rollout does not
// record. The controller reads a snapshot through narrow ports, decides
// with an injected clock and emits commands: each transition is
// table-tested without Kafka.
package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/fleet/lifecycle"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// DefaultRunningFor is health.running_for when a request leaves it out:
// long enough for a task that fails on its first records to show it.
const DefaultRunningFor = 30 * time.Second

// Configs is the config topic as this coordinator applied it.
type Configs interface {
	Get(name string) (store.Connector, bool)
}

// Statuses are the connectors' and tasks' statuses.
type Statuses interface {
	Connector(name string) (store.InstanceStatus, bool)
	Task(name string, task int) (store.InstanceStatus, bool)
}

// Rollouts are the rollouts the fleet topic holds (store.FleetState).
type Rollouts interface {
	Rollout(id string) (store.Rollout, bool)
	Rollouts() []store.Rollout
	Changed() <-chan struct{}
}

// Store writes commands in one transaction (store.Stores).
type Store interface {
	Apply(ctx context.Context, cmds ...store.Command) error
}

// Locks serialise the changes of each connector (connlock.Table).
type Locks interface {
	Lock(name string) (unlock func())
}

// Config is what a Controller needs.
type Config struct {
	Configs  Configs
	Statuses Statuses
	Rollouts Rollouts
	Store    Store
	Locks    Locks
	// Clock is the time every decision is made at.
	Clock func() time.Time
	// NewID names a rollout made at a time.
	NewID func(now time.Time) string
	// Generation is the highest task generation issued so far.
	Generation func() int64
	// Validate checks a connector config as a config write does (a REST
	// error when it is invalid).
	Validate func(ctx context.Context, config map[string]string) error
	// CheckSize refuses a config too large for the config topic.
	CheckSize func(ctx context.Context, name string, config map[string]string) error
	// WriteFailed turns a failed write into the REST error answered.
	WriteFailed func(err error, what string, args ...any) error
	// Tick is how often the controller looks at rollouts when nothing in
	// the fleet topic changed (the health gate needs the clock); default
	// 250ms.
	Tick   time.Duration
	Logger *slog.Logger
}

// Controller creates and drives rollouts. Its mutex is the rollouts' own
// serialisation: every change of a rollout record — a REST call's or a
// step of the loop — reads, decides and writes under it, so none is lost.
//
// Lock order: Controller.mu, then a connector's lock (connlock), then the
// store's fleet write lock. Nothing that holds a connector's lock takes
// Controller.mu.
type Controller struct {
	cfg  Config
	mu   sync.Mutex
	kind lifecycle.Kind[store.Rollout] // Pause, Resume, Abort
}

// New makes a controller.
func New(cfg Config) *Controller {
	if cfg.Tick <= 0 {
		cfg.Tick = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Controller{cfg: cfg}
	c.kind = lifecycle.Kind[store.Rollout]{
		Noun:        "Rollout",
		Mu:          &c.mu,
		Get:         func(id string) (store.Rollout, bool) { return c.cfg.Rollouts.Rollout(id) },
		State:       func(r store.Rollout) string { return r.State },
		Running:     store.RolloutRunning,
		Paused:      store.RolloutPaused,
		Clock:       cfg.Clock,
		Apply:       func(ctx context.Context, cmds ...store.Command) error { return c.cfg.Store.Apply(ctx, cmds...) },
		WriteFailed: cfg.WriteFailed,
		PauseCmd:    func(id string, at time.Time) store.Command { return store.PauseRollout{ID: id, At: at} },
		ResumeCmd:   func(id string, at time.Time) store.Command { return store.ResumeRollout{ID: id, At: at} },
		AbortCmd:    func(id string, at time.Time) store.Command { return store.AbortRollout{ID: id, At: at} },
	}
	return c
}

// CheckSpec checks what a rollout asks for beyond its connectors, and
// fills in the defaults.
func CheckSpec(spec *store.RolloutSpec) error {
	if len(spec.Patch) == 0 {
		return api.Errorf(api.CodeBadRequest, "The patch is empty: give the config keys to set (or null to remove)")
	}
	if spec.Health.RunningFor == "" {
		spec.Health.RunningFor = DefaultRunningFor.String()
	}
	if d, err := time.ParseDuration(spec.Health.RunningFor); err != nil || d < 0 {
		return api.Errorf(api.CodeBadRequest, "Invalid health.running_for '%s': give a duration such as 30s or 2m", spec.Health.RunningFor)
	}
	if spec.Health.MaxFailedTasks < 0 {
		return api.Errorf(api.CodeBadRequest, "Invalid health.max_failed_tasks %d: must be 0 or more", spec.Health.MaxFailedTasks)
	}
	switch spec.OnFailure {
	case "":
		spec.OnFailure = "pause"
	case "pause", "rollback":
	default:
		return api.Errorf(api.CodeBadRequest, "Invalid on_failure '%s': must be pause or rollback", spec.OnFailure)
	}
	return nil
}

// BatchSizes turns batch specs into the sizes of the batches of n
// connectors: a positive integer, a share "P%" (1 to 100, of n, rounded
// up) or "rest". Once the specs are used up, what is left is one last
// batch; batches that would be empty (the connectors ran out) are dropped.
func BatchSizes(specs []json.RawMessage, n int) ([]int, error) {
	var sizes []int
	left := n
	for _, raw := range specs {
		size, err := batchSize(raw, n, left)
		if err != nil {
			return nil, err
		}
		if size = min(size, left); size > 0 {
			sizes = append(sizes, size)
			left -= size
		}
	}
	if left > 0 {
		sizes = append(sizes, left)
	}
	return sizes, nil
}

// batchSize is the size one batch spec asks for.
func batchSize(raw json.RawMessage, n, left int) (int, error) {
	bad := api.Errorf(api.CodeBadRequest, "Invalid batch %s: give a number of connectors (1 or more), a share such as \"25%%\", or \"rest\"", strings.TrimSpace(string(raw)))
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		k, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || k < 1 {
			return 0, bad
		}
		return k, nil
	}
	if s == "rest" {
		return left, nil
	}
	pct, ok := strings.CutSuffix(s, "%")
	p, err := strconv.ParseFloat(pct, 64)
	if !ok || err != nil || p <= 0 || p > 100 {
		return 0, bad
	}
	return int(math.Ceil(p * float64(n) / 100)), nil
}

// MergePatch is config with patch merged in as PATCH
// /connectors/{name}/config merges it: a nil value removes the key, and
// the name is kept.
func MergePatch(name string, config map[string]string, patch map[string]*string) map[string]string {
	merged := maps.Clone(config)
	for k, v := range patch {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	if _, ok := merged["name"]; !ok {
		merged["name"] = name
	}
	return merged
}

// errorMessage is the message of a REST error, or the error's text.
func errorMessage(err error) string {
	if e, ok := err.(*api.Error); ok {
		return e.Message
	}
	return err.Error()
}

// Create makes a rollout of spec (checked by CheckSpec) over names (the
// selector's connectors, sorted, each checked by the caller): it computes
// every connector's config before and after the patch, validates each (any
// invalid: 400 listing them, nothing recorded) and records the rollout,
// which Run then drives. A connector may be in one rollout in progress
// only (409).
func (c *Controller) Create(ctx context.Context, spec store.RolloutSpec, names []string, principal string) (store.Rollout, error) {
	r, err := c.Plan(ctx, spec, names, principal)
	if err != nil {
		return store.Rollout{}, err
	}
	r.ID = c.cfg.NewID(r.CreatedAt)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkOverlap(names); err != nil {
		return store.Rollout{}, err
	}
	if err := c.cfg.Store.Apply(ctx, store.StartRollout{Rollout: r}); err != nil {
		return store.Rollout{}, c.cfg.WriteFailed(err, "Failed to record rollout %s", r.ID)
	}
	return r, nil
}

// Plan is what Create would record, without recording it (a dry run): the
// batches with every connector's config before and after the patch, each
// validated (any invalid: the same 400), and the same 409 for a connector
// another rollout in progress holds. The plan has no ID.
func (c *Controller) Plan(ctx context.Context, spec store.RolloutSpec, names []string, principal string) (store.Rollout, error) {
	sizes, err := BatchSizes(spec.Batches, len(names))
	if err != nil {
		return store.Rollout{}, err
	}
	conns := make([]store.RolloutConnector, 0, len(names))
	var invalid []string
	for _, n := range names {
		cur, ok := c.cfg.Configs.Get(n)
		if !ok {
			return store.Rollout{}, api.Errorf(api.CodeNotFound, "Connector %s not found", n)
		}
		after := MergePatch(n, cur.Config, spec.Patch)
		if err := c.cfg.Validate(ctx, after); err != nil {
			invalid = append(invalid, n+": "+errorMessage(err))
			continue
		}
		if err := c.cfg.CheckSize(ctx, n, after); err != nil {
			invalid = append(invalid, n+": "+errorMessage(err))
			continue
		}
		conns = append(conns, store.RolloutConnector{Name: n, Before: cur.Config, After: after, State: store.BatchPending})
	}
	if len(invalid) > 0 {
		return store.Rollout{}, api.Errorf(api.CodeBadRequest, "The patch leaves %d of the %d matched connectors with an invalid config; nothing was applied:\n%s",
			len(invalid), len(names), strings.Join(invalid, "\n"))
	}
	now := c.cfg.Clock().UTC()
	r := store.Rollout{State: store.RolloutRunning, Spec: spec, Principal: principal, CreatedAt: now, UpdatedAt: now}
	for _, size := range sizes {
		r.Batches = append(r.Batches, store.RolloutBatch{State: store.BatchPending, Connectors: conns[:size:size]})
		conns = conns[size:]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return r, c.checkOverlap(names)
}

// checkOverlap refuses connectors that a rollout still in progress holds;
// the caller holds c.mu.
func (c *Controller) checkOverlap(names []string) error {
	for _, r := range c.cfg.Rollouts.Rollouts() {
		if r.Final() {
			continue
		}
		for _, n := range r.Names() {
			if _, found := slices.BinarySearch(names, n); found {
				return api.Errorf(api.CodeConflict, "Connector %s is already in rollout %s (%s): wait for it to end or abort it", n, r.ID, r.State)
			}
		}
	}
	return nil
}

// NotFound is the 404 of an unknown rollout.
func NotFound(id string) error { return lifecycle.NotFound("Rollout", id) }

// Pause stops a running rollout before its next step (a connector being
// written is written).
func (c *Controller) Pause(ctx context.Context, id string) (store.Rollout, error) {
	return c.kind.Pause(ctx, id)
}

// Resume goes on with a paused rollout where it stopped; a batch that had
// failed its health gate is verified again, from the start of its
// running_for.
func (c *Controller) Resume(ctx context.Context, id string) (store.Rollout, error) {
	return c.kind.Resume(ctx, id)
}

// Abort stops a rollout at once and for good; what it applied stays
// applied.
func (c *Controller) Abort(ctx context.Context, id string) (store.Rollout, error) {
	return c.kind.Abort(ctx, id)
}

// describeConnector names a rollout connector in an error.
func describeConnector(name, what string, err error) string {
	return fmt.Sprintf("%s: %s: %s", name, what, errorMessage(err))
}
