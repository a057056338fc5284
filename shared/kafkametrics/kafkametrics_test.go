package kafkametrics

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

// families is reg's gathered families by name.
func families(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// TestErrorSeriesFromTheFirstConnection: a client that connected and met
// no error has its error series, at 0, for every broker it connected to —
// the same brokers as its connection counts; the buffered-records gauges
// are there under their conventional names and, for a release, kprom's
// _total ones; all go with the last client of the id, and come back with
// the next.
func TestErrorSeriesFromTheFirstConnection(t *testing.T) {
	kf, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	reg := prometheus.NewRegistry()
	open := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...), kgo.ClientID("c"), Hooks(reg, "c"))
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
	nodes := func(mf *dto.MetricFamily) map[string]float64 {
		out := map[string]float64{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node_id" {
					out[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
		return out
	}
	check := func() {
		t.Helper()
		got := families(t, reg)
		connects := nodes(got[Namespace+"_"+Subsystem+"_connects_total"])
		if len(connects) == 0 {
			t.Fatal("no connection counted")
		}
		for name := range errorCounters {
			errs := nodes(got[name])
			if len(errs) != len(connects) {
				t.Errorf("%s has series for brokers %v, want those connected to: %v", name, errs, connects)
			}
			for node, v := range errs {
				if _, ok := connects[node]; !ok || v != 0 {
					t.Errorf("%s{node_id=%q} = %v, want 0 for a broker connected to", name, node, v)
				}
			}
		}
		for _, name := range []string{BufferedProduceRecords, BufferedFetchRecords,
			Namespace + "_" + Subsystem + "_buffered_produce_records_total", Namespace + "_" + Subsystem + "_buffered_fetch_records_total"} {
			mf := got[name]
			if mf.GetType() != dto.MetricType_GAUGE || len(mf.GetMetric()) != 1 {
				t.Errorf("%s: %v, want one gauge", name, mf)
			}
		}
	}
	cl := open()
	check()
	cl.Close()
	for name := range families(t, reg) {
		if strings.HasPrefix(name, Namespace+"_"+Subsystem+"_") {
			t.Errorf("%s outlived the last client of its id", name)
		}
	}
	cl = open()
	defer cl.Close()
	check()
}
