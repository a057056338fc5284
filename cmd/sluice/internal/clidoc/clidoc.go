// Package clidoc writes the reference of a CLI from its command tree:
// every command and subcommand with its aliases, usage and flags (their
// environment variables and defaults), as Markdown. docs/cli.md's
// reference section is its output, and a test keeps the two the same.
package clidoc

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Begin and End enclose the generated reference in a Markdown file.
const (
	Begin = "<!-- BEGIN GENERATED REFERENCE: go test ./cmd/sluice -run TestCLIReference -update -->"
	End   = "<!-- END GENERATED REFERENCE -->"
)

// Reference writes app's reference: a section per command, in the order
// of the command tree, hidden commands and help left out.
func Reference(w io.Writer, app *cli.App) {
	for _, c := range visible(app.Commands) {
		command(w, []string{app.Name}, c, nil)
	}
}

// Splice is doc with the text between Begin and End replaced by ref; an
// error if doc does not have both markers, in that order.
func Splice(doc, ref string) (string, error) {
	i := strings.Index(doc, Begin)
	j := strings.Index(doc, End)
	if i < 0 || j < i {
		return "", fmt.Errorf("the document has no %q … %q section", Begin, End)
	}
	return doc[:i+len(Begin)] + "\n\n" + ref + "\n" + doc[j:], nil
}

// visible are the commands a user is shown: not hidden, not help.
func visible(cmds []*cli.Command) []*cli.Command {
	var out []*cli.Command
	for _, c := range cmds {
		if !c.Hidden && c.Name != "help" {
			out = append(out, c)
		}
	}
	return out
}

// command writes c's section, then its subcommands'. inherited are the
// flags of the groups above it, which it takes too.
func command(w io.Writer, path []string, c *cli.Command, inherited []string) {
	path = append(slices.Clone(path), c.Name)
	full := strings.Join(path, " ")
	fmt.Fprintf(w, "### %s\n\n", full)
	usage := full
	subs := visible(c.Subcommands)
	switch {
	case len(subs) > 0:
		usage += " COMMAND"
	case c.ArgsUsage != "":
		usage += " " + c.ArgsUsage
	}
	fmt.Fprintf(w, "`%s`", usage)
	if c.Usage != "" {
		fmt.Fprintf(w, ": %s", c.Usage)
	}
	fmt.Fprintln(w)
	if len(c.Aliases) > 0 {
		fmt.Fprintf(w, "\nAlso spelled: %s.\n", quoteAll(c.Aliases))
	}
	if len(inherited) > 0 {
		fmt.Fprintf(w, "\nTakes the flags of `%s` too.\n", strings.Join(path[:len(path)-1], " "))
	}
	flags(w, c.Flags)
	if len(subs) > 0 {
		names := make([]string, len(subs))
		for i, s := range subs {
			names[i] = s.Name
		}
		fmt.Fprintf(w, "\nCommands: %s.\n", quoteAll(names))
	}
	fmt.Fprintln(w)
	if len(c.Flags) > 0 {
		inherited = append(slices.Clone(inherited), c.Name)
	}
	for _, s := range subs {
		command(w, path, s, inherited)
	}
}

// flags writes a table of flags: names, environment variable, default,
// usage.
func flags(w io.Writer, fs []cli.Flag) {
	var rows [][4]string
	for _, f := range fs {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		names := make([]string, 0, len(f.Names()))
		for _, n := range f.Names() {
			if len(n) == 1 {
				names = append(names, "`-"+n+"`")
			} else {
				names = append(names, "`--"+n+"`")
			}
		}
		var env, def, usage string
		if df, ok := f.(cli.DocGenerationFlag); ok {
			env = quoteAll(df.GetEnvVars())
			if df.TakesValue() {
				def = df.GetValue()
				if t := df.GetDefaultText(); t != "" {
					def = t
				}
			}
			usage = df.GetUsage()
		}
		if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
			usage = "(required) " + usage
		}
		if def != "" {
			def = "`" + def + "`"
		}
		rows = append(rows, [4]string{strings.Join(names, ", "), env, def, cellText(usage)})
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| flag | env | default | usage |\n|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
}

// quoteAll is names as code, comma-separated.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

// cellText is s safe in a Markdown table cell.
func cellText(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
