// Package migrate moves one connector of a Kafka Connect cluster into
// Sluice with its positions: read its config and state there, check that
// Sluice would take it, stop it there and wait until it is STOPPED, read
// its offsets, create it in Sluice at them, and optionally delete it
// there. `sluice migrate` runs it from the CLI, and the coordinator's
// POST /sluice/migrations from the coordinator; each brings its own
// Target, the Sluice the connector is created on.
//
//	read config, state ─► checks (plugin, name free, config valid)
//	     │                      │ dry run: read the offsets, stop here
//	     ▼                      ▼
//	stop there ─► wait STOPPED ─► read offsets ─► create in Sluice ─► [delete there]
//	     └──── a failure from here to the create puts it back as it was ────┘
package migrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// Connector is one connector as it is created in Sluice: its config, the
// state to create it in and its positions.
type Connector struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	// State is RUNNING, PAUSED or STOPPED: the state to create it in.
	State string `json:"state"`
	// Offsets are GET …/offsets' entries, kept as the server wrote them
	// so that no offset goes through a float64.
	Offsets []api.ConnectorOffset `json:"offsets"`
}

// Result is what became of one connector.
type Result struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Class string `json:"class"`
	// Partitions counts the positions carried (or, in a dry run, that
	// would be).
	Partitions int    `json:"partitions"`
	State      string `json:"state"`
	// Result is one of the constants below.
	Result string `json:"result"`
	// Detail says why for a skip or a failure, and which step failed.
	Detail string `json:"detail,omitempty"`
	// Step is the step that failed (Step… constants), for a failure.
	Step string `json:"-"`
}

// IsFailed reports whether the connector failed (a skip is not a failure).
func (r Result) IsFailed() bool { return r.Result == Failed }

// The results.
const (
	Created       = "created"
	Migrated      = "migrated"
	WouldCreate   = "would create"
	WouldMigrate  = "would migrate"
	NotMigrated   = "not migrated"
	Failed        = "failed"
	DeletedSource = "migrated, deleted on the source"
)

// The steps of a migration, as a failure names them.
const (
	StepReadConfig   = "read the config"
	StepReadStatus   = "read the status"
	StepCheck        = "check in Sluice"
	StepReadOffsets  = "read the offsets"
	StepStop         = "stop on Kafka Connect"
	StepCreate       = "create in Sluice"
	StepDeleteSource = "delete on Kafka Connect (it is in Sluice, and left STOPPED on Kafka Connect)"
)

// Target is the Sluice the connectors are created on.
type Target interface {
	// HasPlugin reports whether Sluice runs the connector class (its full
	// name or a short one).
	HasPlugin(class string) bool
	// Exists reports whether Sluice has a connector of that name.
	Exists(name string) bool
	// Check is what a create would refuse, writing nothing: a class
	// without a plugin, a config that does not validate.
	Check(ctx context.Context, c Connector) error
	// Create creates c at its positions in its state, whole or not at
	// all (POST /connectors with initial_state and initial_offsets).
	Create(ctx context.Context, c Connector) error
}

// Options are how a connector is migrated.
type Options struct {
	// DryRun reads and checks only: nothing changes on either side.
	DryRun bool
	// LeaveStopped creates the connector STOPPED, whatever its state was.
	LeaveStopped bool
	// DeleteSource deletes it on Kafka Connect once Sluice has it.
	DeleteSource bool
	// StopTimeout bounds the wait for it to stop on Kafka Connect; Poll
	// is how often its status is read meanwhile.
	StopTimeout, Poll time.Duration
	// Progress is told of each step, in lines and parts of lines (nil:
	// nobody).
	Progress func(format string, args ...any)
	// SourceError words an error of the Kafka Connect client (nil: as it
	// is).
	SourceError func(error) error
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

func (o Options) sourceErr(err error) error {
	if o.SourceError != nil {
		return o.SourceError(err)
	}
	return err
}

// ValidationErrors are the errors a validation of a config found, each
// as "<key>: <error>", sorted.
func ValidationErrors(infos api.ConfigInfos) []string {
	var errs []string
	for _, ci := range infos.Configs {
		for _, e := range ci.Value.Errors {
			errs = append(errs, ci.Value.Name+": "+e)
		}
	}
	slices.Sort(errs)
	return errs
}

// ReadOffsets is GET /connectors/{name}/offsets' entries ([] for none).
func ReadOffsets(ctx context.Context, rc *api.Client, name string) ([]api.ConnectorOffset, error) {
	o, err := rc.Offsets().Get(ctx, name)
	if err != nil {
		return nil, err
	}
	if o.Offsets == nil {
		o.Offsets = []api.ConnectorOffset{}
	}
	return o.Offsets, nil
}

// TargetState is the state a connector is meant to be in, as its status
// shows it — RUNNING, PAUSED or STOPPED — and its type there. A FAILED,
// UNASSIGNED or RESTARTING connector is meant to run (the status shows
// what happened to it, not what its owner asked for), and so is one with
// no status written yet (its type is then unknown).
func TargetState(ctx context.Context, rc *api.Client, name string) (state, typ string, err error) {
	st, err := rc.Connectors().Status(ctx, name)
	var ae *api.Error
	if errors.As(err, &ae) && int(ae.Code) == http.StatusNotFound && strings.Contains(ae.Message, "No status") {
		return api.StateRunning, api.TypeUnknown, nil
	}
	if err != nil {
		return "", "", err
	}
	switch st.Connector.State {
	case api.StatePaused, api.StateStopped:
		return st.Connector.State, st.Type, nil
	}
	return api.StateRunning, st.Type, nil
}

// One migrates connector name from the Kafka Connect cluster of from into
// to, and returns what became of it with the connector as read there (its
// config, the state to create it in, and its offsets once read; in a dry
// run, the positions as they are while it runs). A failure after the stop
// puts the Kafka Connect connector back in the state it was in; every
// step before the failed one stays done.
func One(ctx context.Context, from *api.Client, to Target, name string, o Options) (Result, Connector) {
	r := Result{Name: name, Type: api.TypeUnknown}
	mc := Connector{Name: name}
	fail := func(step string, err error) (Result, Connector) {
		r.Result, r.Step, r.Detail = Failed, step, step+": "+err.Error()
		o.progress("%s: FAILED at %s\n", name, r.Detail)
		return r, mc
	}
	skip := func(why string) (Result, Connector) {
		r.Result, r.Detail = NotMigrated, why
		o.progress("%s: not migrated: %s\n", name, why)
		return r, mc
	}
	var err error
	if mc.Config, err = from.Connectors().Config(ctx, name); err != nil {
		return fail(StepReadConfig, o.sourceErr(err))
	}
	r.Class = mc.Config["connector.class"]
	was, typ, err := TargetState(ctx, from, name)
	if err != nil {
		return fail(StepReadStatus, fmt.Errorf("read the status of %s: %w", name, o.sourceErr(err)))
	}
	r.Type = typ
	if !to.HasPlugin(r.Class) {
		return skip("no Sluice agent runs class " + r.Class)
	}
	if to.Exists(name) {
		return skip("a connector of that name already exists in Sluice")
	}
	mc.State = was
	if o.LeaveStopped {
		mc.State = api.StateStopped
	}
	r.State = mc.State
	// Checked before the stop, so that a config Sluice would refuse does
	// not interrupt the connector on Kafka Connect for nothing.
	if err := to.Check(ctx, mc); err != nil {
		return fail(StepCheck, err)
	}
	if o.DryRun {
		// Offsets read while the connector runs: what a migration now
		// would move, give or take what it processes meanwhile.
		offsets, err := ReadOffsets(ctx, from, name)
		if err != nil {
			return fail(StepReadOffsets, fmt.Errorf("read the offsets of %s: %w", name, o.sourceErr(err)))
		}
		mc.Offsets, r.Partitions, r.Result = offsets, len(offsets), WouldMigrate
		o.progress("%s (%s, %s on Kafka Connect, %s): would stop it there and create it %s in Sluice\n", name, r.Type, was, count(r.Partitions, "partition"), mc.State)
		return r, mc
	}
	if err := stop(ctx, from, name, o); err != nil {
		return fail(StepStop, putBack(ctx, from, name, was, err, o))
	}
	offsets, err := ReadOffsets(ctx, from, name)
	if err != nil {
		return fail(StepReadOffsets, putBack(ctx, from, name, was, fmt.Errorf("read the offsets of %s: %w", name, o.sourceErr(err)), o))
	}
	mc.Offsets, r.Partitions = offsets, len(offsets)
	o.progress("%s: creating it in Sluice (%s, %s)… ", name, r.Type, count(r.Partitions, "partition"))
	if err := to.Create(ctx, mc); err != nil {
		o.progress("failed\n")
		return fail(StepCreate, putBack(ctx, from, name, was, err, o))
	}
	o.progress("created %s\n", mc.State)
	r.Result = Migrated
	if o.DeleteSource {
		if err := from.Connectors().Delete(ctx, name); err != nil {
			// Sluice has it now: putting it back would run it twice.
			return fail(StepDeleteSource, o.sourceErr(err))
		}
		r.Result = DeletedSource
		o.progress("%s: deleted on Kafka Connect\n", name)
	}
	return r, mc
}

// count is "1 partition", "2 partitions".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// stop stops the connector on Kafka Connect and waits until its status
// shows it STOPPED with no tasks: only then have its tasks committed their
// last positions, and only then do its offsets stay put.
func stop(ctx context.Context, from *api.Client, name string, o Options) error {
	o.progress("%s: stopping it on Kafka Connect… ", name)
	if err := from.Connectors().Stop(ctx, name); err != nil {
		o.progress("failed\n")
		return o.sourceErr(err)
	}
	start := time.Now()
	last := start
	for {
		st, err := from.Connectors().Status(ctx, name)
		if err != nil {
			o.progress("failed\n")
			return fmt.Errorf("read the status: %w", o.sourceErr(err))
		}
		if st.Connector.State == api.StateStopped && len(st.Tasks) == 0 {
			o.progress("STOPPED after %s\n", time.Since(start).Round(100*time.Millisecond))
			return nil
		}
		if time.Since(start) > o.StopTimeout {
			o.progress("timed out\n")
			return fmt.Errorf("not STOPPED with no tasks after %s (the connector is %s with %d tasks)", o.StopTimeout, st.Connector.State, len(st.Tasks))
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			o.progress("(%s with %d tasks, %s) ", st.Connector.State, len(st.Tasks), time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

// putBack returns the Kafka Connect connector to the state it was in
// before the migration stopped it, and returns cause with what became of
// that.
func putBack(ctx context.Context, from *api.Client, name, was string, cause error, o Options) error {
	put := map[string]func(context.Context, string) error{api.StateRunning: from.Connectors().Resume, api.StatePaused: from.Connectors().Pause}[was]
	if put == nil {
		return fmt.Errorf("%w; it was STOPPED on Kafka Connect and is left so", cause)
	}
	// A fresh context: a cancel that interrupted the migration must not
	// also leave the connector stopped.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := put(ctx, name); err != nil {
		return fmt.Errorf("%w; putting it back to %s on Kafka Connect failed too (%v): it is STOPPED there", cause, was, o.sourceErr(err))
	}
	return fmt.Errorf("%w; put back to %s on Kafka Connect", cause, was)
}
