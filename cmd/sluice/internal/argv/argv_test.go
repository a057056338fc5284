package argv

import (
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testApp has the shape of sluice's client commands: a parent with the
// connection flags and leaves with flags of their own.
func testApp(got *[]string, flags map[string]string) *cli.App {
	record := func(c *cli.Context) error {
		*got = c.Args().Slice()
		for _, n := range []string{"url", "file", "reset-offsets", "o"} {
			if c.IsSet(n) {
				flags[n] = c.String(n)
			}
		}
		return nil
	}
	return &cli.App{
		Name:  "sluice",
		Flags: []cli.Flag{&cli.StringFlag{Name: "o"}},
		Commands: []*cli.Command{{
			Name:  "offsets",
			Flags: []cli.Flag{&cli.StringFlag{Name: "url"}},
			Subcommands: []*cli.Command{
				{Name: "alter", Action: record, Flags: []cli.Flag{&cli.StringFlag{Name: "file", Aliases: []string{"f"}}}},
				{Name: "delete", Aliases: []string{"rm"}, Action: record, Flags: []cli.Flag{&cli.BoolFlag{Name: "reset-offsets"}}},
			},
		}},
	}
}

func TestReorder(t *testing.T) {
	for _, tt := range []struct {
		args      string
		wantArgs  []string
		wantFlags map[string]string
	}{
		{"offsets alter file-src -f offsets.json", []string{"file-src"}, map[string]string{"file": "offsets.json"}},
		{"offsets alter -f offsets.json file-src", []string{"file-src"}, map[string]string{"file": "offsets.json"}},
		{"offsets --url X alter a -f=f.json", []string{"a"}, map[string]string{"url": "X", "file": "f.json"}},
		{"offsets alter a --url X -f -", []string{"a"}, map[string]string{"url": "X", "file": "-"}},
		{"offsets alter a b --url=X -o yaml", []string{"a", "b"}, map[string]string{"url": "X", "o": "yaml"}},
		{"offsets rm a --reset-offsets b", []string{"a", "b"}, map[string]string{"reset-offsets": "true"}},
		{"offsets rm --reset-offsets a -- --url -x", []string{"a", "--url", "-x"}, map[string]string{"reset-offsets": "true"}},
		// Flags given before the command that defines them.
		{"--url X offsets alter a -f f.json", []string{"a"}, map[string]string{"url": "X", "file": "f.json"}},
		{"offsets -f f.json --url=X alter a", []string{"a"}, map[string]string{"url": "X", "file": "f.json"}},
		// A positional argument that is a subcommand's name is not one once
		// another positional argument came first.
		{"offsets alter x alter", []string{"x", "alter"}, map[string]string{}},
	} {
		t.Run(tt.args, func(t *testing.T) {
			var got []string
			flags := map[string]string{}
			app := testApp(&got, flags)
			args := append([]string{"sluice"}, strings.Fields(tt.args)...)
			if err := app.Run(Reorder(app, args)); err != nil {
				t.Fatalf("run %v: %v", Reorder(app, args), err)
			}
			if !slices.Equal(got, tt.wantArgs) {
				t.Errorf("args %q, want %q", got, tt.wantArgs)
			}
			for k, v := range tt.wantFlags {
				if flags[k] != v {
					t.Errorf("--%s = %q, want %q (all: %v)", k, flags[k], v, flags)
				}
			}
			if len(flags) != len(tt.wantFlags) {
				t.Errorf("flags %v, want %v", flags, tt.wantFlags)
			}
		})
	}
}

// An undefined flag stays with the leaf, whose parser refuses it; a
// completion request stays last.
func TestReorderUnknownAndCompletion(t *testing.T) {
	var got []string
	app := testApp(&got, map[string]string{})
	app.Writer, app.ErrWriter = &strings.Builder{}, &strings.Builder{}
	if err := app.Run(Reorder(app, []string{"sluice", "offsets", "alter", "a", "--nope"})); err == nil ||
		!strings.Contains(err.Error(), "flag provided but not defined: -nope") {
		t.Fatalf("undefined flag: %v", err)
	}
	in := []string{"sluice", "offsets", "alter", "a", "--generate-bash-completion"}
	if out := Reorder(app, in); !slices.Equal(out, in) {
		t.Fatalf("completion request rewritten to %q", out)
	}
	// The words of a completion request are reordered as any, the
	// request kept last.
	in = []string{"sluice", "offsets", "alter", "--url", "h:1", "--generate-bash-completion"}
	if out := Reorder(app, in); !slices.Equal(out, []string{"sluice", "offsets", "--url", "h:1", "alter", "--generate-bash-completion"}) {
		t.Fatalf("completion request reordered to %q", out)
	}
}
