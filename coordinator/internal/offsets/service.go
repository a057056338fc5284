// Package offsets is the coordinator's offsets service: it reads and
// changes connectors' positions — Kafka Connect's GET, PATCH and DELETE
// …/offsets (KIP-875) and Sluice's own preview, reset-to, undo and restore
// (docs/offsets.md) — and records every change in the offsets history.
//
//	REST ─► Service ─► connector lock ─► checks (STOPPED, request, partitions)
//	          │                                   │
//	          │      Calls: every agent confirms the tasks stopped
//	          │      Recorder: pending history entry
//	          │      the connector's alterOffsets hook (Go here, Java on an agent)
//	          │      Calls: one agent writes the change (fenced, one transaction)
//	          └────► Recorder: the entry marked applied or failed
//
// A change is made one at a time per connector: the service takes the
// connector's lock (Locks), which the connector lifecycle takes too, so no
// config write or delete runs between a change's checks and its write.
//
// Lock order: a connector's lock, then whatever lock the Agents, Plugins
// and Hosts ports take inside (the herder's registry mutex); never the
// reverse.
package offsets

import (
	"context"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/coordinator/internal/metrics"
	"github.com/sluice-io/sluice/coordinator/internal/offsetval"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/offsetstore"
	"github.com/sluice-io/sluice/shared/records"
	"github.com/sluice-io/sluice/shared/wire"
)

// Config is what the service is built from: the cluster's settings and
// the ports to the rest of the coordinator.
type Config struct {
	// GroupID is the cluster's group id, which names transactional ids.
	GroupID string
	// OffsetsTopic is the worker's offsets topic.
	OffsetsTopic string
	// ClusterID is the Kafka cluster's id, recorded in topic marks.
	ClusterID string
	// AgentLease is how long an agent that stops sending heartbeats
	// holds its lease; TaskShutdownTimeout how long tasks get to stop.
	AgentLease          time.Duration
	TaskShutdownTimeout time.Duration
	// Term is the current leadership term, which agents check.
	Term func() int64

	// The ports to the rest of the coordinator (ports.go).
	Connectors Connectors
	Locks      Locks
	Plugins    Plugins
	Hosts      Hosts
	Agents     Agents
	RPC        RPC
	Reader     Reader
	// History records the changes; nil: none is recorded, and the history
	// endpoints answer that it is off.
	History History
	Marks   TopicMarks

	// Admin and TopicClient reach the brokers for what no port reads:
	// topics' partitions, visibility of a change, topic creation.
	Admin       *kadm.Client
	TopicClient *kgo.Client
	// Stores follow the offsets topics (the worker's and connectors' own).
	Stores *offsetstore.Registry
	// Reserved are the topics no connector may touch, each with what it is.
	Reserved func() map[string]string
	// MayCreate refuses the creation of a connector's own offsets topic
	// when Sluice may not create it (creation off, or it vanished).
	MayCreate func(topic string) error
	// Providers resolve config providers' placeholders (nil: none).
	Providers *configprovider.Transformer
	// Metrics records the operations (nil: none).
	Metrics *metrics.Metrics
	// Principal names the caller of a request, as the audit trail does.
	Principal func(ctx context.Context) string
	// Faults injects a test's faults at the service's fault points
	// (faults.Offsets…; nil: none): a seam for tests that prove a failed
	// change loses nothing.
	Faults faults.Injector
	// Clock is where time is read (nil: the wall clock).
	Clock  Clock
	Logger *slog.Logger
}

// Service answers the offsets operations of the REST API. The zero value
// is a Service to hand the REST layer before the coordinator has started
// (which answers no such request until it is ready); Configure makes it
// work.
type Service struct {
	cfg    Config
	log    *slog.Logger
	clock  Clock
	read   reader
	calls  *Calls
	hist   *Recorder
	topics *Topics
}

// New makes a Service of cfg.
func New(cfg Config) *Service {
	s := &Service{}
	s.Configure(cfg)
	return s
}

// Configure sets what the service works with. Call it once, before the
// first request: the coordinator does as it starts, before it reports
// ready, which orders it before every request the REST layer lets through.
func (s *Service) Configure(cfg Config) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.Principal == nil {
		cfg.Principal = func(context.Context) string { return "anonymous" }
	}
	s.cfg, s.log, s.clock = cfg, cfg.Logger, cfg.Clock
	s.read = reader{r: cfg.Reader, log: cfg.Logger}
	s.calls = &Calls{cfg: &s.cfg, log: cfg.Logger, clock: cfg.Clock}
	s.topics = &Topics{cfg: &s.cfg, log: cfg.Logger}
	s.hist = &Recorder{cfg: &s.cfg, log: cfg.Logger, read: s.read}
}

// Calls is the part that stops a connector's tasks and has agents make
// changes.
func (s *Service) Calls() *Calls { return s.calls }

// History is the part that records changes in the offsets history.
func (s *Service) History() *Recorder { return s.hist }

// Topics is the part that keeps connectors' own offsets topics.
func (s *Service) Topics() *Topics { return s.topics }

// Success messages of spec §5.6: "definite" when the connector's own hook
// took part, "framework" otherwise.
const (
	// MsgAlterDefinite answers an alter the connector's hook acknowledged.
	MsgAlterDefinite   = "The offsets for this connector have been altered successfully"
	MsgAlterFramework  = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	msgResetDefinite   = "The offsets for this connector have been reset successfully"
	msgResetFramework  = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
	notStoppedTemplate = "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint"
)

func notFound(name string) error { return api.Errorf(api.CodeNotFound, "Connector %s not found", name) }

// GetOffsets answers GET /connectors/{name}/offsets.
func (s *Service) GetOffsets(ctx context.Context, name string) (api.ConnectorOffsets, error) {
	c, ok := s.cfg.Connectors.Get(name)
	if !ok {
		return api.ConnectorOffsets{}, notFound(name)
	}
	switch s.cfg.Plugins.Type(c.Config) {
	case api.TypeSink:
		return s.read.sink(ctx, name, records.SinkGroupID(name, c.Config))
	case api.TypeSource:
		stored, _, err := s.read.source(ctx, name, s.topics.Own(c.Config), "Failed to retrieve offsets for source connector %s")
		if err != nil {
			return api.ConnectorOffsets{}, err
		}
		out := api.ConnectorOffsets{Offsets: []api.ConnectorOffset{}}
		for _, e := range stored {
			// With a topic of its own, a partition that only the
			// worker's topic holds is listed with a null offset, as
			// Kafka Connect lists it (offsetstore.View).
			if e.Live {
				out.Offsets = append(out.Offsets, api.ConnectorOffset{Partition: e.Partition, Offset: e.Offset})
			}
		}
		return out, nil
	}
	return api.ConnectorOffsets{}, api.Errorf(api.CodeInternal, "Failed to find any class that implements Connector and which name matches %s", c.Config["connector.class"])
}

// SinkOffsets are a sink connector's committed offsets in GET
// …/offsets' form; a failure is the 500 of GET.
func (s *Service) SinkOffsets(ctx context.Context, name, group string) (api.ConnectorOffsets, error) {
	return s.read.sink(ctx, name, group)
}

// checkStopped is spec §5.2 step 3: the connector exists and is STOPPED
// with no tasks.
func (s *Service) checkStopped(name string) (store.Connector, error) {
	c, ok := s.cfg.Connectors.Get(name)
	if !ok {
		return c, notFound(name)
	}
	if c.TargetState != records.TargetStopped || len(c.Tasks) != 0 {
		return c, api.Errorf(api.CodeBadRequest, notStoppedTemplate, name)
	}
	return c, nil
}

// AlterOffsets answers PATCH /connectors/{name}/offsets.
func (s *Service) AlterOffsets(ctx context.Context, name string, offsets []api.ConnectorOffset) (_ api.Message, err error) {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	defer s.Observe(metrics.KindAlter)(&err)
	c, err := s.checkStopped(name)
	if err != nil {
		return api.Message{}, err
	}
	res, err := s.apply(ctx, name, c, Change{Op: wire.OffsetsOpAlter, Entries: offsetval.Collapse(offsets),
		Meta: Meta{Operation: api.HistoryAlter}})
	if err != nil {
		return api.Message{}, err
	}
	if res.definite {
		return api.Message{Message: MsgAlterDefinite}, nil
	}
	return api.Message{Message: MsgAlterFramework}, nil
}

// ResetOffsets answers DELETE /connectors/{name}/offsets.
func (s *Service) ResetOffsets(ctx context.Context, name string) (_ api.Message, err error) {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	defer s.Observe(metrics.KindReset)(&err)
	return s.resetLocked(ctx, name)
}

// Observe starts timing an offsets operation of kind; the function it
// returns records it, ended with *err (a refusal, such as a connector not
// stopped, counts as an error). Each operation defers it after its lock
// is taken — defer s.Observe(kind)(&err) — so that the time spent waiting
// for another request on the connector is not the operation's.
func (s *Service) Observe(kind string) (done func(err *error)) {
	start := s.clock.Now()
	return func(err *error) {
		s.cfg.Metrics.ObserveOffsets(kind, s.clock.Now().Sub(start), *err)
	}
}

func (s *Service) resetLocked(ctx context.Context, name string) (api.Message, error) {
	c, err := s.checkStopped(name)
	if err != nil {
		return api.Message{}, err
	}
	res, err := s.apply(ctx, name, c, Change{Op: wire.OffsetsOpReset, Meta: Meta{Operation: api.HistoryReset}})
	if err != nil {
		return api.Message{}, err
	}
	if res.definite {
		return api.Message{Message: msgResetDefinite}, nil
	}
	return api.Message{Message: msgResetFramework}, nil
}

// ResetThen is DELETE /connectors/{name}?reset_offsets=true: reset the
// offsets with the checks of DELETE …/offsets, then run then (the delete)
// under the same lock. A failed reset runs nothing.
func (s *Service) ResetThen(ctx context.Context, name string, then func(ctx context.Context) error) error {
	unlock := s.cfg.Locks.Lock(name)
	defer unlock()
	done := s.Observe(metrics.KindReset)
	_, err := s.resetLocked(ctx, name)
	done(&err)
	if err != nil {
		return err
	}
	return then(ctx)
}

// step runs fn, the step at point, unless the injector fails it first.
func (s *Service) step(ctx context.Context, at faults.Point, fn func() error) error {
	return faults.Step(ctx, s.cfg.Faults, at, fn)
}
