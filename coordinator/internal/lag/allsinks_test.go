package lag

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/topicscan/scantest"
	"github.com/sluice-io/sluice/shared/kafkautil"
)

// TestAllSinksOneRound: one round reads every sink's lag per partition —
// a topics list, a topics.regex, a group that committed and one that
// never did (its lag counts from the log start) — and leaves sources out;
// it answers what ConnectorLag answers for each.
func TestAllSinksOneRound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	brokers := scantest.Broker(t)
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(brokers, "lag-test", nil), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "pay.eu"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		rec := &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte(fmt.Sprint(i))}
		if i < 3 {
			rec = &kgo.Record{Topic: "pay.eu", Value: []byte(fmt.Sprint(i))}
		}
		if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// orders/0 holds 3 records, orders/1 4, pay.eu/0 3. Group connect-a
	// committed 2 on orders/0: 1 record left there.
	commit := kadm.Offsets{}
	commit.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 2})
	if _, err := adm.CommitOffsets(ctx, "connect-a", commit); err != nil {
		t.Fatal(err)
	}

	r := &Reader{}
	r.Configure(Config{Admin: adm, Connectors: conns{
		"a":   {"connector.class": "Sink", "topics": "orders"},
		"b":   {"connector.class": "Sink", "topics.regex": "pay\\..*"},
		"src": {"connector.class": "Src", "topic": "orders"},
	}, Type: func(c map[string]string) string {
		if c["connector.class"] == "Src" {
			return api.TypeSource
		}
		return api.TypeSink
	}})
	got, err := r.AllSinks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(x, y SinkLag) int { return cmp.Compare(x.Connector, y.Connector) })
	lags := func(s SinkLag) string {
		var out []string
		for _, p := range s.Partitions {
			out = append(out, fmt.Sprintf("%s/%d=%d", p.Topic, p.Partition, p.Lag))
		}
		return fmt.Sprint(out)
	}
	if len(got) != 2 || got[0].Connector != "a" || lags(got[0]) != "[orders/0=1 orders/1=4]" || got[1].Connector != "b" || lags(got[1]) != "[pay.eu/0=3]" {
		t.Fatalf("one round: %+v", got)
	}
	for _, s := range got {
		one, err := r.ConnectorLag(ctx, s.Connector)
		if err != nil || !slices.Equal(one.Partitions, s.Partitions) {
			t.Errorf("%s: ConnectorLag %+v %v, the round %+v", s.Connector, one.Partitions, err, s.Partitions)
		}
	}
}
