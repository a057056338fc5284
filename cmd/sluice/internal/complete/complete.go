// Package complete is the shell completion of the names a command takes,
// asked of the server: the scripts of `sluice completion` run the CLI
// with --generate-bash-completion, and urfave/cli calls the command's
// BashComplete, which prints one candidate a line. Nothing is printed when
// the server cannot be asked: a completion fails quietly.
package complete

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Connectors completes connector names (and flags after a "-").
func Connectors(c *cli.Context) {
	complete(c, func(s *session.Session) ([]string, error) {
		return s.API.Connectors().List(s.Ctx())
	})
}

// Plugins completes plugin classes and their short names.
func Plugins(c *cli.Context) {
	complete(c, func(s *session.Session) ([]string, error) {
		plugins, err := s.API.Plugins().ListAll(s.Ctx())
		return session.PluginNames(plugins), err
	})
}

// complete prints the names list answers, sorted and without those given
// already; or the command's flags when the word being completed is one.
func complete(c *cli.Context, list func(*session.Session) ([]string, error)) {
	// The word being completed is the one before the request, which
	// urfave/cli reads from os.Args as well.
	if n := len(os.Args); n > 2 && strings.HasPrefix(os.Args[n-2], "-") {
		cli.DefaultCompleteWithFlags(c.Command)(c)
		return
	}
	s, err := session.OpenCompletion(c)
	if err != nil {
		return
	}
	names, err := list(s)
	if err != nil {
		return
	}
	given := c.Args().Slice()
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		if !slices.Contains(given, n) {
			fmt.Fprintln(c.App.Writer, n)
		}
	}
}
