package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// kafka is the benchmark's own client of the broker: topics, end offsets,
// input records.
type kafka struct {
	cl  *kgo.Client
	adm *kadm.Client
}

// dialKafka connects to brokers and checks that the broker answers.
func dialKafka(brokers, clientID string) (*kafka, error) {
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(brokers, clientID, nil),
		kgo.ProducerLinger(5*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20))...)
	if err != nil {
		return nil, err
	}
	k := &kafka{cl: cl, adm: kadm.NewClient(cl)}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := k.adm.BrokerMetadata(ctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("no Kafka broker answers on %s: %w", brokers, err)
	}
	return k, nil
}

// createTopic creates topic with the given partitions (replication factor
// 1: one broker) and waits until its metadata shows it.
func (k *kafka) createTopic(topic string, partitions int32) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := k.adm.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return kafkautil.WaitTopics(ctx, k.adm, topic)
}

// records is the number of records in topic: the sum of its partitions' end
// offsets (the topics the benchmark reads are written without transactions).
func (k *kafka) records(topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := k.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			ferr = o.Err
		}
		n += o.Offset
	})
	return n, ferr
}

// produce writes n records with the values line(i) to topic.
func (k *kafka) produce(topic string, n int, line func(i int) string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const chunk = 10000
	for from := 0; from < n; from += chunk {
		var recs []*kgo.Record
		for i := from; i < min(n, from+chunk); i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(line(i))})
		}
		if err := k.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return fmt.Errorf("produce to %s: %w", topic, err)
		}
	}
	return nil
}

// deletePrefixed deletes every topic whose name starts with prefix and
// returns how many it deleted.
func (k *kafka) deletePrefixed(prefix string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topics, err := k.adm.ListTopics(ctx)
	if err != nil {
		return 0, err
	}
	var names []string
	for _, t := range topics.Names() {
		if strings.HasPrefix(t, prefix) {
			names = append(names, t)
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	resp, err := k.adm.DeleteTopics(ctx, names...)
	if err != nil {
		return 0, err
	}
	return len(names), resp.Error()
}

// deleteGroupsPrefixed deletes the consumer groups whose id starts with one
// of prefixes (the sinks' connect-<name> groups, the workers' groups).
func (k *kafka) deleteGroupsPrefixed(prefixes ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	groups, err := k.adm.ListGroups(ctx)
	if err != nil {
		return
	}
	var del []string
	for _, g := range groups.Groups() {
		for _, p := range prefixes {
			if strings.HasPrefix(g, p) {
				del = append(del, g)
				break
			}
		}
	}
	if len(del) > 0 {
		_, _ = k.adm.DeleteGroups(ctx, del...)
	}
}

func (k *kafka) close() { k.cl.Close() }
