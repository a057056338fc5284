// Package connectors is the connectors service: a connector's lifecycle
// (create, config, stop, pause, resume, restart, delete, rename), its
// status reads, and the admission of what a config may touch — validation
// by its plugin, reserved topics, tenancy, consumer groups, size limits —
// with the choice of plugin (a built-in Go plugin or an agent's Java one).
//
//	REST ─► Service ─► Admission (validate, tenancy, reserved, size) ─► lock(name)
//	     ─► Writer (config topic, one transaction) ─► Runner.Trigger (reconcile)
//
// Requests on one connector are applied one at a time (Locks); different
// connectors never wait for each other. Route and name authorization stay
// in the REST layer's middleware: what is admitted here is the content of
// an effective config (the merged config after a PATCH, a rollout's patch,
// a moved connector's).
package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/coordinator/internal/store"
	"github.com/sluice-io/sluice/coordinator/internal/tenants"
	"github.com/sluice-io/sluice/shared/faults"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Config is what the service is built from: the cluster's settings and
// the ports to the rest of the coordinator (ports.go).
type Config struct {
	// WorkerID is shown as the worker_id of the statuses the service
	// writes (a restart's RESTARTING).
	WorkerID string
	// GroupID is the cluster's group id: it bounds connector names and
	// names transactional ids.
	GroupID string
	// OffsetsTopic is the worker's offsets topic.
	OffsetsTopic string
	// ReservedTopics are the cluster's own topics, each with what it is:
	// no connector may produce to or consume from one (reserved.go).
	ReservedTopics map[string]string
	// Tenants are the teams of the cluster and what their connectors may
	// touch (tenancy.go); nil: none.
	Tenants *tenants.Tenants
	// Overrides judges connectors' client config overrides.
	Overrides clientoverrides.Policy
	// Providers resolve config providers' placeholders for validation,
	// each config within its tenant's secrets (nil: they stay as they are).
	Providers *configprovider.Transformer
	// ExactlyOnce: exactly-once source support is on in the cluster.
	ExactlyOnce bool
	// Term is the current leadership term (0: following), sent with every
	// call to an agent.
	Term func() int64

	// Registry holds the built-in plugins.
	Registry *plugins.Registry
	// The ports (ports.go).
	Configs     Configs
	Writer      Writer
	Locks       Locks
	Agents      Agents
	RPC         HostRPC
	Statuses    Statuses
	Runner      Runner
	Offsets     Offsets
	OffsetSteps OffsetSteps

	// Faults injects a test's faults at the steps of a create with initial
	// offsets and of a move (faults.go; nil: none).
	Faults faults.Injector
	Logger *slog.Logger
}

// Service answers the lifecycle operations of connectors.
type Service struct {
	cfg     Config
	log     *slog.Logger
	plugins *Plugins
	admit   *Admission
	create  creator
}

// New makes the service, with its plugin chooser and admission.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Term == nil {
		cfg.Term = func() int64 { return 0 }
	}
	p := &Plugins{reg: cfg.Registry, agents: cfg.Agents, configs: cfg.Configs, rpc: cfg.RPC, term: cfg.Term}
	s := &Service{cfg: cfg, log: cfg.Logger, plugins: p, admit: &Admission{cfg: cfg, plugins: p}}
	s.create = creator{s: s}
	return s
}

// Plugins is the service's plugin chooser.
func (s *Service) Plugins() *Plugins { return s.plugins }

// Admission is the service's validation and admission of configs.
func (s *Service) Admission() *Admission { return s.admit }

// StaleMessage is Kafka Connect's 409 for a request that raced a change of
// configuration or, in Sluice, of leadership.
const StaleMessage = "Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)"

// WriteFailed turns a failed write into the REST error: a 409 when this
// coordinator lost leadership mid-request (it may no longer write) or the
// fleet record the write changes moved on meanwhile (store.ErrStale), a 413
// for records the config topic cannot take (the limit changed since the
// request was checked), a 500 naming the operation otherwise.
func WriteFailed(err error, what string, args ...any) error {
	if errors.Is(err, store.ErrNotLeader) || errors.Is(err, kafkautil.ErrFenced) || errors.Is(err, store.ErrStale) {
		return api.Errorf(api.CodeConflict, StaleMessage)
	}
	if tl := (*store.TooLargeError)(nil); errors.As(err, &tl) {
		return api.Errorf(api.CodeTooLarge, "%s: %v", fmt.Sprintf(what, args...), err)
	}
	return api.Errorf(api.CodeInternal, "%s: %v", fmt.Sprintf(what, args...), err)
}

// NotFound is the 404 of a connector a read or a config change names.
func NotFound(name string) error { return api.Errorf(api.CodeNotFound, "Connector %s not found", name) }

// unknown is the 404 of a connector a state change names.
func unknown(name string) error { return api.Errorf(api.CodeNotFound, "Unknown connector %s", name) }

// step runs fn unless the injector fails the step's point first. The
// steps' callers hold no context for the question (each step bounds its
// own work): the point is asked without a deadline.
func (s *Service) step(name string, fn func() error) error {
	return faults.Step(context.Background(), s.cfg.Faults, stepPoints[name], fn)
}
