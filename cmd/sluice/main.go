// Command sluice runs Sluice: the coordinator, an agent, or both with an
// embedded NATS server and Kafka broker for a first run (dev), and operator
// commands that call the REST API.
package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/shared/version"
)

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", err)
		os.Exit(1)
	}
}

func newApp() *cli.App {
	return &cli.App{
		Name:    "sluice",
		Usage:   "run Kafka Connect-style connectors with a coordinator and agents",
		Version: version.Version + " (" + version.Commit + ")",
		Commands: []*cli.Command{
			coordinatorCommand(),
			agentCommand(),
			devCommand(),
			natsConfigCommand(),
			connectorsCommand(),
			offsetsCommand(),
			auditCommand(),
			authCommand(),
		},
	}
}
