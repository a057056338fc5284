package dashboard

import (
	"fmt"
	"io"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ScrapedNames reads a scrape in the Prometheus text format (GET /metrics)
// and returns the series names it holds: a histogram's family as its
// _bucket, _sum and _count, a summary's as itself, _sum and _count.
func ScrapedNames(r io.Reader) (map[string]bool, error) {
	families, err := ParseScrape(r)
	if err != nil {
		return nil, err
	}
	return FamilyNames(families), nil
}

// FamilyNames returns the series names of parsed metric families, as
// ScrapedNames does.
func FamilyNames(families map[string]*dto.MetricFamily) map[string]bool {
	names := map[string]bool{}
	for name, f := range families {
		if len(f.GetMetric()) == 0 {
			continue // declared, but no series to query
		}
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names
}

// MissingFromScrape returns, sorted, the series names in used that scraped
// lacks: what a dashboard queries that the running processes do not serve.
// Pass the union of the scrapes of every process whose metrics used holds
// (ServedBy narrows used to one process's).
func MissingFromScrape(used, scraped map[string]bool) []string {
	var missing []string
	for name := range used {
		if !scraped[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing
}

// ServedBy returns the names of used that process p serves, by the
// catalogue (Kafka client metrics are served by both); a name not in the
// catalogue is kept, so that a check against a scrape reports it.
func ServedBy(used map[string]bool, p Process) map[string]bool {
	cat := CatalogueSeries()
	out := map[string]bool{}
	for name := range used {
		s, ok := cat[name]
		if !ok || s.Metric.Process == p || s.Metric.Process == Both {
			out[name] = true
		}
	}
	return out
}

// FromStartOnly returns the names of used whose metric's series exist as
// soon as a process started (Metric.FromStart); a name not in the
// catalogue is kept, so that a check against a scrape reports it.
func FromStartOnly(used map[string]bool) map[string]bool {
	cat := CatalogueSeries()
	out := map[string]bool{}
	for name := range used {
		if s, ok := cat[name]; !ok || s.Metric.FromStart() {
			out[name] = true
		}
	}
	return out
}

// deprecatedNames are exposed names that break Prometheus' conventions,
// kept for one release after their rename (docs/observability.md), each
// with its new name.
var deprecatedNames = map[string]string{
	"sluice_kafka_buffered_produce_records_total": "sluice_kafka_buffered_produce_records",
	"sluice_kafka_buffered_fetch_records_total":   "sluice_kafka_buffered_fetch_records",
}

// MisnamedFamilies returns, sorted, Sluice's families of a scrape whose
// names break Prometheus' conventions: a counter not ending in _total, a
// gauge or histogram ending in it. The deprecated names are let through
// while their new names are served beside them.
func MisnamedFamilies(families map[string]*dto.MetricFamily) []string {
	var out []string
	for name, f := range families {
		if !strings.HasPrefix(name, "sluice_") {
			continue // the Go client's own (go_…, process_…)
		}
		total := strings.HasSuffix(name, "_total")
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			if !total {
				out = append(out, name+" (a counter without _total)")
			}
		case dto.MetricType_GAUGE, dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY:
			if renamed, ok := deprecatedNames[name]; total && (!ok || families[renamed] == nil) {
				out = append(out, fmt.Sprintf("%s (a %s ending in _total)", name, strings.ToLower(f.GetType().String())))
			}
		}
	}
	sort.Strings(out)
	return out
}

// ParseScrape parses a scrape in the Prometheus text format into its
// families.
func ParseScrape(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse scrape: %w", err)
	}
	return families, nil
}
