package herder

// Log levels: GET and PUT /admin/loggers (KIP-495, KIP-976).
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

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "github.com/sluice-io/sluice/api/v1"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/shared/logging"
)

// LoggerLevels answers GET /admin/loggers: the level of every logger of this
// process that is not OFF.
func (h *Herder) LoggerLevels(context.Context) (map[string]v1.LoggerLevel, error) {
	all := h.cfg.Loggers.All()
	out := make(map[string]v1.LoggerLevel, len(all))
	for name, info := range all {
		out[name] = loggerLevel(info)
	}
	return out, nil
}

// LoggerLevel answers GET /admin/loggers/{name}.
func (h *Herder) LoggerLevel(_ context.Context, name string) (v1.LoggerLevel, error) {
	info, ok := h.cfg.Loggers.Level(name)
	if !ok {
		return v1.LoggerLevel{}, v1.Errorf(v1.CodeNotFound, "Logger %s not found.", name)
	}
	return loggerLevel(info), nil
}

// SetWorkerLoggerLevel sets a level on this process's loggers only and
// returns the names of those whose level changed.
func (h *Herder) SetWorkerLoggerLevel(_ context.Context, namespace, level string) ([]string, error) {
	h.log.Info("setting log level", "namespace", namespace, "log_level", level, "scope", "worker")
	changed, err := h.cfg.Loggers.SetLevel(namespace, level)
	if err != nil {
		return nil, fmt.Errorf("set the level of logger %s: %w", namespace, err)
	}
	return changed, nil
}

// SetClusterLoggerLevel writes a cluster-wide level to the config topic; it
// returns once this coordinator (the leader) has read and set it.
func (h *Herder) SetClusterLoggerLevel(ctx context.Context, namespace, level string) error {
	if err := h.configs.Apply(ctx, store.SetLoggerLevel{Namespace: namespace, Level: level}); err != nil {
		return writeFailed(err, "Error writing logger level to Kafka")
	}
	return nil
}

// applyClusterLevel sets a cluster-wide level read from the config topic on
// this process's loggers. A level Sluice does not know (a record written by
// hand) is skipped, as Kafka Connect skips it.
func (h *Herder) applyClusterLevel(namespace, level string) {
	h.log.Info("setting log level", "namespace", namespace, "log_level", level, "scope", "cluster")
	if _, err := h.cfg.Loggers.SetLevel(namespace, level); err != nil {
		h.log.Warn("ignoring a cluster log level", "namespace", namespace, "log_level", level, "err", err)
	}
}

func loggerLevel(info logging.Info) v1.LoggerLevel {
	l := v1.LoggerLevel{Level: info.Level}
	if !info.LastModified.IsZero() {
		ms := info.LastModified.UnixMilli()
		l.LastModified = &ms
	}
	return l
}

// loggerPush holds the agents that registered since the leader last sent
// log levels: each gets the whole list again, since it may have restarted
// with its loggers at their defaults.
type loggerPush struct {
	kick       chan struct{}
	mu         sync.Mutex
	registered map[string]bool
}

// loggersRegistered notes that agent registered, so it is sent the
// cluster's log levels.
func (h *Herder) loggersRegistered(agent string) {
	p := &h.loggerPush
	p.mu.Lock()
	p.registered[agent] = true
	p.mu.Unlock()
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// takeRegistered returns and forgets the agents noted by loggersRegistered.
func (p *loggerPush) takeRegistered() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.registered))
	for a := range p.registered {
		out = append(out, a)
	}
	clear(p.registered)
	return out
}

// loggersLoop keeps every registered agent at the cluster's log levels
// while this coordinator leads term: it sends the list to each agent that
// has not acknowledged its current version, when the list changes, when an
// agent registers, and on a tick for those a send failed to reach.
func (h *Herder) loggersLoop(ctx context.Context, term int64) {
	acked := map[string]int64{} // agent → version of the list it has
	tick := time.NewTicker(max(h.cfg.AgentLease/2, 100*time.Millisecond))
	defer tick.Stop()
	for {
		changed := h.configs.Loggers.Changed()
		for _, a := range h.loggerPush.takeRegistered() {
			delete(acked, a)
		}
		h.pushLoggers(ctx, term, acked)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-h.loggerPush.kick:
		case <-tick.C:
		}
	}
}

// pushLoggers sends the cluster's log levels to every registered agent
// whose acked version is not the list's, all at once, and records who
// acknowledged. With no cluster-wide level there is nothing to send.
func (h *Herder) pushLoggers(ctx context.Context, term int64, acked map[string]int64) {
	agents := h.agents.Registered()
	live := make(map[string]bool, len(agents))
	for _, a := range agents {
		live[a] = true
	}
	for a := range acked {
		if !live[a] {
			delete(acked, a) // lost or left: it registers again before it counts
		}
	}
	levels, version := h.configs.Loggers.All()
	if len(levels) == 0 {
		return
	}
	req := v1.LoggersRequest{Term: term, Levels: make([]v1.LoggerSetting, len(levels))}
	for i, l := range levels {
		req.Levels[i] = v1.LoggerSetting{Logger: l.Namespace, Level: l.Level}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, a := range agents {
		if v, ok := acked[a]; ok && v == version {
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := h.rpc.Loggers(cctx, a, req); err != nil {
				h.log.Debug("log levels not delivered to agent; retrying", "agent", a, "err", err)
				return
			}
			mu.Lock()
			acked[a] = version
			mu.Unlock()
		})
	}
	wg.Wait()
}
