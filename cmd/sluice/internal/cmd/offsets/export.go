package offsets

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/configdiff"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/selection"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/cmd/sluice/internal/transfer"
)

// exportFormat names the version of the export document; import refuses
// any other.
const exportFormat = "sluice.offsets-export/v1"

// ExportDoc is the document `sluice offsets export` writes and `sluice
// offsets import` reads.
type ExportDoc struct {
	Format     string               `json:"format"`
	ExportedAt time.Time            `json:"exported_at"`
	From       string               `json:"from"`
	Connectors []transfer.Connector `json:"connectors"`
}

// offsetsExportCommand is `sluice offsets export NAME…`.
func offsetsExportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write connectors' configs, target states and offsets to one JSON document (NAME may be a glob)",
		ArgsUsage: "NAME…",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Usage: "write the document to this file (mode 0600: configs may hold secrets) instead of stdout"},
		},
		Action: exportOffsets,
	}
}

func exportOffsets(c *cli.Context) error {
	if c.NArg() == 0 {
		return session.Usage("name at least one connector (or a glob: 'orders-*')")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	names, err := expandNames(s, c.Args().Slice())
	if err != nil {
		return err
	}
	doc := ExportDoc{Format: exportFormat, ExportedAt: time.Now().UTC().Truncate(time.Second), From: s.API.Address(), Connectors: []transfer.Connector{}}
	for _, n := range names {
		m, err := transfer.ReadConnector(c.Context, s.API, n)
		if err != nil {
			// A document missing a connector that was asked for would
			// be imported as if it were complete: write none.
			return fmt.Errorf("export %s: %w", n, err)
		}
		doc.Connectors = append(doc.Connectors, m)
		fmt.Fprintf(c.App.ErrWriter, "exported %s (%s, %s)\n", n, m.State, output.Count(len(m.Offsets), "partition"))
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the export: %w", err)
	}
	data = append(data, '\n')
	if path := c.String("file"); path != "" && path != "-" {
		return writeFileAtomic(path, data)
	}
	_, err = s.W.Write(data)
	return err
}

// expandNames turns the arguments into connector names: a name is itself
// (one that does not exist is the server's 404 to report), a glob is the
// existing connectors it matches, and a glob that matches none is an
// error, as a typo in it would otherwise export nothing silently.
func expandNames(s *session.Session, args []string) ([]string, error) {
	var existing []string
	var names []string
	for _, a := range args {
		if !strings.ContainsAny(a, "*?[") {
			names = append(names, a)
			continue
		}
		if existing == nil {
			var err error
			if existing, err = session.Call0(s, s.API.Connectors().List); err != nil {
				return nil, fmt.Errorf("list the connectors: %w", err)
			}
		}
		matched, err := selection.Criteria{Glob: a}.Select(existing)
		if err != nil {
			return nil, session.UsageError{Err: err}
		}
		if len(matched) == 0 {
			return nil, fmt.Errorf("no connector matches %q", a)
		}
		names = append(names, matched...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so that a failed export never leaves half a document where a
// previous one was.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".sluice-export-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// offsetsImportCommand is `sluice offsets import -f FILE`.
func offsetsImportCommand() *cli.Command {
	return &cli.Command{
		Name:  "import",
		Usage: "create the connectors of an export document at its offsets and states",
		Flags: []cli.Flag{
			session.FileFlag(),
			&cli.BoolFlag{Name: "dry-run", Usage: "check each connector (name free, class known, config valid) and print the plan; write nothing"},
			&cli.StringSliceFlag{Name: "rename", Usage: "create connector OLD as NEW (OLD=NEW; repeatable)"},
		},
		Action: importOffsets,
	}
}

func importOffsets(c *cli.Context) error {
	renames, err := parseRenames(c.StringSlice("rename"))
	if err != nil {
		return session.UsageError{Err: err}
	}
	data, err := session.ReadFileOrStdin(c.String("file"))
	if err != nil {
		return err
	}
	doc, err := parseExport(data)
	if err != nil {
		return fmt.Errorf("%s: %w", c.String("file"), err)
	}
	for old := range renames {
		if !slices.ContainsFunc(doc.Connectors, func(m transfer.Connector) bool { return m.Name == old }) {
			return session.Usage("--rename %s=…: the document has no connector %s", old, old)
		}
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	t, err := transfer.OpenTarget(s)
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	results := make([]transfer.Result, 0, len(doc.Connectors))
	for _, m := range doc.Connectors {
		if n, ok := renames[m.Name]; ok {
			m = renamed(m, n)
		}
		results = append(results, importOne(c, t, m, dry))
	}
	return transfer.PrintResults(s, results)
}

// importOne creates one connector of the document (or, dry, checks that
// it could), with a progress line on stderr.
func importOne(c *cli.Context, t *transfer.Target, m transfer.Connector, dry bool) transfer.Result {
	r := transfer.Result{Name: m.Name, Type: t.TypeOf(m), Class: m.Config["connector.class"], Partitions: len(m.Offsets), State: m.State}
	verb := "importing"
	if dry {
		verb = "checking"
	}
	fmt.Fprintf(c.App.ErrWriter, "%s %s (%s, %s)… ", verb, m.Name, r.Type, output.Count(r.Partitions, "partition"))
	var err error
	if dry {
		err = t.Check(m)
		r.Result = transfer.WouldCreate
	} else {
		err = t.Create(m)
		r.Result = transfer.Created
	}
	if err != nil {
		r.Result, r.Detail = transfer.Failed, err.Error()
		fmt.Fprintf(c.App.ErrWriter, "FAILED: %v\n", err)
		return r
	}
	fmt.Fprintf(c.App.ErrWriter, "%s %s\n", r.Result, m.State)
	return r
}

// parseExport reads and checks an export document.
func parseExport(data []byte) (ExportDoc, error) {
	var doc ExportDoc
	if err := session.DecodeNumbers(data, &doc); err != nil {
		return doc, fmt.Errorf("not an export document: %w", err)
	}
	if doc.Format != exportFormat {
		return doc, fmt.Errorf("format %q: want %q (written by sluice offsets export)", doc.Format, exportFormat)
	}
	seen := map[string]bool{}
	for i, m := range doc.Connectors {
		switch {
		case m.Name == "":
			return doc, fmt.Errorf("connector %d has no name", i)
		case seen[m.Name]:
			return doc, fmt.Errorf("connector %s is in the document twice", m.Name)
		case m.Config["connector.class"] == "":
			return doc, fmt.Errorf("connector %s has no connector.class", m.Name)
		}
		switch m.State {
		case "RUNNING", "PAUSED", "STOPPED":
		default:
			return doc, fmt.Errorf("connector %s: state %q: want RUNNING, PAUSED or STOPPED", m.Name, m.State)
		}
		seen[m.Name] = true
	}
	return doc, nil
}

// parseRenames reads --rename OLD=NEW flags.
func parseRenames(flags []string) (map[string]string, error) {
	renames := map[string]string{}
	for _, f := range flags {
		old, n, ok := strings.Cut(f, "=")
		if !ok || old == "" || n == "" {
			return nil, fmt.Errorf("--rename %q: want OLD=NEW", f)
		}
		if _, dup := renames[old]; dup {
			return nil, fmt.Errorf("--rename %s given twice", old)
		}
		renames[old] = n
	}
	return renames, nil
}

// renamed is m under a new name; the config's own "name", which Kafka
// Connect requires to match, follows.
func renamed(m transfer.Connector, name string) transfer.Connector {
	m.Name, m.Config = name, configdiff.With(m.Config, "name", name)
	return m
}
