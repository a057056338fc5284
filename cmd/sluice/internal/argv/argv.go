// Package argv lets a urfave/cli v2 application take flags before and after
// positional arguments. urfave/cli (like Go's flag package) stops reading
// flags at the first positional argument, so `sluice offsets alter NAME -f
// FILE` would leave -f unread; Reorder rewrites the arguments, before the
// application parses them, so that every flag stands right after the
// command that defines it.
package argv

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// completionFlag is urfave/cli's hidden flag asking for completions; it must
// stay the last argument for urfave/cli to see it.
const completionFlag = "--generate-bash-completion"

// level is one command on the path from the application to the leaf
// command: its flags and subcommands, and the flag arguments meant for it.
type level struct {
	name     string // the command's name as typed; empty for the application
	flags    []cli.Flag
	commands []*cli.Command
	args     []string
}

// Reorder returns args (os.Args: the program first) with each flag moved
// right after the command that defines it — a parent command's flag given
// after a subcommand goes back to the parent — and the positional arguments
// last. A flag no command on the path defines stays with the leaf command,
// whose parser reports it. Everything after "--" is positional, as is "-"
// (stdin). A flag's value is the next argument unless the flag is boolean
// or written --flag=value.
func Reorder(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == completionFlag {
		return args
	}
	path := []*level{{flags: app.Flags, commands: app.Commands}}
	var positional, rest []string
	dashdash := false
	rem := args[1:]
	for i := 0; i < len(rem); i++ {
		a := rem[i]
		if a == "--" {
			dashdash = true
			rest = rem[i+1:]
			break
		}
		if len(a) > 1 && a[0] == '-' {
			owner, takesValue := find(path, a)
			owner.args = append(owner.args, a)
			if takesValue && !strings.Contains(a, "=") && i+1 < len(rem) {
				i++
				owner.args = append(owner.args, rem[i])
			}
			continue
		}
		leaf := path[len(path)-1]
		if len(positional) == 0 {
			if cmd := lookup(leaf.commands, a); cmd != nil {
				path = append(path, &level{name: a, flags: cmd.Flags, commands: cmd.Subcommands})
				continue
			}
		}
		positional = append(positional, a)
	}
	out := []string{args[0]}
	for _, l := range path {
		if l.name != "" {
			out = append(out, l.name)
		}
		out = append(out, l.args...)
	}
	if dashdash {
		out = append(out, "--")
	}
	out = append(out, positional...)
	return append(out, rest...)
}

// find returns the deepest level on the path that defines the flag in arg
// (a leaf's flag shadows a parent's of the same name), and whether the flag
// takes a value. A flag nobody defines belongs to the leaf, as a boolean.
func find(path []*level, arg string) (*level, bool) {
	name := strings.TrimLeft(arg, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	for i := len(path) - 1; i >= 0; i-- {
		for _, f := range path[i].flags {
			for _, n := range f.Names() {
				if n == name {
					return path[i], takesValue(f)
				}
			}
		}
	}
	return path[len(path)-1], false
}

// takesValue reports whether a flag reads a value: every flag kind but the
// boolean ones.
func takesValue(f cli.Flag) bool {
	if v, ok := f.(interface{ TakesValue() bool }); ok {
		return v.TakesValue()
	}
	return true
}

// lookup returns the command among cmds called name or one of its aliases.
func lookup(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
