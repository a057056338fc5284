// Package dashboard checks Sluice's Grafana dashboard
// (deploy/grafana/sluice.json): that Grafana's own dashboard types (the
// Grafana Foundation SDK) decode it strictly, that every query parses as
// PromQL, and that every metric and label it uses is one Sluice serves:
// in the catalogue (Catalogue), and in a real scrape (MissingFromScrape).
//
//	sluice.json ─► Load (strict: no field Grafana's schema lacks)
//	            ─► Queries: every panel target and variable query
//	            ─► Parse (PromQL, Grafana's variables substituted)
//	            ─► selectors: metric names and label matchers, grouping labels
//	            ─► CheckCatalogue │ MissingFromScrape(ScrapedNames(GET /metrics))
//
// It lives in the tests module so that the SDK and Prometheus's parser,
// both heavy, stay out of the binary's module.
package dashboard

//lint:file-ignore SA1019 sluice.json is a schema-v1 dashboard, the JSON model Grafana imports; the SDK's dashboardv2 is another schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	sdk "github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
)

// Load reads a dashboard file and decodes it strictly with the Grafana
// Foundation SDK's dashboard types: a field the schema does not know, a
// required one missing or a value of the wrong type is an error. The
// panels' options and the targets are checked against their plugins'
// types (timeseries, stat, table; Prometheus queries).
//
// The SDK's strict decoders (v0.0.22) return their error list as a typed
// nil when there is no error, and the callers that test err != nil then
// drop what decoded well: the panels and targets of a valid dashboard
// come back empty. So the strict pass only validates — an error is one
// that lists at least one problem — and the value is the SDK's ordinary
// decoding of the same file, into the same types.
func Load(path string) (*sdk.Dashboard, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	// Registers the panel and query types the decoding dispatches on;
	// without them options and targets would be free maps, unchecked.
	plugins.RegisterDefaultPlugins()
	var strict sdk.Dashboard
	var problems cog.BuildErrors
	if err := strict.UnmarshalJSONStrict(data); err != nil && (!errors.As(err, &problems) || len(problems) > 0) {
		return nil, fmt.Errorf("decode dashboard %s strictly: %w", path, err)
	}
	var d sdk.Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("decode dashboard %s: %w", path, err)
	}
	return &d, nil
}

// Query is one PromQL query of the dashboard.
type Query struct {
	// Where names the panel (and target) or variable it comes from.
	Where string
	// Expr is the query as written, Grafana's variables included.
	Expr string
	// Target is the panel target it comes from; nil for a variable.
	Target *prometheus.Dataquery
}

// Panels returns every panel of d, those inside rows included.
func Panels(d *sdk.Dashboard) []*sdk.Panel {
	var out []*sdk.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			out = append(out, p.Panel)
		}
		if p.RowPanel != nil {
			for i := range p.RowPanel.Panels {
				out = append(out, &p.RowPanel.Panels[i])
			}
		}
	}
	return out
}

// labelValuesRE is the Prometheus data source's label_values(selector,
// label) variable query.
var labelValuesRE = regexp.MustCompile(`^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$`)

// Queries returns every query of d: each panel target's expr, and each
// query variable's selector (label_values(selector, label) as its
// selector). A target that is not a Prometheus query is an error: the
// dashboard reads only Prometheus.
func Queries(d *sdk.Dashboard) ([]Query, error) {
	var out []Query
	var errs []error
	for _, p := range Panels(d) {
		title := ""
		if p.Title != nil {
			title = *p.Title
		}
		for i, t := range p.Targets {
			q, ok := t.(*prometheus.Dataquery)
			if !ok {
				errs = append(errs, fmt.Errorf("panel %q target %d: a %T, not a Prometheus query", title, i, t))
				continue
			}
			ref := ""
			if q.RefId != nil {
				ref = *q.RefId
			}
			out = append(out, Query{Where: fmt.Sprintf("panel %q target %s", title, ref), Expr: q.Expr, Target: q})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != sdk.VariableTypeQuery {
			continue
		}
		if v.Query == nil || v.Query.String == nil {
			errs = append(errs, fmt.Errorf("variable %s: no query string", v.Name))
			continue
		}
		m := labelValuesRE.FindStringSubmatch(*v.Query.String)
		if m == nil {
			errs = append(errs, fmt.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, *v.Query.String))
			continue
		}
		out = append(out, Query{Where: "variable " + v.Name, Expr: m[1]})
	}
	return out, errors.Join(errs...)
}

// grafanaVars are the variables a query may use, each with what stands in
// for it when the query is parsed: Grafana's interval variables become a
// duration, the dashboard's own an (any) regex value.
var grafanaVars = map[string]string{
	"$__rate_interval": "5m",
	"$__interval":      "1m",
	"$__range":         "1h",
	"$connector":       ".*",
	"${connector}":     ".*",
}

// varRE finds a Grafana variable reference.
var varRE = regexp.MustCompile(`\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)

// Parse parses expr as PromQL once Grafana's variables are substituted; a
// variable the dashboard does not define is an error.
func Parse(expr string) (parser.Expr, error) {
	var unknown []string
	sub := varRE.ReplaceAllStringFunc(expr, func(v string) string {
		if s, ok := grafanaVars[v]; ok {
			return s
		}
		unknown = append(unknown, v)
		return v
	})
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown variables %v in %q", unknown, expr)
	}
	e, err := parser.NewParser(parser.Options{}).ParseExpr(sub)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", sub, err)
	}
	return e, nil
}

// Use is what one query reads: the series names it selects, with the
// labels it matches on each, and the labels its aggregations group by.
type Use struct {
	// Series are the selected series names, each with the label names
	// its selector matches on (__name__ aside).
	Series map[string]map[string]bool
	// Grouping are the labels of by (…) and on (…) clauses, with the
	// series names of the expression they apply to.
	Grouping []Grouping
}

// Grouping is one by (…), without (…), on (…) or ignoring (…) clause.
type Grouping struct {
	// Labels are the clause's labels.
	Labels []string
	// Series are the series names the clause's expression selects.
	Series []string
}

// Uses walks a parsed query.
func Uses(e parser.Expr) (Use, error) {
	u := Use{Series: map[string]map[string]bool{}}
	var errs []error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			name := n.Name
			labels := map[string]bool{}
			for _, m := range n.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
					continue
				}
				labels[m.Name] = true
			}
			if name == "" {
				errs = append(errs, fmt.Errorf("selector %s names no metric", n))
				return nil
			}
			if u.Series[name] == nil {
				u.Series[name] = map[string]bool{}
			}
			for l := range labels {
				u.Series[name][l] = true
			}
		case *parser.AggregateExpr:
			u.Grouping = append(u.Grouping, Grouping{Labels: n.Grouping, Series: selected(n.Expr)})
		case *parser.BinaryExpr:
			if n.VectorMatching != nil && len(n.VectorMatching.MatchingLabels) > 0 {
				u.Grouping = append(u.Grouping, Grouping{Labels: n.VectorMatching.MatchingLabels, Series: append(selected(n.LHS), selected(n.RHS)...)})
			}
		}
		return nil
	})
	return u, errors.Join(errs...)
}

// selected are the series names e selects.
func selected(e parser.Expr) []string {
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs.Name)
		}
		return nil
	})
	return out
}

// CheckCatalogue checks one query's use against the catalogue: every
// series it selects is one a catalogue metric exposes, every label it
// matches on that series carries, and every label it groups by carried
// by at least one series of the grouped expression.
func CheckCatalogue(u Use, catalogue map[string]Series) error {
	var errs []error
	for name, labels := range u.Series {
		s, ok := catalogue[name]
		if !ok {
			errs = append(errs, fmt.Errorf("metric %s is not in the catalogue", name))
			continue
		}
		for l := range labels {
			if !s.Labels[l] {
				errs = append(errs, fmt.Errorf("metric %s has no label %s (it has %s)", name, l, strings.Join(sortedKeys(s.Labels), ", ")))
			}
		}
	}
	for _, g := range u.Grouping {
		for _, l := range g.Labels {
			carried := false
			for _, name := range g.Series {
				carried = carried || catalogue[name].Labels[l]
			}
			if !carried {
				errs = append(errs, fmt.Errorf("grouping by %s over %v: no series there carries it", l, g.Series))
			}
		}
	}
	return errors.Join(errs...)
}

// Analyze parses q and walks it; an error names where q comes from.
func Analyze(q Query) (Use, error) {
	e, err := Parse(q.Expr)
	if err != nil {
		return Use{}, fmt.Errorf("%s: %w", q.Where, err)
	}
	u, err := Uses(e)
	if err != nil {
		return u, fmt.Errorf("%s: %w", q.Where, err)
	}
	return u, nil
}

// UsedNames are the series names every query of qs selects, and an error
// for a query that does not parse.
func UsedNames(qs []Query) (map[string]bool, error) {
	used := map[string]bool{}
	var errs []error
	for _, q := range qs {
		u, err := Analyze(q)
		if err != nil {
			errs = append(errs, err)
		}
		for name := range u.Series {
			used[name] = true
		}
	}
	return used, errors.Join(errs...)
}
