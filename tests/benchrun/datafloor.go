package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// The data plane's floors (scenario 4): what a connector's work costs with
// nothing but a franz-go client with its default settings, on the same
// broker and the same records, so that a connector's rate can be given as a
// share of what the broker and the client allow.
//
//   - source floor: a new producer writes n records of lineBytes (the
//     generator's record size) to a new 1-partition topic; from the client's
//     creation until every record is acknowledged.
//   - sink floor: a new consumer of a consumer group of its own (a sink
//     task is one: it commits what it wrote) reads the sink's input topic
//     from its start and appends each value and a newline to a new file
//     through a 64 KiB buffer written out after every fetch (what the file
//     sink does with every batch); from the client's creation until the file
//     holds n lines.

// producerFloor returns the records/s of the source floor into topic.
func (b *bench) producerFloor(topic string, n int) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(b.brokers, "bench-producer-floor", nil),
		kgo.DefaultProduceTopic(topic))...)
	if err != nil {
		return 0, fmt.Errorf("producer floor: new client: %w", err)
	}
	defer cl.Close()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	wg.Add(n)
	for i := range n {
		// Produce blocks while the client's buffer is full, as a source's
		// producer does: the rate is the broker's and the client's.
		cl.Produce(ctx, &kgo.Record{Value: []byte(line(i))}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	took := time.Since(t0)
	if first != nil {
		return 0, fmt.Errorf("producer floor: produce to %s: %w", topic, first)
	}
	return float64(n) / took.Seconds(), nil
}

// consumerFloor returns the records/s of the sink floor: topic's first n
// records into the file out, by a consumer of group.
func (b *bench) consumerFloor(topic, group, out string, n int) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("consumer floor: %w", err)
	}
	defer f.Close()
	cl, err := kgo.NewClient(append(kafkautil.ClientOpts(b.brokers, "bench-consumer-floor", nil),
		kgo.ConsumeTopics(topic), kgo.ConsumerGroup(group), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return 0, fmt.Errorf("consumer floor: new client: %w", err)
	}
	defer cl.Close()
	w := bufio.NewWriterSize(f, 64<<10)
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return 0, fmt.Errorf("consumer floor: fetch %s after %d records: %w", topic, got, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			w.Write(r.Value)
			w.WriteByte('\n')
			got++
		})
		if err := w.Flush(); err != nil {
			return 0, fmt.Errorf("consumer floor: write %s: %w", out, err)
		}
	}
	return float64(n) / time.Since(t0).Seconds(), nil
}
