package sluicetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sluice-io/sluice/shared/opsserver"
)

// agentListener is the base URL of agent i's metrics listener
// (Options.AgentMetrics).
func (c *Cluster) agentListener(i int) string {
	c.T.Helper()
	a := c.Agents[i]
	if a == nil || a.MetricsAddr() == "" {
		c.T.Fatalf("agent %d runs no metrics listener (Options.AgentMetrics)", i)
	}
	return "http://" + a.MetricsAddr()
}

var opsClient = &http.Client{Timeout: 10 * time.Second}

// AgentScrape scrapes agent i's /metrics and parses the text format, as
// Prometheus would, into its metric families by name.
func (c *Cluster) AgentScrape(i int) map[string]*dto.MetricFamily {
	c.T.Helper()
	resp, err := opsClient.Get(c.agentListener(i) + "/metrics")
	if err != nil {
		c.T.Fatalf("scrape agent %d: %v", i, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.T.Fatalf("scrape agent %d: %s", i, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		c.T.Fatalf("scrape agent %d: not the Prometheus text format: %v", i, err)
	}
	return mfs
}

// AgentProbe asks agent i's listener for path (/healthz, /readyz) and
// returns the status code and the JSON body.
func (c *Cluster) AgentProbe(i int, path string) (int, opsserver.Status) {
	c.T.Helper()
	code, body := c.AgentGet(i, path)
	var s opsserver.Status
	if err := json.Unmarshal(body, &s); err != nil {
		c.T.Fatalf("agent %d %s: %v in %q", i, path, err, body)
	}
	return code, s
}

// Series returns the series of family name in mfs whose labels include
// every pair of match (label, value…).
func Series(mfs map[string]*dto.MetricFamily, name string, match ...string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range mfs[name].GetMetric() {
		if hasLabels(m, match) {
			out = append(out, m)
		}
	}
	return out
}

// Value is the value of the one series of family name matching match
// (label, value…): a counter's or a gauge's; ok is false when no series
// matches. More than one match is an error of the test.
func Value(mfs map[string]*dto.MetricFamily, name string, match ...string) (v float64, ok bool, err error) {
	ms := Series(mfs, name, match...)
	switch {
	case len(ms) == 0:
		return 0, false, nil
	case len(ms) > 1:
		return 0, false, fmt.Errorf("%s%v: %d series match", name, match, len(ms))
	}
	m := ms[0]
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true, nil
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true, nil
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), true, nil
	}
	return 0, false, fmt.Errorf("%s%v is neither a counter nor a gauge", name, match)
}

func hasLabels(m *dto.Metric, match []string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == match[i] && l.GetValue() == match[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
