package sluicetest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/embedded"
)

// Backends are the NATS server and Kafka broker a test cluster runs on.
type Backends struct {
	NATSURL string
	Brokers string
}

// StartBackends starts an embedded NATS server with JetStream (which holds
// the leader lease) and, unless SLUICE_TEST_KAFKA names a real broker, an
// embedded Kafka broker. Both stop at t's cleanup. opts adjust the NATS
// server (embedded.MaxPayload).
func StartBackends(t testing.TB, opts ...embedded.NATSOption) Backends {
	t.Helper()
	ns, err := embedded.NATS("", t.TempDir(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	b := Backends{NATSURL: ns.ClientURL(), Brokers: os.Getenv(KafkaEnv)}
	if b.Brokers == "" {
		kc, err := embedded.Kafka("", "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(kc.Close)
		b.Brokers = kc.ListenAddrs()[0]
	}
	return b
}

// CreateTopic creates topic on brokers with the given partition count and
// the broker's default replication, so a test does not depend on the
// broker's num.partitions.
func CreateTopic(t testing.TB, brokers, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(ClientOpts(brokers, "test-admin")...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}
