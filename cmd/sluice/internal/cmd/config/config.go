// Package config is `sluice config …`, the CLI's contexts (named
// connection settings), and `sluice completion`.
package config

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/contexts"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Command manages the CLI's contexts (named connection settings).
func Command() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "manage contexts: named URLs and credentials, in $SLUICE_CONFIG or the user's config dir (sluice/config.yaml)",
		Subcommands: []*cli.Command{
			{
				Name: "set-context", Usage: "add or change a context (only the flags given change)", ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "url", Usage: "coordinator REST URL"},
					&cli.StringFlag{Name: "user", Usage: "HTTP Basic user"},
					&cli.StringFlag{Name: "password-file", Usage: "file holding the user's password"},
					&cli.StringFlag{Name: "token-file", Usage: "file holding a bearer token or JWT"},
					&cli.StringFlag{Name: "ca", Usage: "PEM CAs that verify the coordinator's HTTPS certificate"},
				},
				Action: withConfig(func(c *cli.Context, f *contexts.File, name string) (bool, error) {
					ctx := f.Contexts[name]
					for flag, field := range map[string]*string{"url": &ctx.URL, "user": &ctx.User,
						"password-file": &ctx.PasswordFile, "token-file": &ctx.TokenFile, "ca": &ctx.CA} {
						if c.IsSet(flag) {
							*field = c.String(flag)
						}
					}
					if ctx.URL == "" {
						return false, session.Usage("context %q needs --url", name)
					}
					_, existed := f.Contexts[name]
					f.Set(name, ctx)
					if f.CurrentContext == "" {
						f.CurrentContext = name
					}
					verb := "created"
					if existed {
						verb = "changed"
					}
					fmt.Fprintf(c.App.Writer, "context %s %s\n", name, verb)
					return true, nil
				}),
			},
			{
				Name: "use-context", Usage: "make a context the current one", ArgsUsage: "NAME",
				Action: withConfig(func(c *cli.Context, f *contexts.File, name string) (bool, error) {
					if _, err := f.Get(name); err != nil {
						return false, err
					}
					f.CurrentContext = name
					fmt.Fprintf(c.App.Writer, "switched to context %s\n", name)
					return true, nil
				}),
			},
			{
				Name: "delete-context", Usage: "delete a context", ArgsUsage: "NAME",
				Action: withConfig(func(c *cli.Context, f *contexts.File, name string) (bool, error) {
					if err := f.Delete(name); err != nil {
						return false, err
					}
					fmt.Fprintf(c.App.Writer, "context %s deleted\n", name)
					return true, nil
				}),
			},
			{
				Name: "current-context", Usage: "print the current context's name",
				Action: withConfig(func(c *cli.Context, f *contexts.File, _ string) (bool, error) {
					if f.CurrentContext == "" {
						return false, fmt.Errorf("no current context (sluice config use-context NAME)")
					}
					fmt.Fprintln(c.App.Writer, f.CurrentContext)
					return false, nil
				}),
			},
			{
				Name: "get-contexts", Usage: "list the contexts; * marks the current one",
				Flags: []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "table", Usage: "output format: table, json or yaml"}},
				Action: withConfig(func(c *cli.Context, f *contexts.File, _ string) (bool, error) {
					format, err := output.Parse(c.String("output"))
					if err != nil {
						return false, session.UsageError{Err: err}
					}
					return false, output.Write(c.App.Writer, format, f, func() *output.Rows {
						t := output.NewRows("CURRENT", "NAME", "URL", "USER", "CA")
						for _, n := range f.Names() {
							cur := ""
							if n == f.CurrentContext {
								cur = "*"
							}
							ctx := f.Contexts[n]
							t.Add(cur, n, ctx.URL, ctx.User, ctx.CA)
						}
						return t
					})
				}),
			},
		},
	}
}

// withConfig loads the config file, runs fn with the NAME argument (when
// the command takes one: ArgsUsage is NAME), and saves the file if fn
// changed it.
func withConfig(fn func(c *cli.Context, f *contexts.File, name string) (bool, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		name := ""
		if c.Command.ArgsUsage == "NAME" {
			if c.NArg() != 1 {
				return session.Usage("give exactly one context name")
			}
			name = c.Args().First()
		} else if c.NArg() > 0 {
			return session.Usage("%s takes no arguments", c.Command.Name)
		}
		path, err := contexts.Path()
		if err != nil {
			return err
		}
		f, err := contexts.Load(path)
		if err != nil {
			return err
		}
		changed, err := fn(c, f, name)
		if err != nil || !changed {
			return err
		}
		return f.Save(path)
	}
}
