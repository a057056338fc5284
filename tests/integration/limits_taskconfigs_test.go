package integration

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
)

// TestTaskConfigsTooLargeFailTheConnector: task configs that the config
// topic cannot take — one task's record over the topic's limit, or the set
// over 8 MiB in all — are never written: the connector shows FAILED with a
// trace saying why and what to do, without tasks, and it is not retried;
// a config that fits makes it run.
func TestTaskConfigsTooLargeFailTheConnector(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("wide")
	// A generator task config is the connector's config plus task.class and
	// task.streams, while the connector's record also carries the plugin
	// version chosen for it (sluice.plugin): measure both records of a
	// small config, then pad the config so that the connector's record
	// fits under the limit and its task's does not. The alias keeps the
	// connector's record the smaller of the two.
	const genName = "one-task-over-the-record-limit"
	gen := cfgOf("connector.class", "GeneratorSource", "topic", topic, "rate", "1", "name", genName, "padding", "")
	connRec, taskRec := configRecordSizes(t, c, "one-task-over-the-record-probe", gen)
	grows := taskRec - connRec
	if grows < 2 {
		t.Fatalf("the task's config record (%d bytes) is not larger than the connector's (%d): no config fits with a task over the limit", taskRec, connRec)
	}
	gen["padding"] = strings.Repeat("g", configRecordLimit-grows/2-connRec)
	tests := []struct {
		name   string
		config map[string]string
		trace  string
	}{
		{strings.ReplaceAll(genName, "-", " "), gen, "over the config topic's limit of 999852 bytes"},
		{"the set over 8 MiB", cfgOf("connector.class", classFileSink, "topics", topic, "file", "wide.txt", "tasks.max", "10",
			"padding", strings.Repeat("s", 900_000)), "over the limit of 8388608 bytes for one write"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := on(c, t)
			name := strings.ReplaceAll(tt.name, " ", "-")
			mustCreate(c, name, tt.config, "")
			var st sluicetest.Status
			sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
				st, _ = c.Status(name)
				return st.Connector.State == "FAILED", "connector " + st.Connector.State
			})
			if !strings.Contains(st.Connector.Trace, "task configs") || !strings.Contains(st.Connector.Trace, tt.trace) ||
				!strings.Contains(st.Connector.Trace, "change the connector's config, or restart it") || len(st.Tasks) != 0 {
				t.Fatalf("status %+v: want FAILED, no tasks, a trace naming the limit (%q)", st, tt.trace)
			}
			wantJSON(t, c.Must(http.StatusOK, "GET", "/connectors/"+name+"/tasks", nil), http.StatusOK, `[]`)
			for _, r := range c.ReadTopic(c.Prefix + "-configs") {
				if strings.HasPrefix(string(r.Key), "task-"+name+"-") || string(r.Key) == "commit-"+name {
					t.Fatalf("a task record was written: %s", r.Key)
				}
			}
			// Not retried: it stays FAILED, with the same trace.
			sluicetest.Consistently(t, 2*time.Second, func() (bool, string) {
				now, _ := c.Status(name)
				return now.Connector.State == "FAILED" && now.Connector.Trace == st.Connector.Trace, "status became " + now.Connector.State
			})
			// A config that fits runs.
			delete(tt.config, "padding")
			c.Must(http.StatusOK, "PUT", "/connectors/"+name+"/config", tt.config)
			sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
				now, _ := c.Status(name)
				return now.Connector.State == "RUNNING" && len(now.Tasks) > 0, "connector " + now.Connector.State
			})
		})
	}
}

// configRecordSizes creates a connector of config under name (a name as
// long as the one the caller pads for), and answers the key and value bytes
// of its config record and of its first task's, then deletes it.
func configRecordSizes(t *testing.T, c *sluicetest.Cluster, name string, config map[string]string) (connector, task int) {
	t.Helper()
	config = maps.Clone(config)
	config["name"] = name
	mustCreate(c, name, config, "")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		connector, task = 0, 0
		for _, r := range c.ReadTopic(c.Prefix + "-configs") {
			switch string(r.Key) {
			case "connector-" + name:
				connector = len(r.Key) + len(r.Value)
			case "task-" + name + "-0":
				task = len(r.Key) + len(r.Value)
			}
		}
		return connector > 0 && task > 0, fmt.Sprintf("config records of %s: connector %d bytes, task %d bytes", name, connector, task)
	})
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)
	return connector, task
}
