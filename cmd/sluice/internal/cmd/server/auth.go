// Package server is the commands that run Sluice's processes — coordinator,
// agent, dev (and dev kafka) — with their flags and the fx graphs they
// start, and the ones that make their credentials and configuration:
// auth, nats-config, leader-key.
package server

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/coordinator"
)

// Auth makes entries of a REST auth file (docs/security.md).
func Auth() *cli.Command {
	return &cli.Command{
		Name:  "auth",
		Usage: "make credentials for a REST auth file (--rest-auth-file)",
		Subcommands: []*cli.Command{
			{
				Name:  "hash-password",
				Usage: "read a password from stdin (its first line) and print its bcrypt hash for password_bcrypt",
				Action: func(c *cli.Context) error {
					line, err := bufio.NewReader(os.Stdin).ReadString('\n')
					if err != nil && line == "" {
						return fmt.Errorf("read the password from stdin: %w", err)
					}
					hash, err := coordinator.HashPassword([]byte(strings.TrimRight(line, "\r\n")))
					if err != nil {
						return err
					}
					fmt.Fprintln(c.App.Writer, hash)
					return nil
				},
			},
			{
				Name:  "new-token",
				Usage: "print a new bearer token (give it to the client) and its hash (token_sha256 in the auth file)",
				Action: func(c *cli.Context) error {
					token, hash, err := coordinator.NewToken()
					if err != nil {
						return err
					}
					fmt.Fprintf(c.App.Writer, "token: %s\ntoken_sha256: %s\n", token, hash)
					return nil
				},
			},
		},
	}
}
