package connectors

import (
	"context"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/selection"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"

	"github.com/sluice-io/sluice/api"
)

// serverFlag makes pause, resume, stop and restart send their selection to
// the coordinator in one call (POST /sluice/connectors/{action}) rather
// than one call per connector.
func serverFlag() cli.Flag {
	return &cli.BoolFlag{Name: "server", Usage: "select and act on the coordinator, in one call (NAME… or --match; not -e)"}
}

// serverAction is an action with --server: one bulk call, a line per
// connector of its results, and an error when any failed. It returns the
// connectors acted on, for --wait; restart are a restart's options.
func serverAction(s *session.Session, name string, crit selection.Criteria, restart api.RestartOptions) ([]string, error) {
	if crit.Regex != "" {
		return nil, session.Usage("--server selects by names or --match, not -e")
	}
	f := s.API.Fleet()
	bulk := map[string]func(context.Context, api.Selector) (api.BulkResults, error){
		"pause": f.PauseConnectors, "resume": f.ResumeConnectors, "stop": f.StopConnectors,
		"restart": func(ctx context.Context, sel api.Selector) (api.BulkResults, error) {
			return f.RestartConnectors(ctx, sel, restart) // as the per-connector restart does
		},
	}[name]
	res, err := session.Call(s, bulk, api.Selector{Names: crit.Names, Match: crit.Glob})
	if err != nil {
		return nil, err
	}
	var done []string
	t := output.NewRows("CONNECTOR", "STATUS", "MESSAGE")
	for _, r := range res.Results {
		if r.Status < 300 {
			done = append(done, r.Connector)
		}
		t.Add(r.Connector, strconv.Itoa(r.Status), output.OrDash(session.NotFound(r.Status, r.Message)))
	}
	if err := s.Print(res, func() *output.Rows { return t }); err != nil {
		return nil, err
	}
	if failed := len(res.Results) - len(done); failed > 0 {
		return done, fmt.Errorf("%d of %d connectors failed", failed, len(res.Results))
	}
	return done, nil
}
