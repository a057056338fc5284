// Package logs is `sluice logs get|set`: log levels through
// /admin/loggers.
package logs

import (
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Command reads and sets log levels through /admin/loggers.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "logs",
		Usage: "read and set log levels (/admin/loggers)",
		Flags: session.Flags(),
		Subcommands: []*cli.Command{
			{Name: "get", ArgsUsage: "[LOGGER]", Usage: "the loggers' levels, or one logger's", Action: logsGet},
			{
				Name: "set", ArgsUsage: "LOGGER LEVEL", Usage: "set a logger's level (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF)",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "scope", Value: "worker", Usage: "worker: the coordinator that answers; cluster: every coordinator and agent"}},
				Action: logsSet,
			},
		},
	}
}

func logsGet(c *cli.Context) error {
	if c.NArg() > 1 {
		return session.Usage("give at most one logger")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	levels := map[string]api.LoggerLevel{}
	if name := c.Args().First(); name != "" {
		one, err := session.Call(s, s.API.Admin().Logger, name)
		if err != nil {
			return err
		}
		levels[name] = one
	} else if levels, err = session.Call0(s, s.API.Admin().Loggers); err != nil {
		return err
	}
	return s.Print(levels, func() *output.Rows {
		names := make([]string, 0, len(levels))
		for n := range levels {
			names = append(names, n)
		}
		slices.Sort(names)
		t := output.NewRows("LOGGER", "LEVEL", "LAST MODIFIED")
		for _, n := range names {
			mod := ""
			if l := levels[n].LastModified; l != nil {
				mod = time.UnixMilli(*l).UTC().Format(time.RFC3339)
			}
			t.Add(n, levels[n].Level, mod)
		}
		return t
	})
}

func logsSet(c *cli.Context) error {
	if c.NArg() != 2 {
		return session.Usage("give a logger and a level")
	}
	logger, level := c.Args().Get(0), strings.ToUpper(c.Args().Get(1))
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	changed := []string{}
	switch scope := c.String("scope"); scope {
	case "worker":
		if changed, err = session.Call2(s, s.API.Admin().SetLoggerLevel, logger, level); err != nil {
			return err
		}
	case "cluster":
		if err := s.Err(s.API.Admin().SetClusterLoggerLevel(s.Ctx(), logger, level)); err != nil {
			return err
		}
	default:
		return session.Usage("--scope %q: want worker or cluster", scope)
	}
	if changed == nil {
		changed = []string{}
	}
	result := map[string]any{"logger": logger, "level": level, "scope": c.String("scope"), "changed": changed}
	return s.Print(result, func() *output.Rows {
		t := output.NewRows("LOGGER", "LEVEL", "SCOPE")
		t.Add(logger, level, c.String("scope"))
		return t
	})
}
