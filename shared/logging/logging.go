// Package logging gives a Sluice process named loggers whose levels change
// while it runs, as Kafka Connect's /admin/loggers (KIP-495, KIP-976)
// changes log4j's. Every component logs through log/slog with the logger
// of its name; Kafka Connect's clients and scripts name loggers and levels
// the way log4j does, so the names are dotted and the levels are log4j's
// (ParseLevel).
//
//	Loggers (one per process): root, io.sluice.coordinator, io.sluice.agent.tasks, …
//	   │  SetLevel("io.sluice.agent", "DEBUG")
//	   ▼
//	each named logger's level (a slog.LevelVar) ─► gate ─► the process's handler
//
// A level is set on a namespace, as log4j 2's Configurator.setAllLevels
// does in Kafka Connect 4.4: the namespace gets that level, and so does every
// namespace set before whose name starts with it; a logger takes the level
// of its nearest dotted ancestor that has one (io.sluice.agent.tasks that of
// io.sluice.agent), else the root's.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
)

// Logger names. Each component logs through the logger of its name; a level
// set on a prefix (io.sluice.agent) covers every logger below it.
const (
	// Root is the root logger: every logger without a level of its own, or
	// of an ancestor, logs at its level. Its name matches in any case.
	Root = "root"
	// Coordinator logs a coordinator's start, stop and REST server.
	Coordinator = "io.sluice.coordinator"
	// Herder logs what a coordinator decides: connectors, task configs,
	// placements, agents, leadership, statuses and offsets operations.
	Herder = "io.sluice.coordinator.herder"
	// REST logs every REST call: successes at DEBUG, client errors at INFO,
	// server errors at ERROR; and each successful write a client sent,
	// at INFO ("rest write", with its operation, connector and principal).
	REST = "io.sluice.coordinator.rest"
	// Agent logs an agent's start and stop.
	Agent = "io.sluice.agent"
	// AgentTransport logs an agent's session with the leader (register,
	// heartbeats) and the commands it receives.
	AgentTransport = "io.sluice.agent.transport"
	// AgentTasks logs the tasks an agent runs.
	AgentTasks = "io.sluice.agent.tasks"
	// AgentOffsets logs the offsets operations an agent carries out.
	AgentOffsets = "io.sluice.agent.offsets"
)

// Info is one logger's level as GET /admin/loggers shows it.
type Info struct {
	// Level is the logger's level, as LevelName names it.
	Level string
	// LastModified is when SetLevel last changed the logger's level; zero
	// if it never did.
	LastModified time.Time
}

// Loggers are the named loggers of one process. It is safe for concurrent
// use.
type Loggers struct {
	handler slog.Handler
	now     func() time.Time

	mu sync.Mutex
	// levels are the namespaces that have a level of their own (log4j's
	// logger configs); the root always has one.
	levels map[string]slog.Level
	// loggers are the loggers that exist: made by Logger, or named by
	// SetLevel. Only these are listed and found.
	loggers map[string]*named
}

// named is one logger: its level, which its gate reads on every record.
type named struct {
	level        slog.LevelVar
	lastModified time.Time
}

// New returns the loggers of a process, writing through h, with the root
// logger at root. h should enable every level (NewText's does): a level
// below h's own minimum cannot be turned on at run time.
func New(h slog.Handler, root slog.Level) *Loggers {
	l := &Loggers{handler: h, now: time.Now, levels: map[string]slog.Level{Root: root}, loggers: map[string]*named{}}
	l.get(Root)
	return l
}

// NewText returns loggers writing slog's text format to w, with the root
// logger at root: what a Sluice process logs by default (--log-format
// text).
func NewText(w io.Writer, root slog.Level) *Loggers {
	return New(NewHandler(w, FormatText), root)
}

// FromLogger returns loggers writing through l's handler, with the root
// logger at the most verbose level that handler enables: what l logged, the
// named loggers log. Use it where a caller supplied a plain *slog.Logger.
func FromLogger(l *slog.Logger) *Loggers {
	h := l.Handler()
	return New(h, lowestEnabled(h))
}

// Logger returns the logger of name, made on first use. Its records carry
// the name (LoggerKey), as Kafka Connect's lines carry log4j's logger.
func (l *Loggers) Logger(name string) *slog.Logger {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := canonical(name)
	return slog.New(&gate{h: l.handler, level: &l.get(n).level, name: n})
}

// get returns the logger of name, made (at its effective level) if new.
// Callers hold mu.
func (l *Loggers) get(name string) *named {
	name = canonical(name)
	n, ok := l.loggers[name]
	if !ok {
		n = &named{}
		n.level.Set(l.effective(name))
		l.loggers[name] = n
	}
	return n
}

// Level returns the level of the logger of name, and false if no such
// logger exists. Only the root's name matches in any case.
func (l *Loggers) Level(name string) (Info, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.loggers[canonical(name)]
	if !ok {
		return Info{}, false
	}
	return n.info(), true
}

// All returns the level of every logger that is not OFF, by name, as
// Kafka Connect lists them.
func (l *Loggers) All() map[string]Info {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]Info, len(l.loggers))
	for name, n := range l.loggers {
		if n.level.Level() != LevelOff {
			out[name] = n.info()
		}
	}
	return out
}

// SetLevel sets level (a log4j name, see ParseLevel) on namespace and every
// namespace below it, making the logger of namespace if it does not exist,
// and returns the sorted names of the loggers whose level changed. Their
// last-modified time is now. An invalid level changes nothing.
func (l *Loggers) SetLevel(namespace, level string) ([]string, error) {
	lv, _, ok := ParseLevel(level)
	if !ok {
		return nil, fmt.Errorf("invalid log level %q", level)
	}
	ns := canonical(namespace)
	l.mu.Lock()
	defer l.mu.Unlock()
	// Kafka Connect 4.4 compares with the loggers it lists, which leave out
	// those that are OFF: a logger new or OFF before counts as changed.
	before := make(map[string]slog.Level, len(l.loggers))
	for name, n := range l.loggers {
		if lvl := n.level.Level(); lvl != LevelOff {
			before[name] = lvl
		}
	}
	for name := range l.levels {
		if under(name, ns) {
			l.levels[name] = lv
		}
	}
	l.levels[ns] = lv
	l.get(ns)
	now := l.now()
	var changed []string
	for name, n := range l.loggers {
		lvl := l.effective(name)
		n.level.Set(lvl)
		if old, listed := before[name]; under(name, ns) && (!listed || old != lvl) {
			n.lastModified = now
			changed = append(changed, name)
		}
	}
	sort.Strings(changed)
	return changed, nil
}

// effective is the level of the nearest dotted ancestor of name (name
// itself included) that has one, else the root's. Callers hold mu.
func (l *Loggers) effective(name string) slog.Level {
	for n := name; n != Root && n != ""; n = parent(n) {
		if lv, ok := l.levels[n]; ok {
			return lv
		}
	}
	return l.levels[Root]
}

func (n *named) info() Info {
	return Info{Level: LevelName(n.level.Level()), LastModified: n.lastModified}
}

// canonical spells the root logger's name one way: Kafka Connect accepts
// "root" in any case, and log4j 2's own name for it, "".
func canonical(name string) string {
	if name == "" || strings.EqualFold(name, Root) {
		return Root
	}
	return name
}

// under reports whether a level set on ns applies to name. As in Kafka
// Connect 4.4 it is a plain prefix match (io.sluice.agent covers
// io.sluice.agentX too); the root covers everything, and only the root
// covers the root.
func under(name, ns string) bool {
	if ns == Root {
		return true
	}
	return name != Root && strings.HasPrefix(name, ns)
}

// parent is the dotted parent of name ("" above a top-level name).
func parent(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// gate passes a record on only at or above its logger's current level,
// and names the logger on it.
type gate struct {
	h     slog.Handler
	level *slog.LevelVar
	// name is the logger's; "" once h carries it already (see WithGroup).
	name string
}

// Enabled implements slog.Handler.
func (g *gate) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= g.level.Level() && g.h.Enabled(ctx, lv)
}

// Handle implements slog.Handler. The logger's name goes last, after the
// record's own attributes, so that a line reads as before: its message,
// then what it says.
func (g *gate) Handle(ctx context.Context, r slog.Record) error {
	if g.name != "" {
		r = r.Clone()
		r.AddAttrs(slog.String(LoggerKey, g.name))
	}
	return g.h.Handle(ctx, r)
}

// WithAttrs implements slog.Handler; the result keeps following the level.
func (g *gate) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &gate{h: g.h.WithAttrs(attrs), level: g.level, name: g.name}
}

// WithGroup implements slog.Handler; the result keeps following the level.
// The logger's name is attached before the group opens: it names the
// record, not a member of the group.
func (g *gate) WithGroup(name string) slog.Handler {
	h := g.h
	if g.name != "" {
		h = h.WithAttrs([]slog.Attr{slog.String(LoggerKey, g.name)})
	}
	return &gate{h: h.WithGroup(name), level: g.level}
}
