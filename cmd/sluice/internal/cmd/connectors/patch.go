package connectors

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/configdiff"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Patch changes some keys of a connector's config with PATCH
// /connectors/{name}/config (Kafka Connect 3.8+, KIP-477): a key set to
// null is removed, keys not named are kept.
func Patch() *cli.Command {
	return &cli.Command{
		Name:  "patch",
		Usage: "change some keys of a connector's config",
		Flags: session.Flags(),
		Subcommands: []*cli.Command{{
			Name: "connector", Aliases: []string{"conn"}, ArgsUsage: "NAME", BashComplete: complete.Connectors,
			Usage: "set (--set k=v) and remove (--unset k) config keys",
			Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "set", Usage: "set a key: k=v (repeat for more)"},
				&cli.StringSliceFlag{Name: "unset", Usage: "remove a key (repeat for more)"},
				session.WaitFlag(),
			},
			Action: patchConnector,
		}},
	}
}

func patchConnector(c *cli.Context) error {
	name, err := session.NameArg(c)
	if err != nil {
		return err
	}
	patch := map[string]*string{}
	for _, kv := range c.StringSlice("set") {
		k, v, err := splitSet(kv)
		if err != nil {
			return err
		}
		patch[k] = &v
	}
	for _, k := range c.StringSlice("unset") {
		if _, dup := patch[k]; dup {
			return session.Usage("--set and --unset both name %q", k)
		}
		patch[k] = nil
	}
	if len(patch) == 0 {
		return session.Usage("give --set k=v or --unset k")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	before, err := session.Call(s, s.API.Connectors().Config, name)
	if err != nil {
		return err
	}
	info, err := session.Call2(s, s.API.Connectors().PatchConfig, name, patch)
	if err != nil {
		return err
	}
	changes := configdiff.Diff(before, info.Config)
	result := applyResult{Connector: name, Action: "configured", Changes: changes}
	if len(changes) == 0 {
		result.Action = "unchanged"
	}
	err = s.Print(result, func() *output.Rows {
		t := output.NewRows("CONNECTOR", "CHANGE")
		for _, k := range changes {
			t.Add(name, k.String())
		}
		if len(changes) == 0 {
			t.Add(name, "unchanged")
		}
		return t
	})
	if err != nil || !c.Bool("wait") || heldByIntent(s, result) {
		return err
	}
	return s.WaitRunning([]string{name})
}

// splitSet reads one --set k=v: the key and the value, which may be empty
// or hold more "=".
func splitSet(kv string) (key, value string, err error) {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return "", "", session.Usage("--set %q: want key=value", kv)
	}
	return k, v, nil
}
