// Package fleetlist answers GET /sluice/fleet/connectors: every connector
// the caller may view as one row — type, plugin, state, a derived health
// with its reason, tasks and their agents, labels, a sink's lag, the time
// of its last change — filtered, sorted and paged on the server, with the
// counts of the whole fleet for the filter chips.
//
// It reads only what the coordinator holds in memory (the config and
// status topics as read, the last lag read of each sink), never Kafka or
// an agent, so that a listing of thousands of connectors costs no round
// trip, and any coordinator, a follower too, answers from its own view.
//
//	configs + statuses + last lags ─► rows (visible ones) ─► counts
//	                                     │
//	                                     ▼
//	                                  filters ─► sort ─► page
package fleetlist

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/validate"
	"github.com/sluice-io/sluice/coordinator/internal/lag"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/labels"
	"github.com/sluice-io/sluice/shared/records"
)

// Configs are the connectors' configs (store.ConfigState).
type Configs interface {
	// AllShared returns every connector, in no order, whose maps the
	// caller only reads.
	AllShared() []store.Connector
}

// Statuses are the connectors' statuses as this coordinator knows them
// (on the leader, what it last decided).
type Statuses interface {
	Connector(name string) (store.InstanceStatus, bool)
	Task(name string, task int) (store.InstanceStatus, bool)
	// Changed is when the connector's or a task's status last changed.
	Changed(name string) time.Time
}

// Plugins finds a config's connector plugin (connectors.Plugins).
type Plugins interface {
	PluginOf(config map[string]string) (*connect.Plugin, bool)
}

// Lags are the last lag read of each sink (lag.Latest).
type Lags interface {
	Last(connector string) (lag.Reading, bool)
}

// Config is what a Lister needs.
type Config struct {
	Configs  Configs
	Statuses Statuses
	Plugins  Plugins
	Lags     Lags
	// LagThreshold is the sink lag, in records, from which a running sink
	// is degraded; 0: DefaultLagThreshold, negative: never.
	LagThreshold int64
}

// Lister lists the fleet. The zero value is a Lister to hand the REST
// layer before the coordinator has started; Configure makes it work.
type Lister struct {
	cfg Config
}

// New makes a configured Lister.
func New(cfg Config) *Lister {
	l := &Lister{}
	l.Configure(cfg)
	return l
}

// Configure sets what the lister reads; call it once, before the first
// request.
func (l *Lister) Configure(cfg Config) {
	switch {
	case cfg.LagThreshold == 0:
		cfg.LagThreshold = DefaultLagThreshold
	case cfg.LagThreshold < 0:
		cfg.LagThreshold = 0
	}
	l.cfg = cfg
}

// row is a connector's listing row, with what filters and sorts read.
type row struct {
	api.FleetConnector
	rank    int
	changed time.Time
	// labels is the sluice.labels value, parsed into Labels only for the
	// rows a label filter reads or a page shows.
	labels string
	// lag is a sink's last lag read (hasLag), shown only on a page.
	lag    lag.Reading
	hasLag bool
}

// shown is r as a page shows it: its pointers and maps made.
func (r *row) shown() api.FleetConnector {
	r.parseLabels()
	out := r.FleetConnector
	if out.Agents == nil {
		out.Agents = []string{}
	}
	if r.hasLag {
		total, at := r.lag.Total, r.lag.At.UTC()
		out.SinkLag, out.SinkLagAt = &total, &at
	}
	if !r.changed.IsZero() {
		at := r.changed.UTC()
		out.Changed = &at
	}
	return out
}

// parseLabels fills r.Labels from r.labels, once.
func (r *row) parseLabels() {
	if r.Labels == nil && r.labels != "" {
		r.Labels, _ = labels.Parse(r.labels) // validated when written; a bad one shows none
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
}

// List answers GET /sluice/fleet/connectors: the connectors visible
// reports true of (nil: all), as q filters, sorts and pages them. q's
// values were checked by the transport.
func (l *Lister) List(ctx context.Context, q api.FleetQuery, visible func(name string) bool) (api.FleetConnectors, error) {
	out := api.FleetConnectors{Offset: q.Offset, Limit: q.Limit, Connectors: []api.FleetConnector{},
		Counts: api.FleetCounts{Health: map[string]int{}, State: map[string]int{}, Type: map[string]int{}}}
	if out.Limit <= 0 {
		out.Limit = api.DefaultFleetLimit
	}
	f := newFilter(q)
	var kept []*row
	all := l.cfg.Configs.AllShared()
	rows := make([]row, len(all))
	for i, c := range all {
		if visible != nil && !visible(c.Name) {
			continue
		}
		r := &rows[i]
		l.fill(r, c)
		out.Counts.Health[r.Health]++
		out.Counts.State[r.State]++
		out.Counts.Type[r.Type]++
		if f.keeps(r) {
			kept = append(kept, r)
		}
	}
	sortRows(kept, q.Sort)
	out.Total = len(kept)
	for i := q.Offset; i < len(kept) && i < q.Offset+out.Limit; i++ {
		out.Connectors = append(out.Connectors, kept[i].shown())
	}
	return out, nil
}

// fill makes r c's row, from the statuses and the last lag.
func (l *Lister) fill(r *row, c store.Connector) {
	r.FleetConnector = api.FleetConnector{Name: c.Name, Type: api.TypeUnknown, Class: c.Config[validate.ConnectorClassConfig]}
	if p, ok := l.cfg.Plugins.PluginOf(c.Config); ok {
		r.Class, r.Version = p.Class, p.Version
		switch p.Kind {
		case connect.KindSource:
			r.Type = api.TypeSource
		case connect.KindSink:
			r.Type = api.TypeSink
		}
	}
	r.labels = c.Config[validate.LabelsConfig]
	snap := Snapshot{Target: c.TargetState}
	if st, ok := l.cfg.Statuses.Connector(c.Name); ok {
		snap.State, snap.Trace = st.State, st.Trace
	}
	r.State = snap.State
	if r.State == "" {
		r.State = api.StateUnassigned
	}
	if c.TargetState != records.TargetStopped {
		snap.Tasks = make([]Task, len(c.Tasks))
		for i := range c.Tasks {
			t := Task{ID: i}
			if st, ok := l.cfg.Statuses.Task(c.Name, i); ok {
				t.State, t.Trace, t.WorkerID = st.State, st.Trace, st.WorkerID
			}
			snap.Tasks[i] = t
			if t.State == api.StateRunning {
				r.TasksRunning++
			}
			if t.WorkerID != "" && t.State != "" && t.State != api.StateUnassigned && !slices.Contains(r.Agents, t.WorkerID) {
				r.Agents = append(r.Agents, t.WorkerID)
			}
		}
		sort.Strings(r.Agents)
	}
	r.TasksTotal = len(snap.Tasks)
	if r.Type == api.TypeSink && l.cfg.Lags != nil {
		if r.lag, r.hasLag = l.cfg.Lags.Last(c.Name); r.hasLag {
			snap.Lag = &r.lag.Total
		}
	}
	r.Health, r.Reason = Judge(snap, l.cfg.LagThreshold)
	r.rank = healthRank(r.Health)
	r.changed = c.Changed
	if t := l.cfg.Statuses.Changed(c.Name); t.After(r.changed) {
		r.changed = t
	}
}

// healthRank is health's place in the attention order.
func healthRank(health string) int {
	for i, h := range api.Healths {
		if h == health {
			return i
		}
	}
	return len(api.Healths)
}

// sortRows sorts rows by how (api.Sort…; "" is SortAttention), then by
// name.
func sortRows(rows []*row, how string) {
	var less func(a, b *row) bool
	switch how {
	case api.SortName:
		less = func(a, b *row) bool { return a.Name < b.Name }
	case api.SortChanged:
		less = func(a, b *row) bool {
			if !a.changed.Equal(b.changed) {
				return a.changed.After(b.changed)
			}
			return a.Name < b.Name
		}
	default:
		less = func(a, b *row) bool {
			if a.rank != b.rank {
				return a.rank < b.rank
			}
			return a.Name < b.Name
		}
	}
	sort.Slice(rows, func(i, j int) bool { return less(rows[i], rows[j]) })
}

// filter is a query's filters, prepared once.
type filter struct {
	q                      string
	states, healths, types []string
	agent, plugin          string
	labels                 map[string]string
}

func newFilter(q api.FleetQuery) filter {
	return filter{q: strings.ToLower(q.Q), states: q.States, healths: q.Healths, types: q.Types, agent: q.Agent,
		plugin: q.Plugin, labels: q.Labels}
}

// keeps reports whether r passes every filter.
func (f filter) keeps(r *row) bool {
	switch {
	case f.q != "" && !strings.Contains(strings.ToLower(r.Name), f.q):
		return false
	case len(f.states) > 0 && !containsFold(f.states, r.State):
		return false
	case len(f.healths) > 0 && !containsFold(f.healths, r.Health):
		return false
	case len(f.types) > 0 && !containsFold(f.types, r.Type):
		return false
	case f.agent != "" && !slices.Contains(r.Agents, f.agent):
		return false
	case f.plugin != "" && !api.PluginNamed(r.Class, f.plugin):
		return false
	}
	if len(f.labels) > 0 {
		r.parseLabels()
	}
	for k, v := range f.labels {
		if got, ok := r.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
