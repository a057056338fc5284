package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/agent/internal/metrics"
	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/clientoverrides"
	"github.com/sluice-io/sluice/connect/configprovider"
	"github.com/sluice-io/sluice/shared/brokerwatch"
	"github.com/sluice-io/sluice/shared/kafkautil"
	"github.com/sluice-io/sluice/shared/tenancy"
	"github.com/sluice-io/sluice/shared/topicguard"
	"github.com/sluice-io/sluice/shared/wire"
)

// finalCommitTimeout bounds the last offset commit of a stopping task.
const finalCommitTimeout = 15 * time.Second

// runner is the type-specific part of a task: a source or a sink.
type runner interface {
	// open starts the plugin's task and the Kafka clients.
	open(ctx context.Context) error
	// step processes one batch; it should return within about a second.
	step(ctx context.Context) error
	// commit makes processed records' offsets durable.
	commit(ctx context.Context) error
	// close releases clients and stops the plugin's task.
	close() error
}

// positioned is a runner that can tell whether it holds a position (source
// offsets, a sink's consumed offsets) not yet committed. The task loop
// commits the first one at once instead of a flush interval later, so a
// task's offsets are readable (GET /connectors/<name>/offsets) as soon as
// it has any; later ones wait for the interval. A commit is a commit: the
// first is made exactly as every other, under the same transactional id
// or group generation, so nothing about fencing changes.
type positioned interface {
	uncommitted() bool
}

// holdsPosition reports whether r holds a position not yet committed.
func holdsPosition(r runner) bool {
	p, ok := r.(positioned)
	return ok && p.uncommitted()
}

// boundaryOwner is a runner that decides its own commits (an exactly-once
// source, whose transaction boundary does): the task loop leaves the flush
// interval's commits to it, and tells it when the task pauses or stops.
type boundaryOwner interface {
	ownsCommits() bool
	finishTransaction(ctx context.Context, final bool) error
}

// commitStage says why the task loop commits.
type commitStage int

const (
	commitPeriodic commitStage = iota
	commitPause
	commitFinal
)

type task struct {
	cfg        Config
	id         api.TaskID
	generation int64
	// term is the leadership term that assigned this instance: with the
	// generation it orders assignments and revokes, so an older command
	// never acts on a newer instance.
	term       int64
	assignment wire.TaskAssignment
	log        *slog.Logger
	// conn and props are the assignment's connector and task configs with
	// the config providers' placeholders resolved, as the plugin and the
	// Kafka clients see them; set by newRunner, in the task's goroutine.
	conn, props map[string]string

	// reportMu orders a state change and its report with the broker
	// watch's (brokerstatus.go): a report must never overtake a later one.
	reportMu sync.Mutex
	mu       sync.Mutex
	paused   bool
	state    string
	trace    string
	wake     chan struct{}

	// metrics are the task's series (nil: none).
	metrics *metrics.Task
	// gauges is the plugin's task while it reports gauges of itself
	// (gauges.go); guarded by mu.
	gauges connect.GaugeReporter
	// signals is the plugin's source task while it runs, for the signal
	// command (signals.go); guarded by mu.
	signals any
	// hosted is a host task that can tell it lost its process (nil: not
	// one); set by newRunner.
	hosted interface{ Err() error }
	// guard holds the topics the task may neither produce to nor consume
	// from (topics.go).
	guard topicguard.Guard
	// brokers is whether the task's Kafka clients reach their brokers, fed
	// by every client's hook (kafkaOpts).
	brokers brokerwatch.State
	// creds are the credentials the connector overrides for its clients
	// (loadCredentials); set by newRunner.
	creds map[clientoverrides.Client]*clientoverrides.Credentials

	cancel   context.CancelFunc
	done     chan struct{}
	closeErr error
}

func newTask(cfg Config, a wire.TaskAssignment) *task {
	return &task{
		cfg:        cfg,
		id:         a.ID,
		generation: a.Generation,
		assignment: a,
		paused:     a.Paused,
		state:      api.StateUnassigned,
		wake:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		// Every line of a task names it and its connector, so that a
		// task's lines, failures included, are found by either.
		log:     cfg.Logger.With("task", a.ID.String(), "connector", a.ID.Connector, "generation", a.Generation),
		metrics: cfg.Metrics.Task(a.ID.Connector, a.ID.Task),
		guard:   reservedTopics(cfg, a),
	}
}

func (t *task) start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.run(ctx)
}

func (t *task) setPaused(p bool) {
	t.mu.Lock()
	t.paused = p
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *task) isPaused() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paused
}

// stop asks the task to stop and waits until it has, or ctx ends.
func (t *task) stop(ctx context.Context) error {
	t.cancel()
	select {
	case <-t.done:
		return t.closeErr
	case <-ctx.Done():
		return fmt.Errorf("task %s did not stop in time: %w", t.id, ctx.Err())
	}
}

func (t *task) snapshot() wire.RunningTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	return wire.RunningTask{ID: t.id, Generation: t.generation, State: t.state, Trace: t.trace, ConfigHash: t.assignment.ConfigHash}
}

// setState records and reports a state change; topics, when given, are
// reported even if the state did not change.
func (t *task) setState(state, trace string, topics ...string) {
	t.reportMu.Lock()
	defer t.reportMu.Unlock()
	t.mu.Lock()
	same := t.state == state && t.trace == trace
	t.state, t.trace = state, trace
	t.mu.Unlock()
	if same && len(topics) == 0 {
		return
	}
	t.cfg.Report(wire.StatusReport{AgentID: t.cfg.AgentID, ID: t.id, Generation: t.generation, State: state, Trace: trace, Topics: topics})
}

func (t *task) reportTopics(topics ...string) {
	t.mu.Lock()
	state, trace := t.state, t.trace
	t.mu.Unlock()
	t.setState(state, trace, topics...)
}

func (t *task) fail(err error) {
	t.log.Error("task failed", "err", err)
	t.setState(api.StateFailed, err.Error())
}

// fenceWait is how long a task that may not run waits before it asks again.
const fenceWait = 50 * time.Millisecond

func (t *task) run(ctx context.Context) {
	// The broker watch ends before done closes: the agent deletes the
	// task's series once it stopped, and a last tick must not bring them
	// back.
	wctx, wcancel := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); t.watchBrokers(wctx) }()
	defer func() { wcancel(); <-watched; close(t.done) }()
	backoff := hostRestartBackoff
	for {
		began := time.Now()
		err := t.runOnce(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		if !t.restartable(err) {
			// Failed: the task stays FAILED until it is revoked or
			// assigned anew.
			<-ctx.Done()
			return
		}
		// Its connector host died: the agent starts the host again on
		// the next use, and the task with it (docs/plugins.md). A task
		// that ran a while before its host died waits the first wait
		// again, not the longer one earlier deaths grew it to.
		if time.Since(began) > healthyHostRun {
			backoff = hostRestartBackoff
		}
		t.log.Warn("task failed with its connector host; starting it again", "connector_task", t.id.String(), "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxHostRestartBackoff)
	}
}

// The waits before a host task that failed with its host starts again.
const (
	hostRestartBackoff    = time.Second
	maxHostRestartBackoff = 30 * time.Second
	healthyHostRun        = time.Minute
)

// restartable reports whether err failed the task only because its
// connector host was lost (HostTasks.Restartable).
func (t *task) restartable(err error) bool {
	return t.hosted != nil && t.cfg.Host != nil && t.cfg.Host.Restartable(err)
}

// runOnce runs the task until it stops (nil) or fails (the error, already
// reported, its clients closed).
func (t *task) runOnce(ctx context.Context) error {
	r, err := t.newRunner()
	if err == nil {
		err = r.open(ctx)
		if err != nil {
			t.closeErr = r.close()
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			err = fmt.Errorf("start: %w", err)
			t.fail(err)
			return err
		}
		return nil
	}
	t.log.Info("task started", "connector_task", t.id.String())
	last := time.Now()
	// first: this run has not committed a position yet. Its first one is
	// committed at once, once; then every flush interval.
	first := true
	for ctx.Err() == nil {
		if t.isPaused() {
			if t.snapshotState() != api.StatePaused {
				if err := t.commit(ctx, r, commitPause); err != nil && ctx.Err() == nil {
					return t.failAndClose(r, err)
				}
				t.setState(api.StatePaused, "")
			}
			select {
			case <-t.wake:
			case <-ctx.Done():
			}
			continue
		}
		if t.snapshotState() != api.StateRunning {
			t.setState(api.StateRunning, "")
		}
		if t.cfg.MayRun != nil && !t.cfg.MayRun() {
			// The leader may be about to start this task elsewhere: write
			// nothing more; the agent stops it.
			select {
			case <-ctx.Done():
			case <-time.After(fenceWait):
			}
			continue
		}
		err := t.lost()
		if err == nil {
			err = r.step(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return t.failAndClose(r, err)
		}
		early := first && holdsPosition(r)
		if early || time.Since(last) >= t.cfg.FlushInterval {
			if early {
				first = false
			}
			// A commit is not cut off by a stop arriving meanwhile: an
			// interrupted transaction would leave the writer unusable for
			// the final commit.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalCommitTimeout)
			err := t.commit(cctx, r, commitPeriodic)
			cancel()
			if err != nil && ctx.Err() == nil {
				if errors.Is(err, kafkautil.ErrFenced) || errors.Is(err, kafkautil.ErrWriterBroken) || errors.Is(err, errAborted) || errors.Is(err, errFencedMember) {
					return t.failAndClose(r, err)
				}
				// Anything else may pass; the offsets are kept for the next try.
				t.log.Warn("offset commit failed; will retry", "err", err)
			}
			last = time.Now()
		}
	}
	// Stopping: commit what was processed, with a fresh deadline since the
	// task's own context is already cancelled.
	cctx, cancel := context.WithTimeout(context.Background(), finalCommitTimeout)
	defer cancel()
	commitErr := t.commit(cctx, r, commitFinal)
	closeErr := r.close()
	t.closeErr = errors.Join(commitErr, closeErr)
	if t.closeErr != nil {
		t.log.Error("task stopped with errors", "err", t.closeErr)
		return nil
	}
	t.log.Info("task stopped", "connector_task", t.id.String())
	return nil
}

// lost is the error of a host task whose process is gone (see HostTasks),
// nil for any other task.
func (t *task) lost() error {
	if t.hosted == nil {
		return nil
	}
	return t.hosted.Err()
}

// commit commits r's offsets and measures it. A commit with nothing new to
// commit counts as a success: the task's position was durable then. A
// runner that owns its commits is not committed on the flush interval.
func (t *task) commit(ctx context.Context, r runner, stage commitStage) error {
	commit := r.commit
	if b, ok := r.(boundaryOwner); ok && b.ownsCommits() {
		if stage == commitPeriodic {
			return nil
		}
		commit = func(ctx context.Context) error { return b.finishTransaction(ctx, stage == commitFinal) }
	}
	start := time.Now()
	err := commit(ctx)
	end := time.Now()
	t.metrics.Commit(end.Sub(start), end, err)
	return err
}

// clientID names one of the task's Kafka clients: the agent, the client's
// role (producer, txn, consumer) and the task, as Kafka Connect names its
// task clients; no two live clients of a process share it.
func (t *task) clientID(role string) string {
	return kafkautil.ClientID("sluice-agent", t.cfg.AgentID, role, t.id.Connector, strconv.Itoa(t.id.Task))
}

// kafkaOpts are the options of one of the task's clients: the agent's base
// options — or, when the connector overrides the credentials of that
// client, the same brokers and TLS as the connector's own principal —
// then the client's id and measurement.
func (t *task) kafkaOpts(role string, extra ...kgo.Opt) []kgo.Opt {
	base := t.cfg.KafkaOpts
	if cr := t.creds[roleClient(role)]; cr != nil {
		base = kafkautil.ClientOpts(t.cfg.Brokers, t.clientID(role), t.cfg.Security.WithSASL(cr.Mechanism))
	}
	opts := t.cfg.KafkaClients.With(t.clientID(role), base)
	opts = append(opts, kgo.WithHooks(t.brokers.Hook()))
	return append(opts, extra...)
}

// roleClient is the client whose overrides a task client of role takes, as
// Kafka Connect's: a sink's consumer (and its leaving member) the
// consumer's, every producer of the task (records, offsets, dead letters)
// the producer's.
func roleClient(role string) clientoverrides.Client {
	switch role {
	case "consumer", "leave":
		return clientoverrides.Consumer
	}
	return clientoverrides.Producer
}

// overrides are the options of the connector's overrides of client c. An
// override Sluice's clients cannot apply (a config stored before the
// override policy, when such keys were ignored) is logged and left out;
// one the framework owns fails the task.
func (t *task) overrides(c clientoverrides.Client) ([]kgo.Opt, error) {
	opts, ignored, err := clientoverrides.Opts(t.conn, c, t.cfg.ExactlyOnce)
	if err != nil {
		return nil, err
	}
	if len(ignored) > 0 {
		t.log.Warn("client config overrides that Sluice's clients do not apply are ignored; a config written now is refused for them", "keys", ignored)
	}
	return opts, nil
}

// loadCredentials reads the credentials the connector overrides for its
// clients, and checks that they reach the agent's listener: the client
// connects where the agent does, so a security.protocol of another kind
// could not be honoured.
func (t *task) loadCredentials() error {
	t.creds = map[clientoverrides.Client]*clientoverrides.Credentials{}
	for _, c := range []clientoverrides.Client{clientoverrides.Producer, clientoverrides.Consumer} {
		cr, err := clientoverrides.ClientCredentials(t.conn, c)
		if err != nil {
			return err
		}
		if cr == nil {
			continue
		}
		if err := tenancy.CheckPrincipal(t.assignment.Tenant, cr.User); err != nil {
			return fmt.Errorf("%ssasl.jaas.config: the %w", c, err)
		}
		tlsOn := t.cfg.Security.TLSOn()
		if cr.Protocol == "SASL_SSL" && !tlsOn || cr.Protocol == "SASL_PLAINTEXT" && tlsOn {
			return fmt.Errorf("%ssecurity.protocol %s: this agent reaches Kafka over %s, and the connector's clients connect where it does", c, cr.Protocol, map[bool]string{true: "TLS", false: "plaintext"}[tlsOn])
		}
		t.creds[c] = cr
		t.log.Info("the connector's clients authenticate as its own principal", "client", strings.TrimSuffix(string(c), ".override."), "user", cr.User)
	}
	return nil
}

// failAndClose reports err and releases the task's clients at once (a
// fenced task must not keep its producer); it returns err.
func (t *task) failAndClose(r runner, err error) error {
	t.fail(err)
	t.closeErr = r.close()
	return err
}

func (t *task) snapshotState() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state
}

// newRunner resolves the task's configs, just before the task runs (the
// assignment carries them as stored, placeholders and all), checks the
// files they name and makes the runner of the connector's kind.
func (t *task) newRunner() (runner, error) {
	var err error
	// Within the tenant's secrets only: a team's connector naming another
	// team's credentials file fails here, before anything is read.
	scope := configprovider.TenantScope(t.assignment.Tenant)
	if t.conn, err = t.cfg.Providers.TransformScoped(t.assignment.ConnectorConfig, scope); err != nil {
		return nil, fmt.Errorf("resolving the connector config: %w", err)
	}
	if t.props, err = t.cfg.Providers.TransformScoped(t.assignment.TaskConfig, scope); err != nil {
		return nil, fmt.Errorf("resolving the task config: %w", err)
	}
	if err := t.loadCredentials(); err != nil {
		return nil, err
	}
	class := t.conn["connector.class"]
	if t.cfg.Host != nil {
		// Before the registry: a Java plugin may share a built-in's class
		// and be asked for by its version.
		if kind, ok := t.cfg.Host.TaskKind(t.conn); ok {
			return t.newHostRunner(class, kind)
		}
	}
	p, ok := t.cfg.Registry.Lookup(class)
	if !ok {
		return nil, fmt.Errorf("unknown connector class %q", class)
	}
	if err := t.checkFiles(p); err != nil {
		return nil, err
	}
	switch c := p.NewConnector().(type) {
	case connect.SourceConnector:
		return newSourceRunner(t, c.NewTask(), true)
	case connect.SinkConnector:
		return newSinkRunner(t, c.NewTask())
	default:
		return nil, fmt.Errorf("class %q is neither a source nor a sink connector", class)
	}
}

// checkFiles refuses a task whose file configs name paths this agent does
// not allow. The coordinator's validation judged the paths from what
// agents announce; this agent decides for itself, symlinks resolved,
// whatever it was sent (another agent's settings may differ, or the
// config was written around validation).
func (t *task) checkFiles(p *connect.Plugin) error {
	for _, key := range p.FileConfigs {
		if v := strings.TrimSpace(t.props[key]); v != "" {
			if _, err := t.cfg.AllowedPaths.Check(v, t.cfg.WorkDir); err != nil {
				return fmt.Errorf("this agent refuses the task: %s: %w (--file-allowed-paths)", key, err)
			}
		}
	}
	return nil
}

// newHostRunner makes the runner of a task run in the connector host.
// A Java plugin of a built-in's class (Kafka's FileStream connectors)
// opens the same files, so the agent's file rule holds for it too.
func (t *task) newHostRunner(class string, kind connect.Kind) (runner, error) {
	if p, ok := t.cfg.Registry.Lookup(class); ok {
		if err := t.checkFiles(p); err != nil {
			return nil, err
		}
	}
	switch kind {
	case connect.KindSource:
		st := t.cfg.Host.NewSourceTask(t.id, t.conn)
		t.hosted, _ = st.(interface{ Err() error })
		return newSourceRunner(t, st, false)
	case connect.KindSink:
		st := t.cfg.Host.NewSinkTask(t.id, t.conn)
		t.hosted, _ = st.(interface{ Err() error })
		return newSinkRunner(t, st)
	}
	return nil, fmt.Errorf("class %q is neither a source nor a sink connector", class)
}
