package connectors

import (
	"encoding/json"
	"fmt"
	"net/http"
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
// connectors acted on, for resume's --wait.
func serverAction(s *session.Session, name string, crit selection.Criteria) ([]string, error) {
	if crit.Regex != "" {
		return nil, session.Usage("--server selects by names or --match, not -e")
	}
	path := "/sluice/connectors/" + name
	if name == "restart" {
		path += "?includeTasks=true" // as the per-connector restart does
	}
	body, err := json.Marshal(api.BulkRequest{Selector: api.Selector{Names: crit.Names, Match: crit.Glob}})
	if err != nil {
		return nil, fmt.Errorf("encode the selection: %w", err)
	}
	data, _, err := s.Do(http.MethodPost, path, body)
	if err != nil {
		return nil, err
	}
	var res api.BulkResults
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("read the results: %w", err)
	}
	var done []string
	t := output.NewRows("CONNECTOR", "STATUS", "MESSAGE")
	for _, r := range res.Results {
		if r.Status < 300 {
			done = append(done, r.Connector)
		}
		t.Add(r.Connector, strconv.Itoa(r.Status), output.OrDash(r.Message))
	}
	if err := s.Print(res, func() *output.Rows { return t }); err != nil {
		return nil, err
	}
	if failed := len(res.Results) - len(done); failed > 0 {
		return done, fmt.Errorf("%d of %d connectors failed", failed, len(res.Results))
	}
	return done, nil
}
