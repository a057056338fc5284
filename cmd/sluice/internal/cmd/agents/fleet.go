package agents

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
)

// Rebalance is `sluice rebalance`: POST /sluice/rebalance, the
// moves that even out tasks across the agents, made or only shown.
func Rebalance() *cli.Command {
	return &cli.Command{
		Name:  "rebalance",
		Usage: "even out tasks across the live, uncordoned agents (--dry-run: only show the moves)",
		Flags: append(session.Flags(),
			envflag.Int("max-moves", 0, "tasks moved at a time (default: the server's, 2)"),
			&cli.BoolFlag{Name: "dry-run", Usage: "show the moves and the loads they would give; move nothing"},
			&cli.BoolFlag{Name: "wait", Usage: "wait until every move is done"},
			envflag.Duration("timeout", 10*time.Minute, "how long --wait waits"),
		),
		Action:      rebalance,
		Subcommands: []*cli.Command{rebalanceStatusCommand()},
	}
}

func rebalance(c *cli.Context) error {
	if c.NArg() != 0 {
		return session.Usage("rebalance takes no arguments")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	r, err := session.Call(s, s.API.Fleet().Rebalance, api.RebalanceOptions{MaxMoves: c.Int("max-moves"), DryRun: c.Bool("dry-run")})
	if err != nil {
		return err
	}
	if c.Bool("wait") && !r.DryRun {
		if r, err = waitRebalanced(s, r, c.Duration("timeout")); err != nil {
			return err
		}
	}
	if s.Format != output.Table {
		return s.Print(r, nil)
	}
	if err := writeRebalance(s.W, r); err != nil {
		return err
	}
	switch {
	case r.DryRun:
		fmt.Fprintln(c.App.ErrWriter, "dry run: nothing was moved")
	case r.State != api.DrainDone:
		fmt.Fprintf(c.App.ErrWriter, "rebalance %s is %s: follow it with sluice rebalance status, or run with --wait\n", r.ID, r.State)
	}
	return nil
}

// rebalanceStatusCommand is `sluice rebalance status`: GET /sluice/rebalance.
func rebalanceStatusCommand() *cli.Command {
	return &cli.Command{
		Name: "status", Usage: "the rebalance in progress, or the last one",
		Action: func(c *cli.Context) error {
			s, err := session.Open(c)
			if err != nil {
				return err
			}
			r, err := session.Call0(s, s.API.Fleet().RebalanceStatus)
			if err != nil {
				return err
			}
			if s.Format != output.Table {
				return s.Print(r, nil)
			}
			return writeRebalance(s.W, r)
		},
	}
}

// waitRebalanced polls GET /sluice/rebalance until rebalance r is done,
// printing on stderr how many of its moves are done.
func waitRebalanced(s *session.Session, r api.Rebalance, timeout time.Duration) (api.Rebalance, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for r.State != api.DrainDone {
		if time.Now().After(deadline) {
			return r, fmt.Errorf("rebalance %s not done after %s (it goes on: sluice rebalance status)", r.ID, timeout)
		}
		select {
		case <-s.C.Context.Done():
			return r, s.C.Context.Err()
		case <-time.After(session.PollInterval):
		}
		cur, err := session.Call0(s, s.API.Fleet().RebalanceStatus)
		if err != nil {
			return r, fmt.Errorf("follow rebalance %s: %w", r.ID, err)
		}
		if cur.ID != r.ID {
			return r, fmt.Errorf("rebalance %s was replaced by %s", r.ID, cur.ID)
		}
		r = cur
		done := 0
		for _, m := range r.Moves {
			if m.State == "done" || m.State == "skipped" {
				done++
			}
		}
		if line := fmt.Sprintf("rebalance %s: %d of %d moves done", r.ID, done, len(r.Moves)); line != last {
			fmt.Fprintln(s.C.App.ErrWriter, line)
			last = line
		}
	}
	return r, nil
}

// writeRebalance prints a rebalance's moves, then each agent's tasks
// before and after it.
func writeRebalance(w io.Writer, r api.Rebalance) error {
	moves := output.NewRows("CONNECTOR", "TASK", "FROM", "TO", "STATE")
	for _, m := range r.Moves {
		moves.Add(m.Connector, fmt.Sprint(m.Task), m.From, m.To, m.State)
	}
	if moves.Len() == 0 {
		fmt.Fprintln(w, "no move: the agents are even")
	} else if err := moves.Write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nloads:")
	l := output.NewRows("AGENT", "BEFORE", "AFTER")
	ids := make([]string, 0, len(r.Before))
	for id := range r.Before {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		l.Add(id, fmt.Sprint(r.Before[id]), fmt.Sprint(r.After[id]))
	}
	return output.Section(w, l)
}

// Fleet is `sluice fleet roll`: a rolling restart of the agents.
func Fleet() *cli.Command {
	return &cli.Command{
		Name:  "fleet",
		Usage: "fleet-wide operations on agents: a rolling restart",
		Flags: session.Flags(),
		Subcommands: []*cli.Command{{
			Name:  "roll",
			Usage: "drain each agent in turn, wait until it restarts (a later started_at), uncordon it, go on",
			Flags: []cli.Flag{
				envflag.Int("batch", 1, "agents rolled at a time"),
				&cli.StringSliceFlag{Name: "agents", Usage: "the agents to roll, in this order (default: every agent, sorted by id)"},
				envflag.Duration("timeout", 10*time.Minute, "how long each agent may take to drain, and to come back"),
				envflag.String("restart-cmd", "", "run this (with sh -c) to restart an agent once drained; {id} is its id (e.g. 'kubectl delete pod {id}')"),
			},
			Action: fleetRoll,
		}},
	}
}

// rolled is one agent a roll restarted.
type rolled struct {
	Agent       string    `json:"agent"`
	StartedAt   time.Time `json:"started_at"`
	RestartedAt time.Time `json:"restarted_at"`
	Moved       int       `json:"moved"`
	Version     string    `json:"version"`
}

func fleetRoll(c *cli.Context) error {
	batch := c.Int("batch")
	if batch < 1 {
		return session.Usage("--batch %d: roll at least one agent at a time", batch)
	}
	if c.NArg() != 0 {
		return session.Usage("fleet roll takes no arguments (--agents names them)")
	}
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	all, err := fetchAgents(s)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	var ids []string
	for _, a := range all {
		known[a.ID] = true
		if a.Registered {
			ids = append(ids, a.ID)
		}
	}
	if want := c.StringSlice("agents"); len(want) > 0 {
		ids = nil
		for _, id := range want {
			if !known[id] {
				return fmt.Errorf("404: Agent %s not found", id)
			}
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return errors.New("no registered agent to roll")
	}
	r := roller{s: s, timeout: c.Duration("timeout"), restartCmd: c.String("restart-cmd"), log: c.App.ErrWriter}
	done := []rolled{}
	for i := 0; i < len(ids); i += batch {
		b := ids[i:min(i+batch, len(ids))]
		res, err := r.roll(b)
		done = append(done, res...)
		if err != nil {
			if len(done) > 0 {
				_ = s.Print(done, func() *output.Rows { return rolledTable(done) })
			}
			return fmt.Errorf("fleet roll stopped: %w; rolled %d of %d agents, not rolled: %s", err, len(done), len(ids), strings.Join(ids[len(done):], ", "))
		}
	}
	if len(done) == 1 {
		fmt.Fprintln(c.App.ErrWriter, "rolled 1 agent")
	} else {
		fmt.Fprintf(c.App.ErrWriter, "rolled %d agents\n", len(done))
	}
	return s.Print(done, func() *output.Rows { return rolledTable(done) })
}

// rolledTable shows the agents a roll restarted.
func rolledTable(done []rolled) *output.Rows {
	t := output.NewRows("AGENT", "MOVED", "STARTED", "RESTARTED", "VERSION")
	for _, d := range done {
		t.Add(d.Agent, fmt.Sprint(d.Moved), d.StartedAt.Format(time.RFC3339), d.RestartedAt.Format(time.RFC3339), d.Version)
	}
	return t
}

// roller rolls batches of agents, printing its progress to log.
type roller struct {
	s          *session.Session
	timeout    time.Duration
	restartCmd string
	log        io.Writer
}

// roll rolls one batch: drains every agent of it, restarts them (or waits
// for someone to), waits for each to come back, uncordons them. It stops
// at the first agent that fails a step and says how it left it.
func (r roller) roll(batch []string) ([]rolled, error) {
	res, err := r.rollBatch(batch)
	if err != nil && len(batch) > 1 {
		err = fmt.Errorf("%w (the batch's other agents, %s, may be left draining or cordoned too)", err, strings.Join(batch, ", "))
	}
	return res, err
}

// rollBatch is roll without the note on the batch's other agents.
func (r roller) rollBatch(batch []string) ([]rolled, error) {
	res := make([]rolled, len(batch))
	for i, id := range batch {
		// Its started_at now, not when the roll began: an agent that
		// restarted meanwhile must not look restarted by the roll.
		a, err := session.Call(r.s, r.s.API.Fleet().Agent, id)
		if err != nil {
			return nil, fmt.Errorf("agent %s: %w", id, err)
		}
		res[i] = rolled{Agent: id, StartedAt: a.StartedAt}
		fmt.Fprintf(r.log, "%s: draining\n", id)
		if _, err := startDrain(r.s, id, false); err != nil {
			return nil, fmt.Errorf("agent %s: drain refused: %w", id, err)
		}
	}
	for i, id := range batch {
		st, err := waitDrained(r.s, id, r.timeout)
		if err != nil {
			return nil, fmt.Errorf("agent %s did not drain: %w", id, err)
		}
		res[i].Moved = st.Moved
	}
	for i, id := range batch {
		if r.restartCmd != "" {
			if err := r.restart(id); err != nil {
				return nil, fmt.Errorf("agent %s: %w; it is drained and stays cordoned (sluice agents uncordon %s undoes it)", id, err, id)
			}
		}
		started := "unknown"
		if !res[i].StartedAt.IsZero() {
			started = res[i].StartedAt.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(r.log, "waiting for agent %s to restart (started_at %s)\n", id, started)
	}
	for i, id := range batch {
		a, err := r.waitRestarted(id, res[i].StartedAt)
		if err != nil {
			return nil, err
		}
		res[i].RestartedAt, res[i].Version = a.StartedAt, a.Version
		if _, err := putAgent(r.s, id, "/uncordon"); err != nil {
			return nil, fmt.Errorf("agent %s came back but uncordoning it failed: %w; it stays cordoned (sluice agents uncordon %s)", id, err, id)
		}
		fmt.Fprintf(r.log, "%s: restarted (started_at %s, version %s), uncordoned\n", id, a.StartedAt.Format(time.RFC3339Nano), a.Version)
	}
	return res, nil
}

// waitRestarted polls agent id until it is registered again with a
// started_at later than before; with none known before, until it has been
// seen gone and registered again.
func (r roller) waitRestarted(id string, before time.Time) (api.AgentInfo, error) {
	deadline := time.Now().Add(r.timeout)
	gone := false
	for {
		a, err := session.Call(r.s, r.s.API.Fleet().Agent, id)
		switch {
		case session.IsStatus(err, http.StatusNotFound):
			// Gone and unmarked (uncordoned meanwhile): not back yet.
			a = api.AgentInfo{ID: id, State: "gone"}
		case err != nil:
			return a, fmt.Errorf("agent %s: %w", id, err)
		}
		gone = gone || !a.Registered
		if a.Registered && (a.StartedAt.After(before) || (before.IsZero() && gone)) {
			return a, nil
		}
		if time.Now().After(deadline) {
			why := "it is not registered"
			if a.Registered {
				why = "it is registered but did not restart (started_at " + a.StartedAt.Format(time.RFC3339Nano) + ")"
			}
			return a, fmt.Errorf("agent %s did not come back within %s: %s; it is left %s (sluice agents uncordon %s undoes it once it runs)",
				id, r.timeout, why, a.State, id)
		}
		select {
		case <-r.s.C.Context.Done():
			return a, r.s.C.Context.Err()
		case <-time.After(session.PollInterval):
		}
	}
}

// restart runs --restart-cmd for agent id with sh -c, its output going to
// the roll's log.
func (r roller) restart(id string) error {
	cmd := strings.ReplaceAll(r.restartCmd, "{id}", shellQuote(id))
	fmt.Fprintf(r.log, "%s: restarting: %s\n", id, cmd)
	x := exec.CommandContext(r.s.C.Context, "sh", "-c", cmd)
	x.Stdout, x.Stderr = r.log, r.log
	if err := x.Run(); err != nil {
		return fmt.Errorf("restart command %q failed: %w", cmd, err)
	}
	return nil
}

// shellSafe matches words sh takes as they are.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9._/:@%+=-]+$`)

// shellQuote quotes s for sh unless it needs none: an agent id is the
// server's word, not the user's, and goes into a command line.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
