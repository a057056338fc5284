package instances

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/connect/validate"
)

// MaxTasks is a config's tasks.max as the task split sees it: 1 when it is
// unset or not a positive integer, and at most validate.MaxTasks
// (validation has rejected such configs already; this only keeps one
// stored before, or written by another tool, from breaking the split or
// making a plugin build billions of task configs).
func MaxTasks(props map[string]string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(props[validate.TasksMaxConfig])); err == nil && n > 0 {
		return min(n, validate.MaxTasks)
	}
	return 1
}

// finish adds to a plugin's task configs what Kafka Connect's worker adds:
// task.class, and a sink's topic selection, which every sink task needs to
// subscribe whatever the plugin copied. It never changes tasks.
func finish(p Plugin, props map[string]string, tasks []map[string]string) []map[string]string {
	out := make([]map[string]string, len(tasks))
	for i, tc := range tasks {
		m := maps.Clone(tc)
		if m == nil {
			m = map[string]string{}
		}
		if _, named := m["task.class"]; !p.Remote || !named {
			m["task.class"] = strings.TrimSuffix(p.Class, "Connector") + "Task"
		}
		if p.Kind == connect.KindSink {
			for _, k := range []string{"topics", "topics.regex"} {
				if v, ok := props[k]; ok {
					m[k] = v
				}
			}
		}
		out[i] = m
	}
	return out
}

// Generate computes a connector's task configs on a temporary instance:
// start, task configs, stop, with the placeholders of providers resolved
// for the plugin and put back in the result, as LocalHost does. It is for
// callers without a Manager; the Manager does the same on long-lived
// instances and only when the result can change.
func Generate(reg *plugins.Registry, providers *configprovider.Transformer, props map[string]string) ([]map[string]string, error) {
	conn, p, resolved, err := startLocal(reg, providers, props, discard{})
	if err != nil {
		return nil, err
	}
	// The configs are computed by the time Stop runs; a throwaway
	// instance that fails to stop must not fail its connector.
	defer func() { _ = conn.Stop() }()
	tasks, err := conn.TaskConfigs(MaxTasks(resolved))
	if err != nil {
		return nil, fmt.Errorf("computing the task configs of %s: %w", p.Class, err)
	}
	return finish(p, props, configprovider.ReverseTransform(props, tasks)), nil
}

// discard is the ConnectorContext of a temporary instance: it lives for
// one computation, so neither a request for another nor an error raised
// after it has anyone to reach.
type discard struct{}

func (discard) RequestTaskReconfiguration() {}
func (discard) RaiseError(error)            {}
