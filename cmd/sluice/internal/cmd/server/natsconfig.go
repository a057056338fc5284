package server

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/shared/natsperm"
)

// NATSConfig writes a nats-server configuration for one cluster from
// deploy/nats's template, with an nkey for every coordinator and agent.
func NATSConfig() *cli.Command {
	return &cli.Command{
		Name:  "nats-config",
		Usage: "write a nats-server configuration with a coordinator role and a user per agent, and their nkeys (deploy/nats)",
		Flags: []cli.Flag{
			groupIDFlag,
			&cli.StringSliceFlag{Name: "coordinator", Value: cli.NewStringSlice("coordinator"), Usage: "a coordinator user's name (repeat for each)", EnvVars: envflag.Env("coordinator")},
			&cli.StringSliceFlag{Name: "agent", Usage: "an agent's id (repeat for each)", EnvVars: envflag.Env("agent"), Required: true},
			envflag.String("out", "nats-auth", "directory to write nats-server.conf and the nkey seed files to (seeds already there are kept)"),
			envflag.String("nats-listen", "0.0.0.0:4222", "address the NATS server listens on"),
			envflag.String("store-dir", "/data/jetstream", "the NATS server's JetStream directory"),
			envflag.String("server-tls-cert", "", "the NATS server's certificate (PEM): turns TLS on"),
			envflag.String("server-tls-key", "", "key of --server-tls-cert (PEM)"),
			envflag.String("server-tls-ca", "", "CA (PEM) the server verifies client certificates against: requires them"),
		},
		Action: func(c *cli.Context) error {
			cfg := natsperm.Config{GroupID: c.String("group-id"), Listen: c.String("nats-listen"), StoreDir: c.String("store-dir")}
			if c.String("server-tls-ca") != "" && c.String("server-tls-cert") == "" {
				// Dropping it would leave a server the user believes
				// requires client certificates.
				return fmt.Errorf("--server-tls-ca needs --server-tls-cert and --server-tls-key: client certificates come over TLS")
			}
			if cert, key := c.String("server-tls-cert"), c.String("server-tls-key"); cert != "" || key != "" {
				if cert == "" || key == "" {
					return fmt.Errorf("--server-tls-cert and --server-tls-key go together")
				}
				cfg.TLS = &natsperm.TLS{Cert: cert, Key: key, CA: c.String("server-tls-ca"), Verify: c.String("server-tls-ca") != ""}
			}
			files, err := natsperm.Generate(c.String("out"), cfg, c.StringSlice("coordinator"), c.StringSlice("agent"))
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "nats-server configuration: %s\n", files.Config)
			for _, m := range []map[string]string{files.Coordinators, files.Agents} {
				names := make([]string, 0, len(m))
				for n := range m {
					names = append(names, n)
				}
				sort.Strings(names)
				for _, n := range names {
					fmt.Fprintf(w, "%s: --nats-nkey-seed %s\n", n, m[n])
				}
			}
			return nil
		},
	}
}
