package dashboard

import (
	"fmt"
	"io"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ScrapedNames reads a scrape in the Prometheus text format (GET /metrics)
// and returns the series names it holds: a histogram's family as its
// _bucket, _sum and _count, a summary's as itself, _sum and _count.
func ScrapedNames(r io.Reader) (map[string]bool, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse scrape: %w", err)
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
// The FirstFailure metrics are not required.
func MissingFromScrape(used, scraped map[string]bool) []string {
	var missing []string
	for name := range used {
		if !scraped[name] && !FirstFailure[name] {
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
