package faults

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/embedded"
)

// TestKafkaProxyCarriesEveryConnection runs a Kafka client through
// StartKafkaProxy to the embedded broker: the broker it learns from
// Metadata is the proxy, it produces and reads back a record, and while the
// proxy is cut a request does not get through — then does once it heals.
func TestKafkaProxyCarriesEveryConnection(t *testing.T) {
	kc, err := embedded.Kafka("", "")
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	p := StartKafkaProxy(t, kc.ListenAddrs()[0])
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr()), kgo.ConsumeTopics("t"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	brokers, err := adm.ListBrokers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range brokers {
		if addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); addr != p.Addr() {
			t.Fatalf("Metadata names broker %s, want the proxy %s", addr, p.Addr())
		}
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if fs := cl.PollRecords(ctx, 1); fs.Err() != nil || len(fs.Records()) != 1 {
		t.Fatalf("read back through the proxy: %v, %d records", fs.Err(), len(fs.Records()))
	}

	p.Cut()
	produced := make(chan error, 1)
	cl.Produce(ctx, &kgo.Record{Topic: "t", Value: []byte("across the cut")}, func(_ *kgo.Record, err error) { produced <- err })
	select {
	case err := <-produced:
		t.Fatalf("a record got through a cut proxy (err %v)", err)
	case <-time.After(time.Second):
	}
	p.Heal()
	select {
	case err := <-produced:
		if err != nil {
			t.Fatalf("after the heal: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the record held by the cut was not delivered after the heal")
	}
}

// TestOldAfterNew counts what an older instance writes after a newer one
// began.
func TestOldAfterNew(t *testing.T) {
	for _, tc := range []struct {
		ids            []string
		old, instances int
	}{
		{nil, 0, 0},
		{[]string{"a", "a", "b", "b"}, 0, 2},
		{[]string{"a", "b", "a", "b", "a"}, 2, 2},
		{[]string{"a", "b", "c", "b", "a"}, 2, 3},
	} {
		old, n := oldAfterNew(tc.ids)
		if old != tc.old || n != tc.instances {
			t.Errorf("oldAfterNew(%v) = %d, %d; want %d, %d", tc.ids, old, n, tc.old, tc.instances)
		}
	}
	c := count([]int{1, 2, 2, 4, 0}, []string{"a", "a", "b", "a", "b"}, 4)
	if c.Lost != 1 || c.Duplicated != 1 || c.OldAfterNew != 1 || c.Bad != 1 {
		t.Errorf("count: %+v", c)
	}
}
