package agents

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
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
		Flags: append(session.FlagsOwnTimeout(),
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

// Fleet is `sluice fleet roll`: a rolling restart of the agents,
// which the coordinator drives (POST /sluice/fleet/rolls) and the command
// watches; and more, the fleet's subcommands of other packages.
func Fleet(more ...*cli.Command) *cli.Command {
	return &cli.Command{
		Name:  "fleet",
		Usage: "the fleet: its connectors with their health, and a rolling restart of its agents",
		Flags: session.Flags(),
		Subcommands: append(more, &cli.Command{
			Name: "roll",
			Usage: "have the coordinator drain each agent in turn, wait until it restarts (a later started_at), uncordon it, go on; " +
				"watch it until it ends (Ctrl-C leaves it running)",
			Flags: []cli.Flag{
				envflag.Int("batch", 1, "agents rolled at a time"),
				&cli.StringSliceFlag{Name: "agents", Usage: "the agents to roll, in this order (default: every registered agent, sorted by id)"},
				envflag.Duration("timeout", 10*time.Minute, "how long each agent may take to drain, and to come back"),
				envflag.String("restart-cmd", "", "run this here (with sh -c) to restart an agent once the coordinator reports it drained; {id} is its id (e.g. 'kubectl delete pod {id}')"),
				&cli.BoolFlag{Name: "detach", Usage: "start the roll and return at once: the coordinator carries it on"},
				// No environment variable: one left set would turn every roll
				// into a watch of an old one.
				&cli.StringFlag{Name: "follow", Usage: "watch the roll of this id, started before, instead of starting one"},
			},
			Action: fleetRoll,
		}),
	}
}

// Rolled is one agent a roll restarted.
type Rolled struct {
	Agent       string    `json:"agent"`
	StartedAt   time.Time `json:"started_at"`
	RestartedAt time.Time `json:"restarted_at"`
	Moved       int       `json:"moved"`
	Version     string    `json:"version"`
}

// rollPath is /sluice/fleet/rolls/<id><suffix>, the id escaped.
func rollPath(id, suffix string) string { return "/sluice/fleet/rolls/" + url.PathEscape(id) + suffix }

func fleetRoll(c *cli.Context) error {
	batch := c.Int("batch")
	if batch < 1 {
		return session.Usage("--batch %d: roll at least one agent at a time", batch)
	}
	if c.NArg() != 0 {
		return session.Usage("fleet roll takes no arguments (--agents names them)")
	}
	// Ctrl-C ends the watch, not the roll: the command says so.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c.Context = ctx
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	var r api.AgentRoll
	if id := c.String("follow"); id != "" {
		r, err = session.Call(s, s.API.Fleet().AgentRoll, id)
	} else {
		req := api.AgentRollRequest{Agents: c.StringSlice("agents"), BatchSize: batch, Timeout: c.Duration("timeout").String()}
		r, err = session.Call(s, s.API.Fleet().StartAgentRoll, req)
	}
	if err != nil {
		return err
	}
	if c.Bool("detach") {
		fmt.Fprintf(c.App.ErrWriter, "fleet roll %s started: %d agent(s), %d at a time; the coordinator carries it on (sluice fleet roll --follow %s watches it)\n",
			r.ID, len(r.Agents), r.Request.BatchSize, r.ID)
		return s.Print(r, func() *output.Rows { return rollTable(r) })
	}
	w := rollWatch{s: s, restartCmd: c.String("restart-cmd"), log: c.App.ErrWriter, seen: map[string]int{}}
	r, err = w.watch(r)
	if err != nil {
		return err
	}
	done := rolledAgents(r)
	if r.State != api.AgentRollDone {
		if len(done) > 0 {
			_ = s.Print(done, func() *output.Rows { return rolledTable(done) })
		}
		return w.stopped(r)
	}
	if len(done) == 1 {
		fmt.Fprintln(c.App.ErrWriter, "rolled 1 agent")
	} else {
		fmt.Fprintf(c.App.ErrWriter, "rolled %d agents\n", len(done))
	}
	return s.Print(done, func() *output.Rows { return rolledTable(done) })
}

// rolledAgents are the agents roll r restarted, in its order.
func rolledAgents(r api.AgentRoll) []Rolled {
	done := []Rolled{}
	for _, a := range r.Agents {
		if a.Step == api.RollDone {
			done = append(done, Rolled{Agent: a.ID, StartedAt: a.StartedAt, RestartedAt: a.RestartedAt, Moved: a.Moved, Version: a.Version})
		}
	}
	return done
}

// rolledTable shows the agents a roll restarted.
func rolledTable(done []Rolled) *output.Rows {
	t := output.NewRows("AGENT", "MOVED", "STARTED", "RESTARTED", "VERSION")
	for _, d := range done {
		t.Add(d.Agent, fmt.Sprint(d.Moved), d.StartedAt.Format(time.RFC3339), d.RestartedAt.Format(time.RFC3339), d.Version)
	}
	return t
}

// rollTable shows a roll's agents, each with its batch and step.
func rollTable(r api.AgentRoll) *output.Rows {
	t := output.NewRows("AGENT", "BATCH", "STEP")
	for _, a := range r.Agents {
		t.Add(a.ID, fmt.Sprint(a.Batch+1), a.Step)
	}
	return t
}

// rollSteps are an agent's steps in order: how far each is along.
var rollSteps = map[string]int{api.RollPending: 0, api.RollDraining: 1, api.RollWaitingRestart: 2, api.RollUncordoning: 3, api.RollDone: 4}

// rollWatch follows a roll the coordinator drives, printing each agent's
// progress to log, and restarts each agent with restartCmd (if any) when
// the coordinator waits for it to restart.
type rollWatch struct {
	s          *session.Session
	restartCmd string
	log        io.Writer
	// seen is how far each agent was seen along (rollSteps).
	seen map[string]int
}

// watch polls roll r until it ends and returns it as it ended; an
// interrupt leaves it running in the coordinator and says so.
func (w *rollWatch) watch(r api.AgentRoll) (api.AgentRoll, error) {
	paused := false
	for {
		if err := w.progress(r); err != nil {
			if w.s.C.Context.Err() != nil {
				return r, w.interrupted(r) // the restart command was cut short
			}
			return r, err
		}
		switch {
		case r.State == api.AgentRollPaused && !paused:
			fmt.Fprintf(w.log, "fleet roll %s is paused (PUT %s resumes it)\n", r.ID, rollPath(r.ID, "/resume"))
		case r.State == api.AgentRollRunning && paused:
			fmt.Fprintf(w.log, "fleet roll %s resumed\n", r.ID)
		}
		paused = r.State == api.AgentRollPaused
		switch r.State {
		case api.AgentRollDone, api.AgentRollFailed, api.AgentRollAborted:
			return r, nil
		}
		select {
		case <-w.s.C.Context.Done():
			return r, w.interrupted(r)
		case <-time.After(session.PollInterval):
		}
		cur, err := session.Call(w.s, w.s.API.Fleet().AgentRoll, r.ID)
		if err != nil {
			if w.s.C.Context.Err() != nil {
				return r, w.interrupted(r)
			}
			return r, fmt.Errorf("follow fleet roll %s (it goes on in the coordinator): %w", r.ID, err)
		}
		r = cur
	}
}

// interrupted is the error of a watch ended by an interrupt.
func (w *rollWatch) interrupted(r api.AgentRoll) error {
	return fmt.Errorf("interrupted: fleet roll %s goes on in the coordinator (%d of %d agents rolled); sluice fleet roll --follow %s watches it again, PUT %s stops it",
		r.ID, r.Progress.Done, r.Progress.Total, r.ID, rollPath(r.ID, "/abort"))
}

// progress prints what changed since the last look: batch by batch, and
// within a batch step by step, so that every agent of a batch is seen
// draining before any is restarted. An agent the coordinator waits for
// is restarted with restartCmd once.
func (w *rollWatch) progress(r api.AgentRoll) error {
	byBatch := map[int][]api.RolledAgent{}
	for _, a := range r.Agents {
		byBatch[a.Batch] = append(byBatch[a.Batch], a)
	}
	for b := 0; b <= r.Batch && b < len(r.Agents); b++ {
		for step := 1; step <= rollSteps[api.RollDone]; step++ {
			for _, a := range byBatch[b] {
				at, ok := rollSteps[a.Step]
				if !ok || at < step || w.seen[a.ID] >= step {
					continue
				}
				w.seen[a.ID] = step
				if err := w.entered(a, step, at); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// entered prints that agent a passed step, being at now.
func (w *rollWatch) entered(a api.RolledAgent, step, now int) error {
	switch step {
	case rollSteps[api.RollDraining]:
		fmt.Fprintf(w.log, "%s: draining\n", a.ID)
	case rollSteps[api.RollWaitingRestart]:
		fmt.Fprintf(w.log, "agent %s drained: it runs no task\n", a.ID)
		if w.restartCmd != "" && now == step {
			if err := w.restart(a.ID); err != nil {
				return fmt.Errorf("agent %s: %w; the coordinator waits for it to restart until its timeout (sluice fleet roll --follow watches the roll)", a.ID, err)
			}
		}
		started := "unknown"
		if !a.StartedAt.IsZero() {
			started = a.StartedAt.Format(time.RFC3339Nano)
		}
		fmt.Fprintf(w.log, "waiting for agent %s to restart (started_at %s)\n", a.ID, started)
	case rollSteps[api.RollDone]:
		fmt.Fprintf(w.log, "%s: restarted (started_at %s, version %s), uncordoned\n", a.ID, a.RestartedAt.Format(time.RFC3339Nano), a.Version)
	}
	return nil
}

// stopped is the error of a roll that ended other than done: why, how it
// left the agent it stopped at, and which agents were not rolled.
func (w *rollWatch) stopped(r api.AgentRoll) error {
	why := r.Error
	if r.State == api.AgentRollAborted {
		why = "it was aborted"
	}
	var left, mates []string
	for _, a := range r.Agents {
		if a.Step == api.RollDone {
			continue
		}
		left = append(left, a.ID)
		if a.Step != api.RollPending && a.Step != api.RollFailed {
			mates = append(mates, a.ID)
		}
		if a.Step == api.RollFailed {
			if info, err := session.Call(w.s, w.s.API.Fleet().Agent, a.ID); err == nil && info.State != api.AgentActive {
				why += fmt.Sprintf("; it is left %s (sluice agents uncordon %s undoes it once it runs)", info.State, a.ID)
			}
		}
	}
	if len(mates) > 0 {
		why += fmt.Sprintf(" (the batch's other agents, %s, may be left draining or cordoned too)", strings.Join(mates, ", "))
	}
	return fmt.Errorf("fleet roll stopped: %s; rolled %d of %d agents, not rolled: %s", why, r.Progress.Done, r.Progress.Total, strings.Join(left, ", "))
}

// restart runs --restart-cmd for agent id with sh -c, its output going to
// the roll's log. It runs here, where the CLI runs: the coordinator never
// runs a command.
func (w *rollWatch) restart(id string) error {
	cmd := strings.ReplaceAll(w.restartCmd, "{id}", shellQuote(id))
	fmt.Fprintf(w.log, "%s: restarting: %s\n", id, cmd)
	x := exec.CommandContext(w.s.C.Context, "sh", "-c", cmd)
	x.Stdout, x.Stderr = w.log, w.log
	// Interrupted, its children (holding its output open) are not waited
	// for long.
	x.WaitDelay = time.Second
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
