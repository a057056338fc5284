// Package loglevels answers GET and PUT /admin/loggers (KIP-495, KIP-976)
// and, while the coordinator leads, keeps every agent at the cluster's log
// levels.
//
//	worker scope:  REST ─► this coordinator's loggers (sluice dev: its agents' too)
//	cluster scope: REST ─► leader ─► SetLoggerLevel ─► config topic
//	                 ├─► every coordinator, as it reads the record (and at every start)
//	                 └─► leader ─► loggers endpoint of each agent: the whole list when the
//	                               agent registers and whenever the list changes
//
// Kafka Connect applies a cluster-wide level only on the workers running
// when it is written; Sluice applies the levels the config topic holds at
// every start too, so a coordinator or agent that restarts or joins later
// logs as the rest of the cluster does.
package loglevels

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/logging"
	"github.com/sluice-io/sluice/shared/wire"
)

// Levels is the cluster-wide levels the config topic holds
// (store.LoggerLevels).
type Levels interface {
	// All is the levels in the order set, and the list's version.
	All() ([]store.LoggerLevel, int64)
	// Changed is closed at the list's next change.
	Changed() <-chan struct{}
}

// Agents are the agents registered with the leader, and how to send one
// the levels.
type Agents interface {
	Registered() []string
	Loggers(ctx context.Context, agent string, req wire.LoggersRequest) error
}

// Config is what a Service needs.
type Config struct {
	// Loggers are this process's named loggers.
	Loggers *logging.Loggers
	// Levels are the cluster-wide levels read from the config topic.
	Levels Levels
	// Apply writes a command through the leader's write path.
	Apply func(ctx context.Context, cmds ...store.Command) error
	// Agents are the leader's agents.
	Agents Agents
	// Resend is how often levels that did not reach an agent are sent
	// again.
	Resend time.Duration
	// WriteFailed turns a failed write into its REST error.
	WriteFailed func(err error, what string, args ...any) error
	Logger      *slog.Logger
}

// Service answers the loggers endpoints and pushes the cluster's levels to
// agents. The zero value is a Service to hand the REST layer before the
// coordinator has started; Configure makes it work.
type Service struct {
	cfg Config
	// kick wakes the push loop when an agent registered; registered are
	// the agents that did since the last push: each gets the whole list
	// again, since it may have restarted with its loggers at their
	// defaults.
	kick       chan struct{}
	mu         sync.Mutex
	registered map[string]bool
}

// New makes a configured Service.
func New(cfg Config) *Service {
	s := &Service{}
	s.Configure(cfg)
	return s
}

// Configure sets what the service works with; call it once, before the
// first request and before Run.
func (s *Service) Configure(cfg Config) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s.cfg = cfg
	s.kick = make(chan struct{}, 1)
	s.registered = map[string]bool{}
}

// LoggerLevels answers GET /admin/loggers: the level of every logger of this
// process that is not OFF.
func (s *Service) LoggerLevels(context.Context) (map[string]wire.LoggerLevel, error) {
	all := s.cfg.Loggers.All()
	out := make(map[string]wire.LoggerLevel, len(all))
	for name, info := range all {
		out[name] = loggerLevel(info)
	}
	return out, nil
}

// LoggerLevel answers GET /admin/loggers/{name}.
func (s *Service) LoggerLevel(_ context.Context, name string) (wire.LoggerLevel, error) {
	info, ok := s.cfg.Loggers.Level(name)
	if !ok {
		return wire.LoggerLevel{}, api.Errorf(api.CodeNotFound, "Logger %s not found.", name)
	}
	return loggerLevel(info), nil
}

// SetWorkerLoggerLevel sets a level on this process's loggers only and
// returns the names of those whose level changed.
func (s *Service) SetWorkerLoggerLevel(_ context.Context, namespace, level string) ([]string, error) {
	s.cfg.Logger.Info("setting log level", "namespace", namespace, "log_level", level, "scope", "worker")
	changed, err := s.cfg.Loggers.SetLevel(namespace, level)
	if err != nil {
		return nil, fmt.Errorf("set the level of logger %s: %w", namespace, err)
	}
	return changed, nil
}

// SetClusterLoggerLevel writes a cluster-wide level to the config topic; it
// returns once this coordinator (the leader) has read and set it.
func (s *Service) SetClusterLoggerLevel(ctx context.Context, namespace, level string) error {
	if err := s.cfg.Apply(ctx, store.SetLoggerLevel{Namespace: namespace, Level: level}); err != nil {
		return s.cfg.WriteFailed(err, "Error writing logger level to Kafka")
	}
	return nil
}

// ApplyClusterLevel sets a cluster-wide level read from the config topic on
// this process's loggers. A level Sluice does not know (a record written by
// hand) is skipped, as Kafka Connect skips it.
func (s *Service) ApplyClusterLevel(namespace, level string) {
	s.cfg.Logger.Info("setting log level", "namespace", namespace, "log_level", level, "scope", "cluster")
	if _, err := s.cfg.Loggers.SetLevel(namespace, level); err != nil {
		s.cfg.Logger.Warn("ignoring a cluster log level", "namespace", namespace, "log_level", level, "err", err)
	}
}

func loggerLevel(info logging.Info) wire.LoggerLevel {
	l := wire.LoggerLevel{Level: info.Level}
	if !info.LastModified.IsZero() {
		ms := info.LastModified.UnixMilli()
		l.LastModified = &ms
	}
	return l
}

// Registered notes that agent registered, so it is sent the cluster's log
// levels.
func (s *Service) Registered(agent string) {
	s.mu.Lock()
	s.registered[agent] = true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// takeRegistered returns and forgets the agents noted by Registered.
func (s *Service) takeRegistered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.registered))
	for a := range s.registered {
		out = append(out, a)
	}
	clear(s.registered)
	return out
}

// Run keeps every registered agent at the cluster's log levels while this
// coordinator leads term, until ctx ends: it sends the list to each agent
// that has not acknowledged its current version, when the list changes,
// when an agent registers, and every Resend for those a send failed to
// reach.
func (s *Service) Run(ctx context.Context, term int64) {
	acked := map[string]int64{} // agent → version of the list it has
	tick := time.NewTicker(max(s.cfg.Resend, 100*time.Millisecond))
	defer tick.Stop()
	for {
		changed := s.cfg.Levels.Changed()
		for _, a := range s.takeRegistered() {
			delete(acked, a)
		}
		s.push(ctx, term, acked)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-s.kick:
		case <-tick.C:
		}
	}
}

// push sends the cluster's log levels to every registered agent whose
// acked version is not the list's, all at once, and records who
// acknowledged. With no cluster-wide level there is nothing to send.
func (s *Service) push(ctx context.Context, term int64, acked map[string]int64) {
	agents := s.cfg.Agents.Registered()
	live := make(map[string]bool, len(agents))
	for _, a := range agents {
		live[a] = true
	}
	for a := range acked {
		if !live[a] {
			delete(acked, a) // lost or left: it registers again before it counts
		}
	}
	levels, version := s.cfg.Levels.All()
	if len(levels) == 0 {
		return
	}
	req := wire.LoggersRequest{Term: term, Levels: make([]wire.LoggerSetting, len(levels))}
	for i, l := range levels {
		req.Levels[i] = wire.LoggerSetting{Logger: l.Namespace, Level: l.Level}
	}
	// Who to send to is decided before any send starts: the sends record
	// their acknowledgements in acked as they come.
	var due []string
	for _, a := range agents {
		if v, ok := acked[a]; !ok || v != version {
			due = append(due, a)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range due {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := s.cfg.Agents.Loggers(cctx, a, req); err != nil {
				s.cfg.Logger.Debug("log levels not delivered to agent; retrying", "agent", a, "err", err)
				return
			}
			mu.Lock()
			acked[a] = version
			mu.Unlock()
		})
	}
	wg.Wait()
}
