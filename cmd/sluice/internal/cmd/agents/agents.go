// Package agents is `sluice agents …` (list, get, cordon, uncordon,
// drain), `sluice rebalance` and `sluice fleet roll`: the agents the leader
// knows and the operations over them.
package agents

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/cmd/sluice/internal/output"
	"github.com/sluice-io/sluice/cmd/sluice/internal/session"
	"github.com/sluice-io/sluice/shared/labels"
)

// Command is `sluice agents …`: the agents the leader knows, and
// their cordons and drains (GET/PUT /sluice/agents…).
func Command() *cli.Command {
	return &cli.Command{
		Name:  "agents",
		Usage: "list agents, cordon, uncordon and drain them",
		Flags: session.Flags(),
		Subcommands: []*cli.Command{
			{Name: "list", Usage: "the agents with their state, tasks, version, labels and lease", Action: List},
			{Name: "get", Usage: "one agent: its fields and its tasks", ArgsUsage: "ID", Flags: []cli.Flag{selfFlag()}, Action: getAgent},
			{Name: "cordon", Usage: "give an agent no new tasks (it keeps those it runs)", ArgsUsage: "ID", Flags: []cli.Flag{selfFlag()}, Action: markAgent("cordon")},
			{Name: "uncordon", Usage: "let an agent take new tasks again (stops a drain of it)", ArgsUsage: "ID", Flags: []cli.Flag{selfFlag()}, Action: markAgent("uncordon")},
			{
				Name: "drain", ArgsUsage: "ID",
				Usage: "cordon an agent and move its tasks to other agents (--wait: until it runs none)",
				Flags: append(drainFlags(), selfFlag(),
					&cli.BoolFlag{Name: "pre-stop", Usage: "this is the agent's own pre-stop hook: the leader uncordons the agent once it registers again as a new process (never an operator's cordon)"}),
				Action: drainAgent,
			},
		},
	}
}

// selfFlag is --self: the agent of the container the command runs in.
func selfFlag() cli.Flag {
	return &cli.BoolFlag{Name: "self", Usage: "the agent whose id is in $SLUICE_ID (the agent's own --id): a Kubernetes hook's way to name its agent"}
}

// drainFlags are the flags a drain takes in `agents drain` and `fleet roll`.
func drainFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "force", Usage: "unassign the tasks no other agent may run instead of refusing (409)"},
		&cli.BoolFlag{Name: "wait", Usage: "wait until the agent runs no task, printing the progress"},
		envflag.Duration("timeout", 10*time.Minute, "how long --wait waits"),
	}
}

// agentArg is the one agent id argument, or $SLUICE_ID with --self.
func agentArg(c *cli.Context) (string, error) {
	if c.Bool("self") {
		if c.NArg() != 0 {
			return "", session.Usage("give an agent id or --self, not both")
		}
		// Kubernetes does not expand $(VAR) in a hook's command: the id
		// comes from the environment the hook runs in.
		id := os.Getenv("SLUICE_ID")
		if id == "" {
			return "", session.Usage("--self: SLUICE_ID is not set")
		}
		return id, nil
	}
	if c.NArg() != 1 {
		return "", session.Usage("give exactly one agent id")
	}
	return c.Args().First(), nil
}

// fetchAgents is GET /sluice/agents.
func fetchAgents(s *session.Session) ([]api.AgentInfo, error) {
	list, err := session.Call0(s, s.API.Fleet().Agents)
	return list.Agents, err
}

// List is `agents list` and `get agents`: the agents, a line each.
func List(c *cli.Context) error {
	s, err := session.Open(c)
	if err != nil {
		return err
	}
	agents, err := fetchAgents(s)
	if err != nil {
		return err
	}
	return s.Print(agents, func() *output.Rows { return agentTable(agents, time.Now()) })
}

// agentTable shows agents one a line; BY is who cordoned or drained the
// agent (docs/operations.md, "Who cordoned an agent"), LEASE the seconds
// left of the lease at now ("-" for an agent that is not registered).
func agentTable(agents []api.AgentInfo, now time.Time) *output.Rows {
	t := output.NewRows("ID", "STATE", "BY", "TASKS", "VERSION", "LABELS", "LEASE", "REGISTERED")
	for _, a := range agents {
		by := ""
		if a.Cordon != nil {
			by = a.Cordon.Origin
		}
		t.Add(a.ID, a.State, by, fmt.Sprint(len(a.Tasks)), a.Version, labels.Format(a.Labels), lease(a, now), fmt.Sprint(a.Registered))
	}
	return t
}

// lease is how long an agent's lease has left, in whole seconds.
func lease(a api.AgentInfo, now time.Time) string {
	if !a.Registered || a.LeaseExpires.IsZero() {
		return ""
	}
	return fmt.Sprintf("%ds", max(0, int(a.LeaseExpires.Sub(now).Round(time.Second)/time.Second)))
}

// openAgent reads the agent id argument, then opens the session.
func openAgent(c *cli.Context) (string, *session.Session, error) {
	id, err := agentArg(c)
	if err != nil {
		return "", nil, err
	}
	s, err := session.Open(c)
	return id, s, err
}

func getAgent(c *cli.Context) error {
	id, s, err := openAgent(c)
	if err != nil {
		return err
	}
	a, err := session.Call(s, s.API.Fleet().Agent, id)
	if err != nil {
		return err
	}
	if s.Format != output.Table {
		return s.Print(a, nil)
	}
	return writeAgent(s.W, a, time.Now())
}

// writeAgent prints one agent's fields, then its tasks.
func writeAgent(w io.Writer, a api.AgentInfo, now time.Time) error {
	started := ""
	if !a.StartedAt.IsZero() {
		started = a.StartedAt.Format(time.RFC3339)
	}
	fields := output.NewRows().
		Add("id:", a.ID).
		Add("state:", a.State).
		Add("cordon:", cordonedBy(a.Cordon)).
		Add("registered:", fmt.Sprint(a.Registered)).
		Add("version:", a.Version).
		Add("labels:", labels.Format(a.Labels)).
		Add("lease:", lease(a, now)).
		Add("started:", started).
		Add("plugins:", strings.Join(a.Plugins, ", "))
	if err := fields.Write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ntasks:")
	tasks := output.NewRows("CONNECTOR", "TASK", "STATE")
	for _, t := range a.Tasks {
		tasks.Add(t.Connector, fmt.Sprint(t.Task), t.State)
	}
	return output.Section(w, tasks)
}

// cordonedBy says who cordoned or drained an agent, and since when;
// empty for an active one.
func cordonedBy(c *api.AgentCordon) string {
	if c == nil {
		return ""
	}
	by := c.Origin
	if c.Principal != "" {
		by += " (" + c.Principal + ")"
	}
	return by + " since " + c.Since.Format(time.RFC3339)
}

// markAgent makes `agents cordon|uncordon ID`: PUT …/<verb>, printing the
// agent's new state.
func markAgent(verb string) cli.ActionFunc {
	return func(c *cli.Context) error {
		id, s, err := openAgent(c)
		if err != nil {
			return err
		}
		a, err := putAgent(s, id, "/"+verb)
		if err != nil {
			return err
		}
		return s.Print(a, func() *output.Rows {
			return output.NewRows("AGENT", "STATE", "TASKS").Add(a.ID, a.State, fmt.Sprint(len(a.Tasks)))
		})
	}
}

// putAgent is PUT /sluice/agents/<id>/cordon or …/uncordon (suffix),
// answering the agent.
func putAgent(s *session.Session, id, suffix string) (api.AgentInfo, error) {
	f := s.API.Fleet()
	mark := f.Cordon
	if suffix == "/uncordon" {
		mark = f.Uncordon
	}
	return session.Call(s, mark, id)
}

func drainAgent(c *cli.Context) error {
	id, s, err := openAgent(c)
	if err != nil {
		return err
	}
	opts := api.DrainOptions{Force: c.Bool("force")}
	if c.Bool("pre-stop") {
		opts.Origin = api.CordonPreStop
	}
	st, err := startDrain(s, id, opts)
	if err != nil {
		return err
	}
	if c.Bool("wait") {
		if st, err = waitDrained(s, id, c.Duration("timeout")); err != nil {
			return err
		}
	}
	return s.Print(st, func() *output.Rows { return drainTable(st) })
}

// startDrain is PUT …/drain[?force=true][&origin=pre-stop].
func startDrain(s *session.Session, id string, opts api.DrainOptions) (api.DrainStatus, error) {
	return session.Call2(s, s.API.Fleet().DrainWith, id, opts)
}

// drainTable is a drain's state in one row.
func drainTable(st api.DrainStatus) *output.Rows {
	return output.NewRows("AGENT", "DRAIN", "MOVED", "REMAINING", "MOVING", "BLOCKED").
		Add(st.Agent, st.State, fmt.Sprint(st.Moved), fmt.Sprint(len(st.Remaining)), taskList(st.Moving), blockedList(st.Blocked))
}

// errDrainBlocked is a drain that stopped with tasks no other agent may run.
var errDrainBlocked = errors.New("drain blocked")

// waitDrained polls GET …/drain until the drain is done and no task of it
// is still on its way, printing on stderr
// each change of its progress. A blocked drain is an error naming the
// tasks, as is the timeout passing.
func waitDrained(s *session.Session, id string, timeout time.Duration) (api.DrainStatus, error) {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		st, err := session.Call(s, s.API.Fleet().DrainStatus, id)
		if err != nil {
			return st, fmt.Errorf("follow the drain of agent %s: %w", id, err)
		}
		line := fmt.Sprintf("draining %s: moved %d, remaining %d", id, st.Moved, len(st.Remaining))
		if len(st.Moving) > 0 {
			line += ", moving " + taskList(st.Moving)
		}
		if line != last {
			fmt.Fprintln(s.C.App.ErrWriter, line)
			last = line
		}
		switch {
		case st.State == api.DrainDone && len(st.Moving) == 0:
			// Done with nothing moving: the agent runs nothing and its
			// tasks were started where they went.
			fmt.Fprintf(s.C.App.ErrWriter, "agent %s drained: it runs no task\n", id)
			return st, nil
		case st.State == api.DrainBlocked:
			return st, fmt.Errorf("%w: agent %s keeps %s: no other agent may run them (they stay where they are; sluice agents drain %s --force unassigns them, sluice agents uncordon %s gives up the drain)",
				errDrainBlocked, id, blockedList(st.Blocked), id, id)
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("agent %s not drained after %s: remaining [%s], moving [%s] (it stays draining; sluice agents uncordon %s gives up the drain)",
				id, timeout, taskList(st.Remaining), taskList(st.Moving), id)
		}
		select {
		case <-s.C.Context.Done():
			return st, s.C.Context.Err()
		case <-time.After(session.PollInterval):
		}
	}
}

// taskList names tasks as connector/task, comma-separated.
func taskList(ids []api.TaskID) string {
	names := make([]string, len(ids))
	for i, t := range ids {
		names[i] = fmt.Sprintf("%s/%d", t.Connector, t.Task)
	}
	return strings.Join(names, ", ")
}

// blockedList names blocked tasks with why they cannot move.
func blockedList(bs []api.BlockedTask) string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = fmt.Sprintf("%s/%d (%s)", b.Connector, b.Task, b.Reason)
	}
	return strings.Join(names, ", ")
}
