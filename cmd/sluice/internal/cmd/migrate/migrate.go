// Package migrate is `sluice migrate`: connectors of a Kafka Connect
// cluster moved into Sluice with their offsets.
package migrate

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/selection"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/cmd/sluice/internal/transfer"
	shared "github.com/sluice-io/sluice/shared/migrate"
	"github.com/sluice-io/sluice/shared/secretfile"
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
			&cli.BoolFlag{Name: "on-coordinator", Usage: "have the coordinator read --from and migrate (POST /sluice/migrations; admin role): for a Kafka Connect this host cannot reach; the coordinator must allow the URL (--migrate-allow-url)"},
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
	if c.Bool("on-coordinator") {
		return onCoordinator(c)
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

// one migrates one connector (shared/migrate): checks, then stop on
// Kafka Connect, read its offsets, create in Sluice, and with
// --delete-source delete it on Kafka Connect. A failure after the stop
// puts the Kafka Connect connector back in the state it was in.
func (m *migration) one(name string) transfer.Result {
	r, _ := shared.One(m.c.Context, m.from, m.to.Migrating(), name, shared.Options{DryRun: m.dry, LeaveStopped: m.leaveStopped,
		DeleteSource: m.deleteSource, StopTimeout: m.stopTimeout, Poll: session.PollInterval, Progress: m.progress,
		SourceError: func(err error) error { return sourceError(m.from, err) }})
	return r
}

// onCoordinator is migrate --on-coordinator: the coordinator reads --from
// and migrates, with --from-user's credentials if any, and answers what
// became of each connector.
func onCoordinator(c *cli.Context) error {
	if c.String("from-ca") != "" {
		return session.Usage("--from-ca does not go with --on-coordinator: the coordinator verifies Kafka Connect with its own CAs")
	}
	req := api.MigrationRequest{URL: c.String("from"), Connectors: c.String("connectors"), LeaveStopped: c.Bool("leave-stopped"),
		DeleteSource: c.Bool("delete-source"), StopTimeout: c.Duration("stop-timeout").String(), User: c.String("from-user")}
	if req.User != "" {
		if c.String("from-password-file") == "" {
			return session.Usage("--from-user needs --from-password-file")
		}
		pw, err := secretfile.Read(c.String("from-password-file"))
		if err != nil {
			return session.Usage("--from-password-file: %w", err)
		}
		req.Password = pw
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	res, err := session.Call2(s, s.API.Fleet().Migrate, req, c.Bool("dry-run"))
	if err != nil {
		return err
	}
	results := make([]transfer.Result, 0, len(res.Connectors))
	for _, mc := range res.Connectors {
		results = append(results, transfer.Result{Name: mc.Name, Type: mc.Type, Class: mc.Class, Partitions: mc.OffsetsCount, State: mc.State,
			Result: mc.Result, Detail: mc.Detail, Step: mc.Step})
	}
	return transfer.PrintResults(s, results)
}
