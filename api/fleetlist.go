package api

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The health of a connector in the fleet listing (GET
// /sluice/fleet/connectors); docs/console.md, "Health", gives the rules.
const (
	HealthHealthy    = "healthy"
	HealthDegraded   = "degraded"
	HealthFailed     = "failed"
	HealthPaused     = "paused"
	HealthStopped    = "stopped"
	HealthUnassigned = "unassigned"
)

// Healths are the healths, in the order the attention sort puts them:
// what needs a person first.
var Healths = []string{HealthFailed, HealthDegraded, HealthUnassigned, HealthPaused, HealthStopped, HealthHealthy}

// The orders of the fleet listing (FleetQuery.Sort).
const (
	// SortAttention: failed, degraded, unassigned, paused, stopped,
	// healthy, then by name (the default).
	SortAttention = "attention"
	// SortName: by name.
	SortName = "name"
	// SortChanged: the latest change first, then by name; a connector
	// whose change time is unknown last.
	SortChanged = "changed"
)

// The paging of the fleet listing.
const (
	// DefaultFleetLimit is the rows of a page when the query names no
	// limit; MaxFleetLimit the most a query may ask for.
	DefaultFleetLimit = 50
	MaxFleetLimit     = 500
)

// FleetQuery is the query of GET /sluice/fleet/connectors. Zero members
// filter nothing; filters of different members all apply.
type FleetQuery struct {
	// Q keeps the connectors whose name holds it, in any case.
	Q string
	// States, Healths and Types keep the connectors whose state (as its
	// status shows it), health or type is any of theirs.
	States, Healths, Types []string
	// Agent keeps the connectors with a task on that agent.
	Agent string
	// Plugin keeps the connectors of that plugin: its class in full, its
	// simple name, or its simple name without "Connector" (the aliases
	// connector.class takes), in any case.
	Plugin string
	// Labels keeps the connectors whose sluice.labels hold every one of
	// these key=value pairs.
	Labels map[string]string
	// Sort is SortAttention (empty: the same), SortName or SortChanged.
	Sort string
	// Offset skips that many rows of the sorted, filtered list; Limit is
	// the most rows answered (0: DefaultFleetLimit).
	Offset, Limit int
}

// FleetConnector is one connector as the fleet listing shows it.
type FleetConnector struct {
	Name string `json:"name"`
	// Type is source, sink or unknown.
	Type string `json:"type"`
	// Class is the connector plugin's class in full, and Version the
	// plugin version it runs; the class as configured and "" when no
	// plugin of it is known.
	Class   string `json:"class"`
	Version string `json:"version"`
	// State is the connector's state as its status shows it (RUNNING,
	// PAUSED, STOPPED, FAILED, RESTARTING, or UNASSIGNED while it has no
	// status).
	State string `json:"state"`
	// Health is one of the Health… constants and Reason says why, for a
	// person.
	Health string `json:"health"`
	Reason string `json:"reason"`
	// TasksRunning of TasksTotal tasks are RUNNING.
	TasksRunning int `json:"tasks_running"`
	TasksTotal   int `json:"tasks_total"`
	// Agents are the agents its tasks run on, sorted.
	Agents []string `json:"agents"`
	// Labels are the connector's sluice.labels.
	Labels map[string]string `json:"labels"`
	// SinkLag is a sink's total consumer lag as the coordinator last read
	// it, at SinkLagAt; null for a source, and for a sink whose lag this
	// coordinator has not read yet (the listing reads no lag itself).
	SinkLag   *int64     `json:"sink_lag"`
	SinkLagAt *time.Time `json:"sink_lag_at,omitempty"`
	// Changed is when its config, target state or status last changed, as
	// the records of the config and status topics were written; null when
	// not known.
	Changed *time.Time `json:"changed"`
}

// FleetCounts count the connectors by health, state and type.
type FleetCounts struct {
	Health map[string]int `json:"health"`
	State  map[string]int `json:"state"`
	Type   map[string]int `json:"type"`
}

// FleetConnectors is the body of GET /sluice/fleet/connectors.
type FleetConnectors struct {
	// Total counts the connectors the filters kept, over every page.
	Total      int              `json:"total"`
	Offset     int              `json:"offset"`
	Limit      int              `json:"limit"`
	Connectors []FleetConnector `json:"connectors"`
	// Counts are over every connector the caller may view, before the
	// filters: the numbers of the filter chips.
	Counts FleetCounts `json:"counts"`
}

// values are q as the query parameters of GET /sluice/fleet/connectors.
func (q FleetQuery) values() url.Values {
	v := url.Values{}
	set := func(name, value string) {
		if value != "" {
			v.Set(name, value)
		}
	}
	set("q", q.Q)
	set("state", strings.Join(q.States, ","))
	set("health", strings.Join(q.Healths, ","))
	set("type", strings.Join(q.Types, ","))
	set("agent", q.Agent)
	set("plugin", q.Plugin)
	set("sort", q.Sort)
	keys := make([]string, 0, len(q.Labels))
	for k := range q.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v.Add("label", k+"="+q.Labels[k])
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}
