package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/shared/leasetrust"
	"github.com/sluice-io/sluice/shared/natsconn"
)

// Who may lead: the leader key coordinators sign their leases with, the
// public keys every process trusts, and the switch that runs without either
// on a NATS without authentication (docs/ha.md, docs/security.md).
var (
	leaderKeyFlag     = envflag.String("leader-key-file", "", "file holding the leader key (32 bytes or more, e.g. from openssl rand -hex 32) this coordinator signs its leader lease with; the same file on every coordinator. Agents and other coordinators follow only leases a trusted key signed. sluice dev makes one in its data dir")
	leaderTrustFlag   = envflag.String("leader-trusted-keys-file", "", "file of the leader public keys (one base64 key a line, as sluice leader-key public prints) whose leases this process follows; list two while rotating the leader key. A coordinator also trusts its own --leader-key-file")
	insecureNATSFlag  = &cli.BoolFlag{Name: "insecure-nats", Usage: "start on a NATS without authentication although no leader key is pinned: anyone who can reach NATS could then lead the cluster (development only; warned about every minute)", EnvVars: envflag.Env("insecure-nats")}
	leaderKeyOutFlag  = &cli.StringFlag{Name: "out", Usage: "file to write the new leader key to (mode 0600)", Required: true}
	leaderKeyFileFlag = &cli.StringFlag{Name: "key-file", Usage: "the leader key file", Required: true}
)

// insecureWarnEvery is how often a process started with --insecure-nats
// says so again.
const insecureWarnEvery = time.Minute

// checkNATSTrust refuses to start a process that authenticates to NATS with
// nothing and trusts no pinned leader key: on such a NATS anyone could
// write the lease and be obeyed. --insecure-nats starts it anyway, warning
// every minute until ctx ends.
func checkNATSTrust(ctx context.Context, c *cli.Context, auth natsconn.Auth, pinned bool, log *slog.Logger) error {
	if pinned || auth.Describe() != (natsconn.Auth{}).Describe() {
		return nil
	}
	if !c.Bool("insecure-nats") {
		return fmt.Errorf("refusing to start: NATS is used without authentication (no --nats-creds, --nats-nkey-seed, --nats-user or --nats-token-file) " +
			"and no leader key is pinned (--leader-trusted-keys-file, or --leader-key-file on a coordinator), so anyone who can reach NATS could take the leader lease and be obeyed. " +
			"Pin the leader key (docs/ha.md), authenticate to NATS (docs/security.md), or pass --insecure-nats to run anyway (development only)")
	}
	if log == nil {
		log = slog.Default()
	}
	warn := func() {
		log.Warn("running with --insecure-nats: NATS is used without authentication and no leader key is pinned; anyone who can reach NATS can take the leader lease")
	}
	warn()
	go func() {
		tick := time.NewTicker(insecureWarnEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				warn()
			}
		}
	}()
	return nil
}

// LeaderKey makes and inspects leader keys.
func LeaderKey() *cli.Command {
	return &cli.Command{
		Name:  "leader-key",
		Usage: "make a leader key, or print the public key agents and coordinators trust",
		Subcommands: []*cli.Command{
			{
				Name:  "new",
				Usage: "write a new leader key to --out and print its public key",
				Flags: []cli.Flag{leaderKeyOutFlag},
				Action: func(c *cli.Context) error {
					s, err := leasetrust.WriteKey(c.String("out"))
					if err != nil {
						return err
					}
					fmt.Fprintln(c.App.Writer, s.Public())
					return nil
				},
			},
			{
				Name:  "public",
				Usage: "print the public key of --key-file, a line of a --leader-trusted-keys-file",
				Flags: []cli.Flag{leaderKeyFileFlag},
				Action: func(c *cli.Context) error {
					s, err := leasetrust.ReadSigner(c.String("key-file"))
					if err != nil {
						return err
					}
					fmt.Fprintln(c.App.Writer, s.Public())
					return nil
				},
			},
		},
	}
}
