package herder

import (
	"context"
	"net/http"
	"strings"

	v1 "github.com/sluice-io/sluice/api/v1"
)

// ServerInfo answers GET /.
func (h *Herder) ServerInfo(ctx context.Context) (v1.ServerInfo, error) {
	return v1.ServerInfo{Version: h.cfg.Version, Commit: h.cfg.Commit, KafkaClusterID: h.clusterID}, nil
}

// Health answers GET /health.
func (h *Herder) Health(ctx context.Context) (v1.Health, int) {
	if !h.ready.Load() {
		return v1.Health{Status: "starting", Message: "Worker is still starting up."}, http.StatusServiceUnavailable
	}
	if err := h.Wedged(); err != nil {
		// KIP-1017's answer for a worker that cannot handle requests: the
		// liveness probe restarts it. Kafka or NATS being away is never
		// this (readiness and GET /readyz's checks say so).
		h.log.Error("coordinator wedged", "err", err)
		return v1.Health{Status: "unhealthy", Message: "Worker was unable to handle this request and may be unable to handle other requests."}, http.StatusInternalServerError
	}
	health := v1.Health{Status: "healthy", Message: "Worker has completed startup and is ready to handle requests.", Role: "follower"}
	leading, lease := h.Leader()
	if leading {
		health.Role = "leader"
	}
	health.Leader = leaderAddr(lease)
	return health, http.StatusOK
}

// leaderAddr is the REST address (host:port) of lease's leader.
func leaderAddr(lease v1.LeaderLease) string {
	return strings.TrimPrefix(strings.TrimPrefix(lease.URL, "http://"), "https://")
}
