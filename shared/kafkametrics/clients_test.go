package kafkametrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkametrics"
)

// clientIDs returns the client_id values of reg's sluice_kafka_connects_total.
func clientIDs(t *testing.T, reg *prometheus.Registry) map[string]bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	ids := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "sluice_kafka_connects_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "client_id" {
					ids[l.GetValue()] = true
				}
			}
		}
	}
	return ids
}

func newClient(t *testing.T, c *kafkametrics.Clients, broker, id string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(broker)}, c.Opts(id)...)...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	return cl
}

// TestClientsShareRegistry checks kprom on several clients of one
// registry: each its client_id, a duplicate id neither panics nor removes
// the first client's series, and a closed client's series go.
func TestClientsShareRegistry(t *testing.T) {
	fk, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer fk.Close()
	broker := fk.ListenAddrs()[0]
	reg := prometheus.NewRegistry()
	c := kafkametrics.New(reg)

	a := newClient(t, c, broker, "agent-a")
	b := newClient(t, c, broker, "agent-b")
	if got := clientIDs(t, reg); !got["agent-a"] || !got["agent-b"] {
		t.Fatalf("client ids: %v, want agent-a and agent-b", got)
	}

	dup := newClient(t, c, broker, "agent-a")
	dup.Close()
	if got := clientIDs(t, reg); !got["agent-a"] {
		t.Fatalf("closing a duplicate-id client removed the first one's series: %v", got)
	}

	b.Close()
	if got := clientIDs(t, reg); got["agent-b"] || !got["agent-a"] {
		t.Fatalf("after closing agent-b: %v", got)
	}
	a.Close()
	if got := clientIDs(t, reg); len(got) != 0 {
		t.Fatalf("after closing every client: %v", got)
	}
}

// TestNilClients checks that nil measures nothing but still names the
// client.
func TestNilClients(t *testing.T) {
	var c *kafkametrics.Clients
	opts := c.Opts("plain")
	if len(opts) != 1 {
		t.Fatalf("nil Clients: %d options, want only the client id", len(opts))
	}
	cl, err := kgo.NewClient(append(opts, kgo.SeedBrokers("127.0.0.1:1"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if id := cl.OptValue(kgo.ClientID); id != "plain" {
		t.Fatalf("client id %v", id)
	}
}
