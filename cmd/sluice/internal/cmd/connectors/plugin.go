package connectors

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/complete"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// describePluginCommand is `describe plugin CLASS`: the plugin's config
// definition, GET /connector-plugins/{plugin}/config, as a table.
func describePluginCommand() *cli.Command {
	return &cli.Command{
		Name: "plugin", Aliases: []string{"plugins"}, ArgsUsage: "CLASS",
		Usage:        "show a connector plugin's config keys: type, whether required, default, importance, documentation",
		Action:       describePlugin,
		BashComplete: complete.Plugins,
	}
}

// pluginKey is one config key of `describe plugin`.
type pluginKey = api.ConfigKeyInfo

func describePlugin(c *cli.Context) error {
	if c.NArg() != 1 {
		return session.Usage("give exactly one plugin class (or its short name)")
	}
	class := c.Args().First()
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	keys, err := session.Call(s, s.API.Plugins().Config, class)
	if err != nil {
		return err
	}
	if keys == nil {
		keys = []pluginKey{}
	}
	return s.Print(keys, func() *output.Rows {
		t := output.NewRows("NAME", "TYPE", "REQUIRED", "DEFAULT", "IMPORTANCE", "GROUP", "DOCUMENTATION")
		for _, k := range keys {
			t.Add(k.Name, k.Type, strconv.FormatBool(k.Required), defaultValue(k.DefaultValue), k.Importance, deref(k.Group), output.OneLine(k.Documentation, 80))
		}
		return t
	})
}

// defaultValue is a key's default as a cell: "-" for none, `""` for the
// empty string (a default that is there, and empty).
func defaultValue(v *string) string {
	switch {
	case v == nil:
		return ""
	case *v == "":
		return `""`
	}
	return *v
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
