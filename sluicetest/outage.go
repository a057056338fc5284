package sluicetest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/shared/embedded"
)

// Outage are backends a test can take away and bring back: an embedded NATS
// server and an embedded broker (never a real Kafka: the test stops it),
// each restarted on the same address and data, as a restarted process
// would be. Pass &o.Backends as Options.Backends. Both stop at t's cleanup,
// after the cluster (cleanups run last registered first).
type Outage struct {
	Backends

	t        testing.TB
	mu       sync.Mutex
	natsStop func() // nil while NATS is down
	natsAddr string
	natsDir  string
	kafka    *embedded.Broker
	kafkaDir string
}

// StartOutage starts the backends of an outage test. It skips the test
// when SLUICE_TEST_KAFKA names a real broker, which the test cannot stop.
func StartOutage(t testing.TB) *Outage {
	t.Helper()
	if RealKafka() {
		t.Skip("stops the broker: runs on the embedded one only")
	}
	// Addresses below the ephemeral range (FreeAddr): while a backend is
	// down, no other test's connection can take its port.
	o := &Outage{t: t, natsDir: t.TempDir(), kafkaDir: t.TempDir(), natsAddr: FreeAddr(t)}
	o.Brokers = FreeAddr(t)
	o.StartNATS()
	o.StartKafka()
	o.NATSURL = "nats://" + o.natsAddr
	t.Cleanup(func() {
		o.StopNATS()
		o.StopKafka()
	})
	return o
}

// StartNATS starts the NATS server, on the address it had before if any.
func (o *Outage) StartNATS() {
	o.t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.natsStop != nil {
		return
	}
	ns, err := embedded.NATS(o.natsAddr, o.natsDir)
	if err != nil {
		o.t.Fatal(err)
	}
	o.natsStop = func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	}
	o.natsAddr = ns.Addr().(*net.TCPAddr).String()
}

// StopNATS shuts the NATS server down: every client's connection closes
// and its address refuses new ones until StartNATS.
func (o *Outage) StopNATS() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.natsStop != nil {
		o.natsStop()
		o.natsStop = nil
	}
}

// StartKafka starts the broker, on the address it had before if any, with
// the data it kept.
func (o *Outage) StartKafka() {
	o.t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.kafka != nil {
		return
	}
	kc, err := embedded.Kafka(o.Brokers, o.kafkaDir)
	if err != nil {
		o.t.Fatal(err)
	}
	o.kafka = kc
	o.Brokers = kc.ListenAddrs()[0]
}

// StopKafka closes the broker: its address refuses connections until
// StartKafka.
func (o *Outage) StopKafka() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.kafka != nil {
		o.kafka.Close()
		o.kafka = nil
	}
}

// AgentGet asks agent i's metrics listener for path and returns the status
// code and the body as it came.
func (c *Cluster) AgentGet(i int, path string) (int, []byte) {
	c.T.Helper()
	resp, err := opsClient.Get(c.agentListener(i) + path)
	if err != nil {
		c.T.Fatalf("agent %d %s: %v", i, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatalf("agent %d %s: %v", i, path, err)
	}
	return resp.StatusCode, body
}
