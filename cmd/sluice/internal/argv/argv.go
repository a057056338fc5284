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
// after a subcommand goes back to the parent, a subcommand's flag given
// before it goes to it — and the positional arguments last. A flag defined
// on several commands of the path goes to the deepest; one that no command
// on the path defines stays with the leaf command, whose parser reports
// it. Everything after "--" is positional, as is "-" (stdin). A flag's
// value is the next argument unless the flag is boolean or written
// --flag=value.
func Reorder(app *cli.App, args []string) []string {
	if n := len(args); n >= 2 && args[n-1] == completionFlag {
		// A completion request: the words typed so far are reordered
		// too (so that a --url among them reaches its command, which
		// asks that server for names), the flag kept last.
		return append(Reorder(app, args[:n-1]), completionFlag)
	}
	if len(args) < 2 {
		return args
	}
	path := []*level{{flags: app.Flags, commands: app.Commands}}
	var flags [][]string // each flag with its value, as given
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
			tokens := []string{a}
			if takesValue(path, a) && !strings.Contains(a, "=") && i+1 < len(rem) {
				i++
				tokens = append(tokens, rem[i])
			}
			flags = append(flags, tokens)
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
	// The path is known now: give each flag to its command.
	for _, tokens := range flags {
		owner := owner(path, flagName(tokens[0]))
		owner.args = append(owner.args, tokens...)
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

// flagName is the name in "-f", "--flag" or "--flag=value".
func flagName(arg string) string {
	name := strings.TrimLeft(arg, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	return name
}

// owner is the deepest level on the path that defines the flag (a leaf's
// flag shadows a parent's of the same name), or the leaf.
func owner(path []*level, name string) *level {
	for i := len(path) - 1; i >= 0; i-- {
		if findFlag(path[i].flags, name) != nil {
			return path[i]
		}
	}
	return path[len(path)-1]
}

// takesValue reports whether the flag in arg reads a value: as the
// deepest command of the path so far defines it, or else, for a flag
// given before its subcommand, as any command below defines it. A flag
// nobody defines is taken as boolean.
func takesValue(path []*level, arg string) bool {
	name := flagName(arg)
	for i := len(path) - 1; i >= 0; i-- {
		if f := findFlag(path[i].flags, name); f != nil {
			return flagTakesValue(f)
		}
	}
	if f := findInTree(path[len(path)-1].commands, name); f != nil {
		return flagTakesValue(f)
	}
	return false
}

// findFlag is the flag of flags called name, or nil.
func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

// findInTree is the first flag called name of the commands or their
// subcommands, or nil.
func findInTree(cmds []*cli.Command, name string) cli.Flag {
	for _, c := range cmds {
		if f := findFlag(c.Flags, name); f != nil {
			return f
		}
		if f := findInTree(c.Subcommands, name); f != nil {
			return f
		}
	}
	return nil
}

// flagTakesValue reports whether a flag reads a value: every flag kind but
// the boolean ones.
func flagTakesValue(f cli.Flag) bool {
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
