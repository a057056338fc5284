package connectors

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/configdiff"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/shared/migrate"
)

// Apply creates or updates connectors from files, as kcctl apply.
func Apply() *cli.Command {
	return &cli.Command{
		Name:  "apply",
		Usage: "create connectors, or update their config, from JSON or YAML files",
		Flags: append(session.Flags(),
			&cli.StringSliceFlag{Name: "file", Aliases: []string{"f"}, Required: true,
				Usage: "a file ({\"name\",\"config\"} or a properties map with name; JSON or YAML), a directory of *.json, *.yaml, *.yml, or - for stdin (repeat for more)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "validate the configs and show what would change; change nothing"},
			session.WaitFlag(),
		),
		Action: apply,
	}
}

// spec is one connector a file asks for.
type spec struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	file   string
}

// applyResult is what apply did, or would do, to one connector.
type applyResult struct {
	Connector string              `json:"connector"`
	File      string              `json:"file"`
	Action    string              `json:"action"` // created, configured, unchanged; would … under --dry-run
	Changes   []configdiff.Change `json:"changes,omitempty"`
	Errors    []string            `json:"validation_errors,omitempty"`
	Error     string              `json:"error,omitempty"`
}

// readSpecs reads the connectors of -f's files and directories.
func readSpecs(paths []string) ([]spec, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if p == "-" || (err == nil && !st.IsDir()) {
			files = append(files, p)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", p, err)
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", p, err)
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".json" || ext == ".yaml" || ext == ".yml") {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
	}
	var specs []spec
	for _, f := range files {
		data, err := session.ReadFileOrStdin(f)
		if err != nil {
			return nil, err
		}
		s, err := parseSpec(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		s.file = f
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, errors.New("-f: no connector file found")
	}
	return specs, nil
}

// parseSpec reads one connector, JSON or YAML (YAML is a superset): either
// {"name": …, "config": {…}}, as POST /connectors takes, or a flat
// properties map with a name key, as Kafka Connect's properties files.
// Values that are not strings (port: 8080) become their text.
func parseSpec(data []byte) (spec, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return spec{}, fmt.Errorf("neither JSON nor YAML: %w", err)
	}
	props := doc
	if cfg, ok := doc["config"].(map[string]any); ok {
		props = cfg
	}
	s := spec{Config: map[string]string{}}
	for k, v := range props {
		if v == nil {
			return spec{}, fmt.Errorf("config key %q has no value", k)
		}
		if _, nested := v.(map[string]any); nested {
			return spec{}, fmt.Errorf("config key %q: want a value, not a map", k)
		}
		s.Config[k] = fmt.Sprint(v)
	}
	name, _ := doc["name"].(string)
	if name == "" {
		name = s.Config["name"]
	}
	if name == "" {
		return spec{}, errors.New("no connector name (a name key)")
	}
	if n, ok := s.Config["name"]; ok && n != name {
		return spec{}, fmt.Errorf("name %q and config name %q differ", name, n)
	}
	s.Name = name
	return s, nil
}

func apply(c *cli.Context) error {
	specs, err := readSpecs(c.StringSlice("file"))
	if err != nil {
		return session.UsageError{Err: err}
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	dry := c.Bool("dry-run")
	var results []applyResult
	failed := 0
	for _, sp := range specs {
		r := applyOne(s, sp, dry)
		if r.Error != "" || len(r.Errors) > 0 {
			failed++
		}
		results = append(results, r)
	}
	err = s.Print(results, func() *output.Rows {
		t := output.NewRows("CONNECTOR", "ACTION", "CHANGES")
		for _, r := range results {
			var parts []string
			for _, k := range r.Changes {
				parts = append(parts, k.String())
			}
			for _, e := range r.Errors {
				parts = append(parts, "invalid: "+e)
			}
			if r.Error != "" {
				parts = append(parts, r.Error)
			}
			t.Add(r.Connector, r.Action, strings.Join(parts, "; "))
		}
		return t
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d connectors failed", failed, len(specs))
	}
	if !c.Bool("wait") || dry {
		return nil
	}
	var wait []string
	for _, r := range results {
		if r.Action == "created" || !heldByIntent(s, r) {
			wait = append(wait, r.Connector)
		}
	}
	if len(wait) == 0 {
		return nil
	}
	return s.WaitRunning(wait)
}

// heldByIntent reports whether a connector apply did not create is paused
// or stopped — kept so by its owner, which a new config does not change —
// and says so: --wait does not wait for it to run, as it would not before
// it is resumed. An unchanged connector that runs, or is on its way, is
// waited for like the others.
func heldByIntent(s *session.Session, r applyResult) bool {
	st, err := s.API.Connectors().Status(s.Ctx(), r.Connector)
	if err != nil {
		return false // no status yet: wait, and the wait says what it sees
	}
	if state := st.Connector.State; state == api.StatePaused || state == api.StateStopped {
		s.Progress("%s: %s and %s: not waited for (sluice resume %s runs it)", r.Connector, r.Action, state, r.Connector)
		return true
	}
	return false
}

// applyOne creates the connector if it is missing, or puts its config if
// it differs; under dry it validates the config and says what it would do.
func applyOne(s *session.Session, sp spec, dry bool) applyResult {
	r := applyResult{Connector: sp.Name, File: sp.file}
	current, err := session.Call(s, s.API.Connectors().Config, sp.Name)
	exists := err == nil
	if err != nil && !session.IsStatus(err, http.StatusNotFound) {
		r.Action, r.Error = "failed", err.Error()
		return r
	}
	want := sp.Config
	if _, ok := want["name"]; !ok && exists {
		// The stored config carries the name; a file need not.
		want = configdiff.With(want, "name", sp.Name)
	}
	r.Changes = configdiff.Diff(current, want)
	if dry {
		r.Action = "would create"
		if exists {
			r.Action = "would configure"
			if len(r.Changes) == 0 {
				r.Action = "unchanged"
			}
		}
		errs, err := Validate(s, configdiff.With(want, "name", sp.Name))
		if err != nil {
			r.Error = err.Error()
		}
		r.Errors = errs
		return r
	}
	switch {
	case !exists:
		if _, err := session.Call(s, s.API.Connectors().Create, api.CreateConnectorRequest{Name: sp.Name, Config: sp.Config}); err != nil {
			r.Action, r.Error = "failed", err.Error()
			return r
		}
		r.Action = "created"
	case len(r.Changes) == 0:
		r.Action = "unchanged"
	default:
		if _, _, err := s.API.Connectors().PutConfig(s.Ctx(), sp.Name, want); err != nil {
			err = s.Err(err)
			r.Action, r.Error = "failed", err.Error()
			return r
		}
		r.Action = "configured"
	}
	return r
}

// Validate runs PUT /connector-plugins/{class}/config/validate and returns
// each invalid key's errors.
func Validate(s *session.Session, cfg map[string]string) ([]string, error) {
	class := cfg["connector.class"]
	if class == "" {
		return []string{"connector.class: missing"}, nil
	}
	infos, err := session.Call2(s, s.API.Plugins().Validate, class, cfg)
	if err != nil {
		return nil, err
	}
	return migrate.ValidationErrors(infos), nil
}
