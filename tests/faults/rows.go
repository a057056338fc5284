package faults

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/wire"
)

// Row is one fault of the table.
type Row struct {
	Name string
	// Short rows run in the CI suite too (make faults-short).
	Short bool
	Opts  Options
	// Inject starts the fault and returns the clock start the recovery
	// figures count from. A fault that ends on its own (an outage of a
	// given length) blocks until it ended and returns that moment; a fault
	// that lasts (a killed leader, a cut-off agent) returns at once, the
	// moment it began.
	Inject func(r *run) time.Time
	// Hold is how long a lasting fault lasts before Heal ends it.
	Hold time.Duration
	Heal func(r *run)
	// Moves is how many task restarts the fault justifies (the tasks of
	// an agent that is gone or cut off); more are counted as needless.
	Moves int
	// NA, when it returns a reason, leaves the row out with that reason.
	NA func() string
}

// run is one row's running cluster, workload and probe.
type run struct {
	c     *Cluster
	w     *Workload
	probe *restProbe
	notes []string
	short bool
	// atEnd runs once the recovery was measured: a row's own counts.
	atEnd []func()
	// violations are what the row found that must not happen.
	violations []string
}

// violate records something that must not happen: the row fails.
func (r *run) violate(format string, args ...any) {
	v := fmt.Sprintf(format, args...)
	r.violations = append(r.violations, v)
	r.note("MUST NOT HAPPEN: %s", v)
}

func (r *run) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// natsOutage kills or pauses every NATS node for d, then brings it back.
func natsOutage(kill bool, d time.Duration) func(r *run) time.Time {
	return func(r *run) time.Time {
		for _, n := range r.c.NATS.Nodes {
			if kill {
				n.Proc.Kill()
			} else {
				n.Proc.Pause()
			}
		}
		time.Sleep(d)
		for _, n := range r.c.NATS.Nodes {
			if kill {
				n.Proc.Start()
			} else {
				n.Proc.Resume()
			}
		}
		return time.Now()
	}
}

// brokerOutage kills the broker for d, then starts it again on its data.
func brokerOutage(d time.Duration) func(r *run) time.Time {
	return func(r *run) time.Time {
		r.c.Broker.Kill()
		time.Sleep(d)
		r.c.Broker.Start()
		return time.Now()
	}
}

// Rows is the table, in order.
func Rows() []Row {
	agentCut := Options{ProxyAgent: true}
	return []Row{
		{Name: "NATS kill -9, 5 s", Short: true, Inject: natsOutage(true, 5*time.Second)},
		{Name: "NATS kill -9, 60 s", Inject: natsOutage(true, 60*time.Second)},
		{Name: "NATS SIGSTOP, 5 s", Inject: natsOutage(false, 5*time.Second)},
		{Name: "NATS SIGSTOP, 60 s", Inject: natsOutage(false, 60*time.Second)},
		{Name: "3-node NATS: the lease stream's leader node killed", Opts: Options{NATSNodes: 3, Coordinators: 3},
			Inject: killLeaseStreamLeader, Hold: 30 * time.Second, Heal: restartDeadNATS},
		{Name: "lease bucket deleted", Opts: Options{Coordinators: 3}, Inject: deleteLeaseBucket},
		{Name: "forged lease on an open NATS", Short: true, Opts: Options{Coordinators: 3, OpenNATS: true}, Inject: forgeLease},
		{Name: "agent cut off from NATS only", Short: true, Opts: agentCut, Moves: 2, Hold: 25 * time.Second,
			Inject: func(r *run) time.Time { r.c.NATSProxy.Cut(); return time.Now() },
			Heal:   func(r *run) { r.c.NATSProxy.Heal() }},
		{Name: "agent cut off from NATS only, exactly-once on", Opts: Options{ProxyAgent: true, ExactlyOnce: true}, Moves: 2, Hold: 25 * time.Second,
			Inject: func(r *run) time.Time { r.c.NATSProxy.Cut(); return time.Now() },
			Heal:   func(r *run) { r.c.NATSProxy.Heal() }},
		{Name: "agent cut off from Kafka only", Opts: agentCut, Moves: 2, Hold: 25 * time.Second,
			Inject: func(r *run) time.Time { r.c.KafkaProxy.Cut(); return time.Now() },
			Heal:   func(r *run) { r.c.KafkaProxy.Heal() }},
		{Name: "agent SIGSTOP", Moves: 2, Hold: 25 * time.Second,
			Inject: func(r *run) time.Time { r.c.Agent("agent-1").Pause(); return time.Now() },
			Heal:   func(r *run) { r.c.Agent("agent-1").Resume() }},
		{Name: "live agent's NATS connection reset", Short: true, Opts: agentCut,
			Inject: func(r *run) time.Time { r.note("%d connection(s) reset", r.c.NATSProxy.Reset()); return time.Now() }},
		{Name: "live agent's NATS connection reset, exactly-once on", Opts: Options{ProxyAgent: true, ExactlyOnce: true},
			Inject: func(r *run) time.Time { r.note("%d connection(s) reset", r.c.NATSProxy.Reset()); return time.Now() }},
		{Name: "leader kill -9 (3 coordinators)", Short: true, Opts: Options{Coordinators: 3}, Inject: killLeader},
		{Name: "leader SIGSTOP (3 coordinators)", Opts: Options{Coordinators: 3}, Hold: 20 * time.Second,
			Inject: pauseLeader, Heal: resumeCoordinators},
		{Name: "broker kill -9, 10 s", Short: true, Opts: Options{OwnBroker: true}, Inject: brokerOutage(10 * time.Second)},
		{Name: "broker kill -9, 60 s", Opts: Options{OwnBroker: true}, Inject: brokerOutage(60 * time.Second)},
	}
}

func killLeaseStreamLeader(r *run) time.Time {
	stream := "KV_" + wire.LeaderBucket(r.c.Prefix)
	leader, err := r.c.NATS.StreamLeader(stream)
	if err != nil {
		r.c.T.Fatalf("the lease stream's leader: %v", err)
	}
	if replicas := streamReplicas(r, stream); replicas > 0 {
		r.note("lease stream R%d, led by %s", replicas, leader)
	}
	r.c.NATS.Node(leader).Proc.Kill()
	return time.Now()
}

// streamReplicas is stream's configured replica count, 0 if unknown.
func streamReplicas(r *run, stream string) int {
	nc, err := r.c.NATS.Connect()
	if err != nil {
		return 0
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return 0
	}
	info, err := st.Info(ctx)
	if err != nil {
		return 0
	}
	return info.Config.Replicas
}

func restartDeadNATS(r *run) {
	for _, n := range r.c.NATS.Nodes {
		if !n.Proc.Running() {
			n.Proc.Start()
		}
	}
}

func deleteLeaseBucket(r *run) time.Time {
	nc, err := r.c.NATS.Connect()
	if err != nil {
		r.c.T.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := js.DeleteKeyValue(ctx, wire.LeaderBucket(r.c.Prefix)); err != nil {
		r.c.T.Fatalf("delete the lease bucket: %v", err)
	}
	return time.Now()
}

// forgeLease writes, as an anonymous client, a lease naming a leader of its
// own — its id, the URL of a listener that counts what it is sent, a key of
// its own and a huge term — over the real one.
func forgeLease(r *run) time.Time {
	var forwarded, withCred atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.c.T.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		forwarded.Add(1)
		if req.Header.Get("Authorization") == probeAuth {
			withCred.Add(1)
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("{}"))
	})}
	go func() { _ = srv.Serve(ln) }()
	r.c.T.Cleanup(func() { srv.Close() })
	r.atEnd = append(r.atEnd, func() {
		r.note("the forger's URL was sent %d request(s), %d with the caller's credential", forwarded.Load(), withCred.Load())
		if forwarded.Load() > 0 {
			r.violate("a follower forwarded %d request(s) to the forger's URL", forwarded.Load())
		}
	})
	// REST writes go through a follower, which forwards them to the
	// leader the lease names.
	if i := r.c.Leader(); i >= 0 {
		r.probe.Avoid(i)
	}
	pub, _, _ := ed25519.GenerateKey(nil)
	lease, _ := json.Marshal(wire.LeaderLease{ID: "forger", URL: "http://" + ln.Addr().String(), Term: 1 << 60,
		Key: base64.StdEncoding.EncodeToString(pub)})
	nc, err := nats.Connect(r.c.NATS.URL(), nats.Name("forger"))
	if err != nil {
		r.c.T.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, wire.LeaderBucket(r.c.Prefix))
	if err != nil {
		r.c.T.Fatalf("the forger opens the lease bucket: %v", err)
	}
	if _, err := kv.Put(ctx, wire.LeaderKey, lease); err != nil {
		r.note("the forger's write was refused: %v", err)
	}
	return time.Now()
}

func killLeader(r *run) time.Time {
	i := r.c.WaitLeader(10 * time.Second)
	r.probe.Avoid(i)
	r.c.Coordinators[i].Kill()
	return time.Now()
}

func pauseLeader(r *run) time.Time {
	i := r.c.WaitLeader(10 * time.Second)
	r.probe.Avoid(i)
	r.c.Coordinators[i].Pause()
	return time.Now()
}

func resumeCoordinators(r *run) {
	for _, p := range r.c.Coordinators {
		if p.Running() {
			p.Resume()
		}
	}
}
