package server

import (
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/sluice-io/sluice/shared/memlimit"
)

// agentGCPercent is the garbage collector's target an agent runs with when
// the environment sets no GOGC: heap growth of 200% of the live heap
// between collections instead of Go's 100%. A source task allocates each
// record (its value, its offset map, the producer's copy) and drops it
// once the broker acknowledges it, so the live heap stays small while the
// allocation rate is high; at Go's default the collector ran about 30
// times a second and took a quarter of the agent's CPU. Measured with the
// generator (docs/performance.md): +12–15% records/s for +10% peak RSS
// (91 → 101 MiB); 400 gave +30% for twice the peak.
const agentGCPercent = 200

// tuneAgentGC sets agentGCPercent unless GOGC is set, which wins as it
// does for any Go program.
func tuneAgentGC() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(agentGCPercent)
}

// tuneMemoryLimit gives the runtime a soft memory limit below the cgroup's
// (memlimit: a container's or a systemd unit's), unless GOMEMLIMIT is set,
// and logs what it did. A cgroup it cannot read is logged and left alone:
// the process runs as Go's default would.
func tuneMemoryLimit(log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	r, err := memlimit.Set(os.DirFS("/"), os.LookupEnv)
	if err != nil {
		log.Warn("memory limit: the cgroup's limit is unreadable, no GOMEMLIMIT set", "err", err)
		return
	}
	log.Info("memory limit: " + r.String())
}
