// Package lag reads sink connectors' consumer lag from Kafka: GET
// /sluice/connectors/{name}/lag, and the lag metrics every coordinator
// publishes when scraped.
package lag

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/javaregex"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/logthrottle"
	"github.com/sluice-io/sluice/shared/records"
)

// Connectors are the connectors' configs (store.ConfigState).
type Connectors interface {
	All() []store.Connector
	Get(name string) (store.Connector, bool)
}

// Config is what a Reader needs.
type Config struct {
	Connectors Connectors
	// Type is a config's REST type: source, sink or unknown.
	Type  func(config map[string]string) string
	Admin *kadm.Client
	// Clock paces the warnings of a lag that cannot be read.
	Clock  func() time.Time
	Logger *slog.Logger
}

// Reader reads sinks' lag. The zero value is a Reader to hand the REST
// layer before the coordinator has started; Configure makes it work.
type Reader struct {
	cfg Config
	// warn rate-limits the warning of a lag that cannot be read, per
	// connector.
	warn *logthrottle.Limiter
	// latest keeps the last lag read of each sink (Latest).
	latest Latest
}

// Latest is the last lag this reader read of each sink.
func (r *Reader) Latest() *Latest { return &r.latest }

// Configure sets what the reader works with; call it once, before the
// first read.
func (r *Reader) Configure(cfg Config) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	r.cfg, r.warn = cfg, logthrottle.New(time.Minute)
}

// Lags reads the lag of every sink connector, for the lag collector;
// a connector whose lag cannot be read within ctx is left out (and
// warned about, rate-limited).
func (r *Reader) Lags(ctx context.Context) []metrics.SinkLag {
	var out []metrics.SinkLag
	for _, c := range r.cfg.Connectors.All() {
		if r.cfg.Type(c.Config) != api.TypeSink {
			continue
		}
		parts, err := r.sinkLag(ctx, c.Config, records.SinkGroupID(c.Name, c.Config))
		if err != nil {
			if r.warn.Due("lag "+c.Name, r.cfg.Clock()) {
				r.cfg.Logger.Warn("reading a sink's consumer lag failed", "connector", c.Name, "err", err)
			}
			continue
		}
		s := metrics.SinkLag{Connector: c.Name}
		for _, p := range parts {
			s.Partitions = append(s.Partitions, metrics.PartitionLag{Topic: p.Topic, Partition: p.Partition, Lag: p.Lag})
		}
		out = append(out, s)
	}
	r.latest.Record(out, r.cfg.Clock())
	r.latest.Forget(func(name string) bool { _, ok := r.cfg.Connectors.Get(name); return ok })
	return out
}

// lagTimeout bounds GET …/lag's reading of Kafka.
const lagTimeout = 30 * time.Second

// ConnectorLag answers GET /sluice/connectors/{name}/lag.
func (r *Reader) ConnectorLag(ctx context.Context, name string) (api.ConnectorLag, error) {
	c, ok := r.cfg.Connectors.Get(name)
	if !ok {
		return api.ConnectorLag{}, api.Errorf(api.CodeNotFound, "Connector %s not found", name)
	}
	switch r.cfg.Type(c.Config) {
	case api.TypeSink:
	case api.TypeSource:
		return api.ConnectorLag{}, api.Errorf(api.CodeBadRequest, "Connector %s is a source connector: lag is a sink's consumer lag", name)
	default:
		return api.ConnectorLag{}, api.Errorf(api.CodeInternal, "Failed to find any class that implements Connector and which name matches %s", c.Config["connector.class"])
	}
	lctx, cancel := context.WithTimeout(ctx, lagTimeout)
	defer cancel()
	parts, err := r.sinkLag(lctx, c.Config, records.SinkGroupID(name, c.Config))
	if err != nil {
		r.cfg.Logger.Error("reading a sink's consumer lag failed", "connector", name, "err", err)
		return api.ConnectorLag{}, api.Errorf(api.CodeInternal, "Failed to read the consumer lag of sink connector %s: %v", name, err)
	}
	out := api.ConnectorLag{Connector: name, Partitions: parts}
	for _, p := range parts {
		out.TotalLag += p.Lag
	}
	r.latest.RecordOne(name, out.TotalLag, r.cfg.Clock())
	return out, nil
}

// sinkLag is the lag of group on every partition of the topics a sink's
// config subscribes to, sorted by topic and partition. A partition the
// group committed nothing on lags by all it holds (end minus log start
// offset): Kafka Connect's sinks start at the earliest offset. A topic
// that does not exist (yet) has no partitions.
func (r *Reader) sinkLag(ctx context.Context, config map[string]string, group string) ([]api.PartitionLag, error) {
	topics, err := r.sinkTopics(ctx, config, nil)
	if err != nil || len(topics) == 0 {
		return []api.PartitionLag{}, err
	}
	ends, starts, err := r.listOffsets(ctx, topics)
	if err != nil {
		return nil, err
	}
	committed, err := offsets.KafkaReader{Admin: r.cfg.Admin}.GroupOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("fetch the committed offsets of group %s: %w", group, err)
	}
	return partitionLags(topics, ends, starts, committed), nil
}

// listOffsets lists the end and log start offsets of topics.
func (r *Reader) listOffsets(ctx context.Context, topics []string) (ends, starts kadm.ListedOffsets, err error) {
	err = kafkautil.Retry(ctx, func() error {
		var err error
		if ends, err = r.cfg.Admin.ListEndOffsets(ctx, topics...); err != nil {
			return err
		}
		if starts, err = r.cfg.Admin.ListStartOffsets(ctx, topics...); err != nil {
			return err
		}
		return errors.Join(partitionErr(ends), partitionErr(starts))
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list the offsets of %v: %w", topics, err)
	}
	return ends, starts, nil
}

// partitionLags is the lag of a group with committed offsets on every
// partition of topics that ends lists, sorted by topic and partition.
func partitionLags(topics []string, ends, starts kadm.ListedOffsets, committed kadm.OffsetResponses) []api.PartitionLag {
	out := []api.PartitionLag{}
	for _, t := range topics {
		for _, e := range ends[t] {
			if e.Err != nil {
				continue // a topic that does not exist
			}
			p := api.PartitionLag{Topic: e.Topic, Partition: e.Partition, EndOffset: e.Offset, CommittedOffset: -1}
			from := int64(0)
			if s, ok := starts.Lookup(e.Topic, e.Partition); ok && s.Err == nil {
				from = s.Offset
			}
			if o, ok := committed.Lookup(e.Topic, e.Partition); ok && o.Err == nil && o.At >= 0 {
				p.CommittedOffset, from = o.At, o.At
			}
			p.Lag = max(p.EndOffset-from, 0)
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// SinkLag is one sink connector's lag per partition.
type SinkLag struct {
	Connector  string
	Partitions []api.PartitionLag
}

// AllSinks reads the lag of every sink connector in one round: one listing
// of the end and log start offsets of all their topics together, and one
// fetch of all their groups' committed offsets. A connector whose group
// cannot be read is left out of the answer; a failed listing fails the
// round.
func (r *Reader) AllSinks(ctx context.Context) ([]SinkLag, error) {
	type sink struct {
		name, group string
		topics      []string
	}
	var sinks []sink
	var all []string // every existing topic, listed once if a topics.regex needs it
	seen := map[string]bool{}
	var topics []string
	for _, c := range r.cfg.Connectors.All() {
		if r.cfg.Type(c.Config) != api.TypeSink {
			continue
		}
		if strings.TrimSpace(c.Config["topics.regex"]) != "" && all == nil {
			listed, err := r.cfg.Admin.ListTopics(ctx)
			if err != nil {
				return nil, fmt.Errorf("list topics: %w", err)
			}
			all = append([]string{}, listed.Names()...)
		}
		ts, err := r.sinkTopics(ctx, c.Config, all)
		if err != nil {
			continue // a regex that does not compile: the connector cannot run either
		}
		sinks = append(sinks, sink{name: c.Name, group: records.SinkGroupID(c.Name, c.Config), topics: ts})
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				topics = append(topics, t)
			}
		}
	}
	if len(sinks) == 0 {
		return nil, nil
	}
	var ends, starts kadm.ListedOffsets
	if len(topics) > 0 {
		var err error
		if ends, starts, err = r.listOffsets(ctx, topics); err != nil {
			return nil, err
		}
	}
	groups := make([]string, 0, len(sinks))
	for _, s := range sinks {
		groups = append(groups, s.group)
	}
	fetched := r.cfg.Admin.FetchManyOffsets(ctx, groups...)
	out := make([]SinkLag, 0, len(sinks))
	for _, s := range sinks {
		got, ok := fetched[s.group]
		switch {
		case ok && got.Err != nil && !errors.Is(got.Err, kerr.GroupIDNotFound):
			continue
		case !ok && len(s.topics) > 0:
			continue // the group's coordinator did not answer
		}
		out = append(out, SinkLag{Connector: s.name, Partitions: partitionLags(s.topics, ends, starts, got.Fetched)})
	}
	// The leader's lag history samples every sink this way: its rounds
	// also keep the fleet listing's sink lag fresh (Latest).
	at := r.cfg.Clock()
	for _, s := range out {
		var total int64
		for _, p := range s.Partitions {
			total += p.Lag
		}
		r.latest.RecordOne(s.Connector, total, at)
	}
	return out, nil
}

// partitionErr is the first error of the listed offsets other than an
// unknown topic.
func partitionErr(l kadm.ListedOffsets) error {
	var err error
	l.Each(func(o kadm.ListedOffset) {
		if err == nil && o.Err != nil && !errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			err = o.Err
		}
	})
	return err
}

// sinkTopics are the topics a sink's config subscribes to: its topics
// list, or the existing topics its topics.regex matches whole (as Java's
// Pattern.matches does), among all when given, else listed now.
func (r *Reader) sinkTopics(ctx context.Context, config map[string]string, all []string) ([]string, error) {
	if rx := strings.TrimSpace(config["topics.regex"]); rx != "" {
		re, err := javaregex.Compile(rx)
		if err != nil {
			return nil, fmt.Errorf("topics.regex %q: %w", rx, err)
		}
		if all == nil {
			listed, err := r.cfg.Admin.ListTopics(ctx)
			if err != nil {
				return nil, fmt.Errorf("list topics: %w", err)
			}
			all = listed.Names()
		}
		var out []string
		for _, t := range all {
			if re.MatchString(t) {
				out = append(out, t)
			}
		}
		return out, nil
	}
	var out []string
	for _, t := range strings.Split(config["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out, nil
}
