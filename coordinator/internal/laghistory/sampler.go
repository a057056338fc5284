// Package laghistory keeps sink connectors' consumer lag per partition
// over the last hour, in memory on the leading coordinator: GET
// /sluice/connectors/{name}/lag/history. Prometheus keeps the long
// history (sluice_sink_lag); this is what a console draws without one.
//
//	leader elected ─► Run: every Config.Interval (15 s), one round (lag.Reader.AllSinks) ─► Record
//	                  each partition's ring keeps its newest Samples samples (drop oldest)
//	                  connectors no longer sinks, and partitions the round did not list, are evicted
//	leadership lost ─► Run returns; the rings are cleared and the next leader starts empty
//
// Memory is bounded: Samples samples of 16 bytes per partition (3,840
// bytes an hour), and at most MaxPartitions partitions over all connectors
// (some 38 MB); partitions beyond it are not sampled, and say so.
package laghistory

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/lag"
)

// DefaultInterval is how often the leader samples unless Config says:
// Samples samples are then the last hour.
const DefaultInterval = 15 * time.Second

// Samples is how many samples each partition keeps, the newest: one hour
// at DefaultInterval, whatever the interval.
const Samples = 240

// MaxPartitions bounds the partitions sampled over all connectors: a
// partition first seen once the bound is reached is not sampled until
// others are evicted.
const MaxPartitions = 10_000

// sampleTimeout bounds one round's reading of Kafka.
const sampleTimeout = 10 * time.Second

// Source reads every sink's lag in one round (lag.Reader).
type Source interface {
	AllSinks(ctx context.Context) ([]lag.SinkLag, error)
}

// Connectors says what a connector is: its REST type (api.TypeSink,
// api.TypeSource, or unknown when its plugin is not known), and false when
// it does not exist.
type Connectors func(name string) (typ string, exists bool)

// Config is what a Sampler works with.
type Config struct {
	// Interval is how often Run samples (default DefaultInterval).
	Interval   time.Duration
	Source     Source
	Connectors Connectors
	// Clock is the time of a sample (default time.Now).
	Clock  func() time.Time
	Logger *slog.Logger
}

// Sampler samples sinks' lag while its Run runs, and answers what it kept.
// Its methods may be called concurrently.
type Sampler struct {
	cfg Config

	mu sync.Mutex
	// since is when the current Run began (zero: not sampling).
	since time.Time
	// series are the rings, by connector then partition.
	series map[string]map[partition]*ring
	// count is the partitions kept over all connectors.
	count int
	// capped reports that the last round met MaxPartitions.
	capped bool
}

type partition struct {
	topic string
	part  int32
}

// ring is one partition's samples, oldest overwritten first.
type ring struct {
	at   [Samples]int64 // unix milliseconds
	lag  [Samples]int64
	next int // where the next sample goes
	n    int // samples held, ≤ Samples
}

func (r *ring) add(at, lag int64) {
	r.at[r.next], r.lag[r.next] = at, lag
	r.next = (r.next + 1) % Samples
	r.n = min(r.n+1, Samples)
}

// samples are the ring's samples, oldest first.
func (r *ring) samples() [][2]int64 {
	out := make([][2]int64, 0, r.n)
	for i := range r.n {
		j := (r.next - r.n + i + Samples) % Samples
		out = append(out, [2]int64{r.at[j], r.lag[j]})
	}
	return out
}

// New makes a Sampler; Run starts it.
func New(cfg Config) *Sampler {
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sampler{cfg: cfg, series: map[string]map[partition]*ring{}}
}

// Run samples every Config.Interval until ctx ends (the leader's term), then
// clears what it kept: a coordinator that no longer leads has no history
// to show, and one that leads again starts anew.
func (s *Sampler) Run(ctx context.Context) {
	s.mu.Lock()
	s.since = s.cfg.Clock().UTC()
	s.mu.Unlock()
	defer s.reset()
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		s.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *Sampler) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.since, s.series, s.count, s.capped = time.Time{}, map[string]map[partition]*ring{}, 0, false
}

// round reads every sink's lag once and records it.
func (s *Sampler) round(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	lags, err := s.cfg.Source.AllSinks(rctx)
	if err != nil {
		if ctx.Err() == nil {
			s.cfg.Logger.Warn("sampling the sinks' lag failed; the lag history misses this sample", "err", err)
		}
		return
	}
	s.Record(s.cfg.Clock(), lags)
}

// Record keeps one round's lags, sampled at at: each partition listed
// gets a sample; a connector the round did not list keeps its series
// (its group could not be read this time) unless it is no sink any more,
// and a partition its connector's listing no longer has is evicted. What
// is evicted is evicted first, so that its room goes to the round's new
// partitions.
func (s *Sampler) Record(at time.Time, lags []lag.SinkLag) {
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := map[string]map[partition]bool{}
	for _, l := range lags {
		present := map[partition]bool{}
		for _, p := range l.Partitions {
			present[partition{p.Topic, p.Partition}] = true
		}
		listed[l.Connector] = present
	}
	for name, rings := range s.series {
		present, ok := listed[name]
		if !ok {
			if typ, exists := s.cfg.Connectors(name); !exists || typ != api.TypeSink {
				s.count -= len(rings)
				delete(s.series, name)
			}
			continue
		}
		for key := range rings {
			if !present[key] {
				delete(rings, key)
				s.count--
			}
		}
	}
	capped := false
	for _, l := range lags {
		rings := s.series[l.Connector]
		if rings == nil {
			rings = map[partition]*ring{}
			s.series[l.Connector] = rings
		}
		for _, p := range l.Partitions {
			key := partition{p.Topic, p.Partition}
			r := rings[key]
			if r == nil {
				if s.count >= MaxPartitions {
					capped = true
					continue
				}
				r = &ring{}
				rings[key] = r
				s.count++
			}
			r.add(at.UnixMilli(), p.Lag)
		}
	}
	if capped && !s.capped {
		s.cfg.Logger.Warn("the lag history samples no more partitions: it holds its most", "max_partitions", MaxPartitions)
	}
	s.capped = capped
}

// History answers GET /sluice/connectors/{name}/lag/history: the
// connector's series as kept, or empty ones with a note for a source
// connector. A connector that does not exist is a 404.
func (s *Sampler) History(_ context.Context, name string) (api.LagHistory, error) {
	typ, exists := s.cfg.Connectors(name)
	if !exists {
		return api.LagHistory{}, api.Errorf(api.CodeNotFound, "Connector %s not found", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := api.LagHistory{Connector: name, IntervalMillis: s.cfg.Interval.Milliseconds(), Since: s.since, Partitions: []api.PartitionLagHistory{}}
	switch {
	case typ == api.TypeSource:
		out.Note = "a source connector has no consumer lag"
		return out, nil
	case typ != api.TypeSink:
		out.Note = "the connector's plugin is not known here, so neither is what it consumes"
		return out, nil
	case s.since.IsZero():
		out.Note = "this coordinator does not sample: only the leader does"
		return out, nil
	}
	for key, r := range s.series[name] {
		out.Partitions = append(out.Partitions, api.PartitionLagHistory{Topic: key.topic, Partition: key.part, Samples: r.samples()})
	}
	slices.SortFunc(out.Partitions, func(a, b api.PartitionLagHistory) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	if s.capped && len(out.Partitions) == 0 {
		out.Note = "the lag history holds its most partitions and samples none of this connector's"
	}
	return out, nil
}
