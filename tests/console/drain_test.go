package console

import (
	"fmt"
	"testing"

	"github.com/sluice-io/sluice/sluicetest/wait"
)

// agentTasks is GET /sluice/agents/{id}'s tasks, by connector.
func (c *consoleCluster) agentTasks(t testing.TB, id string) []string {
	t.Helper()
	var a struct {
		Tasks []struct {
			Connector string `json:"connector"`
		} `json:"tasks"`
	}
	c.Do("GET", "/sluice/agents/"+id, nil).JSON(t, &a)
	var out []string
	for _, tk := range a.Tasks {
		out = append(out, tk.Connector)
	}
	return out
}

// TestDrainWithProgress: an admin drains the agent that runs tasks from
// its page; after the confirmation the page shows the drain, its progress
// bar counting the tasks moved, and done once the agent runs none — every
// task then RUNNING on the other agent.
func TestDrainWithProgress(t *testing.T) {
	c := startCluster(t, 2)
	c.writeLines(t, "in.txt", "a")
	var names []string
	for i := range 4 {
		n := c.Name(fmt.Sprintf("src-%d", i))
		names = append(names, n)
		c.create(t, n, fileSource("in.txt", c.Name("t")), "")
	}
	for _, n := range names {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	// The agent with the most tasks is drained.
	from, to := "agent-1", "agent-2"
	if len(c.agentTasks(t, to)) > len(c.agentTasks(t, from)) {
		from, to = to, from
	}
	moving := len(c.agentTasks(t, from))
	if moving == 0 {
		t.Fatalf("neither agent runs a task")
	}

	p := openTab(t, c.URL)
	p.signIn(admin)
	p.open("/ui/agents")
	p.waitJS("the agents table", fmt.Sprintf(`document.querySelector('table#agents-table tr[data-agent=%s]')`, js(from)))
	p.open("/ui/agents/" + from)
	p.waitJS("the agent's tasks", fmt.Sprintf(`document.querySelectorAll('table#agent-tasks tbody tr').length === %d`, moving))
	p.click("button[data-test=drain]")
	p.waitText("dialog.modal h2", "Drain "+from+"?")
	p.clickButton("dialog.modal", "Drain "+from)
	p.waitText("#agent-outcome", "draining")
	p.waitJS("the drain's progress bar", `document.querySelector('section#drain progress#drain-progress')`)
	p.waitText("section#drain [data-test=drain-state]", "done")
	if got := evalJS[[]float64](p, `(p => [p.value, p.max])(document.querySelector('progress#drain-progress'))`); len(got) != 2 || got[0] != got[1] || int(got[1]) != moving {
		p.failf("the finished drain's progress is %v (value, max), want %d of %d", got, moving, moving)
	}
	p.accessible("a drained agent's page, its progress shown")
	wait.Eventually(p, stepTimeout, func() (bool, string) {
		left := c.agentTasks(t, from)
		return len(left) == 0 && len(c.agentTasks(t, to)) == len(names), fmt.Sprintf("%s still runs %v", from, left)
	})
	for _, n := range names {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
}
