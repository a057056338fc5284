package kafkametrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produced sums the sluice_kafka_produce_records_total series of clientID,
// and tells whether there is one.
func produced(t *testing.T, reg *prometheus.Registry, clientID string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "sluice_kafka_produce_records_total" {
			continue
		}
		sum, found := 0.0, false
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "client_id" && lp.GetValue() == clientID {
					sum += m.GetCounter().GetValue()
					found = true
				}
			}
		}
		return sum, found
	}
	return 0, false
}

func TestClientsOfOneIDShareSeries(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	reg := prometheus.NewRegistry()
	open := func(id string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ClientID(id), kgo.DefaultProduceTopic("t"), Hooks(reg, id))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	produce := func(cl *kgo.Client, n int) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for range n {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Two clients of one id on one registry: no duplicate registration,
	// and their records add up in one series.
	a, b := open("c"), open("c")
	other := open("d")
	defer other.Close()
	produce(a, 2)
	produce(b, 3)
	produce(other, 1)
	if v, ok := producedSoon(t, reg, "c", 5); !ok || v != 5 {
		t.Errorf("records produced by the clients of c = %v (present %v), want 5", v, ok)
	}
	if v, ok := producedSoon(t, reg, "d", 1); !ok || v != 1 {
		t.Errorf("records produced by d = %v (present %v), want 1", v, ok)
	}
	// The series stay while a client of the id is open, and go with the last.
	a.Close()
	produce(b, 1)
	if v, ok := producedSoon(t, reg, "c", 6); !ok || v != 6 {
		t.Errorf("after one client of c closed: %v (present %v), want 6", v, ok)
	}
	b.Close()
	if _, ok := produced(t, reg, "c"); ok {
		t.Error("c's series outlived its last client")
	}
	// A new client of the id registers them again.
	c := open("c")
	defer c.Close()
	produce(c, 1)
	if v, ok := producedSoon(t, reg, "c", 1); !ok || v != 1 {
		t.Errorf("a reopened c: %v (present %v), want 1", v, ok)
	}
}

// producedSoon is produced once it shows want, or after 5 s: franz-go
// counts a batch in its hook after the produce's promise has returned, so
// the count of a record just acknowledged can lag a moment.
func producedSoon(t *testing.T, reg *prometheus.Registry, id string, want float64) (float64, bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, ok := produced(t, reg, id)
		if (ok && v == want) || time.Now().After(deadline) {
			return v, ok
		}
		time.Sleep(10 * time.Millisecond)
	}
}
