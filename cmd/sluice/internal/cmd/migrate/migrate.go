// Package migrate is `sluice migrate`: connectors of a Kafka Connect
// cluster moved into Sluice with their offsets.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/selection"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/cmd/sluice/internal/transfer"
)

// Command is `sluice migrate --from URL`: connectors of a Kafka
// Connect cluster recreated in Sluice at their positions.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "migrate",
		Usage: "move connectors from a Kafka Connect cluster (--from) into Sluice with their offsets",
		Flags: append(session.FlagsUnbounded(), // each connector may take --stop-timeout
			&cli.StringFlag{Name: "from", Required: true, Usage: "the Kafka Connect REST URL (host:port or http[s]://host:port)"},
			&cli.StringFlag{Name: "from-user", Usage: "HTTP Basic user on Kafka Connect (its password from --from-password-file)"},
			&cli.StringFlag{Name: "from-password-file", Usage: "file holding the --from-user's password"},
			&cli.StringFlag{Name: "from-ca", Usage: "PEM CAs that verify Kafka Connect's HTTPS certificate (default: the system's)"},
			&cli.StringFlag{Name: "connectors", Value: "*", Usage: "the Kafka Connect connectors whose names match this glob (path.Match: * ? [a-z])"},
			&cli.BoolFlag{Name: "dry-run", Usage: "read and check only, print the plan; change nothing on either side"},
			&cli.BoolFlag{Name: "leave-stopped", Usage: "create the connectors STOPPED in Sluice, whatever their state was"},
			&cli.BoolFlag{Name: "delete-source", Usage: "delete each connector on Kafka Connect once Sluice has created it"},
			&cli.DurationFlag{Name: "stop-timeout", Value: 2 * time.Minute, Usage: "how long to wait for a connector to stop on Kafka Connect"},
		),
		Action: migrate,
	}
}

// migration is one run of migrate: the two clusters and what to do.
type migration struct {
	c            *cli.Context
	from         *api.Client
	to           *transfer.Target
	dry          bool
	leaveStopped bool
	deleteSource bool
	stopTimeout  time.Duration
}

func migrate(c *cli.Context) error {
	glob := c.String("connectors")
	if err := (selection.Criteria{Glob: glob}).Validate(); err != nil {
		return session.Usage("--connectors: %w", err)
	}
	from, err := sourceClient(c)
	if err != nil {
		return err
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	all, err := from.Connectors().List(c.Context)
	if err != nil {
		return fmt.Errorf("list the connectors of Kafka Connect: %w", sourceError(from, err))
	}
	names, _ := selection.Criteria{Glob: glob}.Select(all) // validated above
	if len(names) == 0 {
		return fmt.Errorf("no connector of %s matches %q", from.Address(), glob)
	}
	to, err := transfer.OpenTarget(s)
	if err != nil {
		return err
	}
	m := &migration{c: c, from: from, to: to, dry: c.Bool("dry-run"), leaveStopped: c.Bool("leave-stopped"),
		deleteSource: c.Bool("delete-source"), stopTimeout: c.Duration("stop-timeout")}
	results := make([]transfer.Result, 0, len(names))
	for _, n := range names {
		results = append(results, m.one(n))
	}
	return transfer.PrintResults(s, results)
}

// sourceClient is the REST client of --from, authenticated as the
// --from-* flags say, as --url is by --user and its friends.
func sourceClient(c *cli.Context) (*api.Client, error) {
	cn := session.Conn{URL: c.String("from"), User: c.String("from-user"), PasswordFile: c.String("from-password-file"), CA: c.String("from-ca")}
	if cn.User != "" && cn.PasswordFile == "" {
		return nil, session.Usage("--from-user needs --from-password-file")
	}
	from, err := session.ClientFor("--from", cn)
	var ue session.UsageError
	if err != nil && !errors.As(err, &ue) {
		return nil, fmt.Errorf("--from: %w", err)
	}
	return from, err
}

// unreachableSource is a --from that no server answered; it keeps exit
// code 3 (no server) and names Kafka Connect rather than Sluice.
type unreachableSource struct{ ce *session.ConnectError }

// Error names Kafka Connect and why it was not reached.
func (e unreachableSource) Error() string {
	return fmt.Sprintf("cannot reach Kafka Connect at %s: %v", e.ce.URL, e.ce.Err)
}

// Unwrap is the connection error.
func (e unreachableSource) Unwrap() error { return e.ce }

// sourceError is an error of the --from client in the CLI's words, said
// of Kafka Connect when it reached no server.
func sourceError(from *api.Client, err error) error {
	err = session.Err(err)
	var ce *session.ConnectError
	if errors.As(err, &ce) {
		return unreachableSource{&session.ConnectError{URL: from.Address(), Err: ce.Err}}
	}
	return err
}

// progress writes a progress line (or part of one) on stderr.
func (m *migration) progress(format string, args ...any) {
	fmt.Fprintf(m.c.App.ErrWriter, format, args...)
}

// one migrates one connector: checks, then stop on Kafka Connect, read
// its offsets, create in Sluice, and with --delete-source delete it on
// Kafka Connect. A failure after the stop puts the Kafka Connect
// connector back in the state it was in.
func (m *migration) one(name string) transfer.Result {
	ctx := m.c.Context
	r := transfer.Result{Name: name, Type: api.TypeUnknown}
	fail := func(step string, err error) transfer.Result {
		r.Result, r.Detail = transfer.Failed, step+": "+err.Error()
		m.progress("%s: FAILED at %s\n", name, r.Detail)
		return r
	}
	skip := func(why string) transfer.Result {
		r.Result, r.Detail = transfer.NotMigrated, why
		m.progress("%s: not migrated: %s\n", name, why)
		return r
	}
	mc := transfer.Connector{Name: name}
	var err error
	if mc.Config, err = m.from.Connectors().Config(ctx, name); err != nil {
		return fail("read the config", sourceError(m.from, err))
	}
	r.Class = mc.Config["connector.class"]
	was, typ, err := transfer.TargetState(ctx, m.from, name)
	if err != nil {
		return fail("read the status", sourceError(m.from, err))
	}
	r.Type = typ
	if _, ok := m.to.Plugin(r.Class); !ok {
		return skip("no Sluice agent runs class " + r.Class)
	}
	if m.to.Exists(name) {
		return skip("a connector of that name already exists in Sluice")
	}
	mc.State = was
	if m.leaveStopped {
		mc.State = api.StateStopped
	}
	r.State = mc.State
	// Checked before the stop, so that a config Sluice would refuse does
	// not interrupt the connector on Kafka Connect for nothing.
	if err := m.to.Check(mc); err != nil {
		return fail("check in Sluice", err)
	}
	if m.dry {
		// Offsets read while the connector runs: what a migration now
		// would move, give or take what it processes meanwhile.
		offsets, err := transfer.ReadOffsets(ctx, m.from, name)
		if err != nil {
			return fail("read the offsets", sourceError(m.from, err))
		}
		r.Partitions, r.Result = len(offsets), transfer.WouldMigrate
		m.progress("%s (%s, %s on Kafka Connect, %s): would stop it there and create it %s in Sluice\n", name, r.Type, was, output.Count(r.Partitions, "partition"), mc.State)
		return r
	}
	if err := m.stop(name); err != nil {
		return fail("stop on Kafka Connect", m.putBack(name, was, err))
	}
	offsets, err := transfer.ReadOffsets(ctx, m.from, name)
	if err != nil {
		return fail("read the offsets", m.putBack(name, was, sourceError(m.from, err)))
	}
	mc.Offsets, r.Partitions = offsets, len(offsets)
	m.progress("%s: creating it in Sluice (%s, %s)… ", name, r.Type, output.Count(r.Partitions, "partition"))
	if err := m.to.Create(mc); err != nil {
		m.progress("failed\n")
		return fail("create in Sluice", m.putBack(name, was, err))
	}
	m.progress("created %s\n", mc.State)
	r.Result = transfer.Migrated
	if m.deleteSource {
		if err := m.from.Connectors().Delete(ctx, name); err != nil {
			// Sluice has it now: putting it back would run it twice.
			return fail("delete on Kafka Connect (it is in Sluice, and left STOPPED on Kafka Connect)", sourceError(m.from, err))
		}
		r.Result = transfer.DeletedSource
		m.progress("%s: deleted on Kafka Connect\n", name)
	}
	return r
}

// stop stops the connector on Kafka Connect and waits until its status
// shows it STOPPED with no tasks: only then have its tasks committed their
// last positions, and only then do its offsets stay put.
func (m *migration) stop(name string) error {
	ctx := m.c.Context
	m.progress("%s: stopping it on Kafka Connect… ", name)
	if err := m.from.Connectors().Stop(ctx, name); err != nil {
		m.progress("failed\n")
		return sourceError(m.from, err)
	}
	start := time.Now()
	last := start
	for {
		st, err := m.from.Connectors().Status(ctx, name)
		if err != nil {
			m.progress("failed\n")
			return fmt.Errorf("read the status: %w", sourceError(m.from, err))
		}
		if st.Connector.State == api.StateStopped && len(st.Tasks) == 0 {
			m.progress("STOPPED after %s\n", time.Since(start).Round(100*time.Millisecond))
			return nil
		}
		if time.Since(start) > m.stopTimeout {
			m.progress("timed out\n")
			return fmt.Errorf("not STOPPED with no tasks after %s (the connector is %s with %d tasks)", m.stopTimeout, st.Connector.State, len(st.Tasks))
		}
		if time.Since(last) >= 5*time.Second {
			last = time.Now()
			m.progress("(%s with %d tasks, %s) ", st.Connector.State, len(st.Tasks), time.Since(start).Round(time.Second))
		}
		if err := sleep(ctx, session.PollInterval); err != nil {
			return err
		}
	}
}

// putBack returns the Kafka Connect connector to the state it was in
// before the migration stopped it, and returns cause with what became of
// that.
func (m *migration) putBack(name, was string, cause error) error {
	put := map[string]func(context.Context, string) error{api.StateRunning: m.from.Connectors().Resume, api.StatePaused: m.from.Connectors().Pause}[was]
	if put == nil {
		return fmt.Errorf("%w; it was STOPPED on Kafka Connect and is left so", cause)
	}
	// A fresh context: a Ctrl-C that interrupted the migration must not
	// also leave the connector stopped.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(m.c.Context), 30*time.Second)
	defer cancel()
	if err := put(ctx, name); err != nil {
		return fmt.Errorf("%w; putting it back to %s on Kafka Connect failed too (%v): it is STOPPED there", cause, was, sourceError(m.from, err))
	}
	return fmt.Errorf("%w; put back to %s on Kafka Connect", cause, was)
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
