package herder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/connectors"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsets"
	"github.com/sluice-io/sluice/shared/javaregex"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/records"
)

// What the herder tells Prometheus and readiness probes. Its collectors
// read the herder's own views when scraped (states from the status topic,
// leadership from the lease, lag from Kafka), so every coordinator, leader
// or follower, publishes them, and none lags behind a push it missed.

// registerCollectors registers the scrape-time collectors on the
// configured metrics; Stop unregisters them.
func (h *Herder) registerCollectors() error {
	for _, c := range []prometheus.Collector{
		metrics.NewStateCollector(h.connectorStates),
		metrics.NewLeadershipCollector(h.leadership),
		metrics.NewLagCollector(h.sinkLags, 0, 0),
	} {
		unregister, err := h.cfg.Metrics.Register(c)
		if err != nil {
			return fmt.Errorf("register coordinator metrics: %w", err)
		}
		h.unregister = append(h.unregister, unregister)
	}
	return nil
}

// connectorStates is every connector's state and its tasks', as GET
// …/status shows them; a connector with no status yet is UNASSIGNED.
func (h *Herder) connectorStates() []metrics.ConnectorState {
	conns := h.configs.State.All()
	out := make([]metrics.ConnectorState, 0, len(conns))
	for _, c := range conns {
		cs := metrics.ConnectorState{Name: c.Name, State: v1.StateUnassigned, Tasks: map[int]string{}}
		if st, ok := h.statuses.State.Connector(c.Name); ok {
			cs.State = st.State
		}
		for _, n := range h.statuses.State.TaskIDs(c.Name) {
			if ts, ok := h.statuses.State.Task(c.Name, n); ok {
				cs.Tasks[n] = ts.State
			}
		}
		out = append(out, cs)
	}
	return out
}

// leadership is what this coordinator knows of the leadership now.
func (h *Herder) leadership() metrics.Leadership {
	leading, lease := h.Leader()
	l := metrics.Leadership{Leading: leading, Term: lease.Term}
	if leading {
		l.Agents = h.RegisteredAgents()
	}
	return l
}

// sinkLags reads the lag of every sink connector, for the lag collector;
// a connector whose lag cannot be read within ctx is left out (and
// warned about, rate-limited).
func (h *Herder) sinkLags(ctx context.Context) []metrics.SinkLag {
	var out []metrics.SinkLag
	for _, c := range h.configs.State.All() {
		if h.plugins.Type(c.Config) != v1.TypeSink {
			continue
		}
		parts, err := h.sinkLag(ctx, c.Config, records.SinkGroupID(c.Name, c.Config))
		if err != nil {
			if h.warn.Due("lag "+c.Name, time.Now()) {
				h.log.Warn("reading a sink's consumer lag failed", "connector", c.Name, "err", err)
			}
			continue
		}
		s := metrics.SinkLag{Connector: c.Name}
		for _, p := range parts {
			s.Partitions = append(s.Partitions, metrics.PartitionLag{Topic: p.Topic, Partition: p.Partition, Lag: p.Lag})
		}
		out = append(out, s)
	}
	return out
}

// lagTimeout bounds GET …/lag's reading of Kafka.
const lagTimeout = 30 * time.Second

// ConnectorLag answers GET /sluice/connectors/{name}/lag.
func (h *Herder) ConnectorLag(ctx context.Context, name string) (v1.ConnectorLag, error) {
	c, ok := h.configs.State.Get(name)
	if !ok {
		return v1.ConnectorLag{}, connectors.NotFound(name)
	}
	switch h.plugins.Type(c.Config) {
	case v1.TypeSink:
	case v1.TypeSource:
		return v1.ConnectorLag{}, v1.Errorf(v1.CodeBadRequest, "Connector %s is a source connector: lag is a sink's consumer lag", name)
	default:
		return v1.ConnectorLag{}, v1.Errorf(v1.CodeInternal, "Failed to find any class that implements Connector and which name matches %s", c.Config["connector.class"])
	}
	lctx, cancel := context.WithTimeout(ctx, lagTimeout)
	defer cancel()
	parts, err := h.sinkLag(lctx, c.Config, records.SinkGroupID(name, c.Config))
	if err != nil {
		h.log.Error("reading a sink's consumer lag failed", "connector", name, "err", err)
		return v1.ConnectorLag{}, v1.Errorf(v1.CodeInternal, "Failed to read the consumer lag of sink connector %s: %v", name, err)
	}
	out := v1.ConnectorLag{Connector: name, Partitions: parts}
	for _, p := range parts {
		out.TotalLag += p.Lag
	}
	return out, nil
}

// sinkLag is the lag of group on every partition of the topics a sink's
// config subscribes to, sorted by topic and partition. A partition the
// group committed nothing on lags by all it holds (end minus log start
// offset): Kafka Connect's sinks start at the earliest offset. A topic
// that does not exist (yet) has no partitions.
func (h *Herder) sinkLag(ctx context.Context, config map[string]string, group string) ([]v1.PartitionLag, error) {
	topics, err := h.sinkTopics(ctx, config)
	if err != nil || len(topics) == 0 {
		return []v1.PartitionLag{}, err
	}
	var ends, starts kadm.ListedOffsets
	err = kafkautil.Retry(ctx, func() error {
		var err error
		if ends, err = h.admin.ListEndOffsets(ctx, topics...); err != nil {
			return err
		}
		if starts, err = h.admin.ListStartOffsets(ctx, topics...); err != nil {
			return err
		}
		return errors.Join(partitionErr(ends), partitionErr(starts))
	})
	if err != nil {
		return nil, fmt.Errorf("list the offsets of %v: %w", topics, err)
	}
	committed, err := offsets.KafkaReader{Admin: h.admin}.GroupOffsets(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("fetch the committed offsets of group %s: %w", group, err)
	}
	out := []v1.PartitionLag{}
	ends.Each(func(e kadm.ListedOffset) {
		if e.Err != nil {
			return // a topic that does not exist
		}
		p := v1.PartitionLag{Topic: e.Topic, Partition: e.Partition, EndOffset: e.Offset, CommittedOffset: -1}
		from := int64(0)
		if s, ok := starts.Lookup(e.Topic, e.Partition); ok && s.Err == nil {
			from = s.Offset
		}
		if o, ok := committed.Lookup(e.Topic, e.Partition); ok && o.Err == nil && o.At >= 0 {
			p.CommittedOffset, from = o.At, o.At
		}
		p.Lag = max(p.EndOffset-from, 0)
		out = append(out, p)
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
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
// Pattern.matches does).
func (h *Herder) sinkTopics(ctx context.Context, config map[string]string) ([]string, error) {
	if rx := strings.TrimSpace(config["topics.regex"]); rx != "" {
		re, err := javaregex.Compile(rx)
		if err != nil {
			return nil, fmt.Errorf("topics.regex %q: %w", rx, err)
		}
		all, err := h.admin.ListTopics(ctx)
		if err != nil {
			return nil, fmt.Errorf("list topics: %w", err)
		}
		var out []string
		for _, t := range all.Names() {
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

// readyCatchUp bounds the read of the topics' ends a readiness check does.
const readyCatchUp = 2 * time.Second

// Readiness answers GET /readyz: ready once the coordinator started and
// reads its config and status topics to their end within readyCatchUp, so
// that it answers reads truthfully; otherwise a 503 saying which is
// missing. NATS and the leader do not decide it: a coordinator cut off from
// NATS, or in a cluster whose leader is away, still answers every read
// (writes answer a retryable 503 at once), and taking every coordinator out
// of its Service during a NATS outage would refuse those reads too. Checks
// in the answer show them anyway.
func (h *Herder) Readiness(ctx context.Context) (v1.Readiness, error) {
	if !h.ready.Load() {
		return v1.Readiness{}, v1.Errorf(v1.Code(http.StatusServiceUnavailable), "Coordinator is still starting up: it has not read its config, status and offsets topics yet")
	}
	leading, lease := h.Leader()
	checks := []v1.HealthCheck{{Name: "started", OK: true, Required: true}}
	kafka := v1.HealthCheck{Name: "kafka", OK: true, Required: true}
	cctx, cancel := context.WithTimeout(ctx, readyCatchUp)
	defer cancel()
	if err := h.CatchUp(cctx); err != nil {
		kafka.OK, kafka.Message = false, fmt.Sprintf("Coordinator has not caught up with its config and status topics within %s: %v", readyCatchUp, err)
	}
	checks = append(checks, kafka, h.natsCheck(), leaderCheck(leading, h.elector != nil && h.elector.IsLeader(), lease))
	if !kafka.OK {
		return v1.Readiness{}, v1.Errorf(v1.Code(http.StatusServiceUnavailable), "%s", kafka.Message)
	}
	out := v1.Readiness{Status: "ready", Role: "follower", Leader: leaderAddr(lease), Checks: checks}
	if leading {
		out.Role = "leader"
	}
	return out, nil
}

// natsCheck says whether the coordinator's NATS connection is up: without
// it, it can neither lead nor learn who leads, so writes answer 503.
func (h *Herder) natsCheck() v1.HealthCheck {
	c := v1.HealthCheck{Name: "nats", OK: true}
	if h.nc == nil || !h.nc.IsConnected() {
		c.OK, c.Message = false, "not connected to NATS: writes answer 503 until it is back; reads are served"
		if h.nc != nil && h.nc.LastError() != nil {
			c.Message += " (last error: " + h.nc.LastError().Error() + ")"
		}
	}
	return c
}

// leaderCheck says whether a leader is known: without one, writes answer
// 503 (nothing could apply them), reads are served.
func leaderCheck(leading, elected bool, lease v1.LeaderLease) v1.HealthCheck {
	c := v1.HealthCheck{Name: "leader", OK: true}
	switch {
	case lease.Term == 0:
		c.OK, c.Message = false, "no leader is known: no coordinator holds the leadership lease; writes answer 503 until one does"
	case !leading && elected:
		c.OK, c.Message = false, fmt.Sprintf("elected leader (term %d) and still taking up leadership", lease.Term)
	}
	return c
}
