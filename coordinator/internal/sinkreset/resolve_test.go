package sinkreset

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/api"
)

// base is the timestamp of each partition's record 0; record i is at
// base + i seconds.
var base = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// at is the RFC 3339 form of base shifted by d.
func at(d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }

// The cluster every test resolves against:
//
//	orders   p0: offsets 0-9, 0-2 deleted → start 3, end 10
//	         p1: offsets 0-5              → start 0, end 6
//	         p2: offsets 0-7, 0-4 deleted → start 5, end 8
//	payments p0: offsets 0-3, 0 deleted   → start 1, end 4
//	audit    p0: offsets 0-1              → start 0, end 2
//	__shadow p0: offset 0                 (internal by name)
//
// Record i of every partition has the timestamp base + i s.
type cluster struct {
	kc  *kfake.Cluster
	adm *kadm.Client
}

func newCluster(t *testing.T) cluster {
	t.Helper()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "orders"), kfake.SeedTopics(1, "payments", "audit", "__shadow"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	counts := map[string][]int{"orders": {10, 6, 8}, "payments": {4}, "audit": {2}, "__shadow": {1}}
	for topic, perPartition := range counts {
		for p, n := range perPartition {
			for i := range n {
				rec := &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte(strconv.Itoa(i)), Timestamp: base.Add(time.Duration(i) * time.Second)}
				if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
					t.Fatalf("produce to %s-%d: %v", topic, p, err)
				}
			}
		}
	}
	adm := kadm.NewClient(cl)
	del := kadm.Offsets{}
	del.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 3})
	del.Add(kadm.Offset{Topic: "orders", Partition: 2, At: 5})
	del.Add(kadm.Offset{Topic: "payments", Partition: 0, At: 1})
	resp, err := adm.DeleteRecords(ctx, del)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete records: %v", err)
	}
	return cluster{kc: kc, adm: adm}
}

// committed is the group's position in the tests that shift.
func committed() map[string]map[int32]int64 {
	return map[string]map[int32]int64{"orders": {0: 5, 1: 2, 2: 7}, "payments": {0: 2}}
}

var listed = map[string]string{"topics": " orders, payments ,missing"}

// show is targets as "topic-partition:from->to" (from "-" when none), the
// way the assertions below spell the expected positions.
func show(ts []Target) string {
	var b []string
	for _, t := range ts {
		from := "-"
		if t.From != nil {
			from = strconv.FormatInt(*t.From, 10)
		}
		b = append(b, fmt.Sprintf("%s-%d:%s->%d", t.Topic, t.Partition, from, t.To))
	}
	return strings.Join(b, " ")
}

func resolve(t *testing.T, c cluster, req api.OffsetsResetRequest, config map[string]string, group map[string]map[int32]int64) ([]Target, error) {
	t.Helper()
	rule, err := Parse(req)
	if err != nil {
		t.Fatalf("Parse(%+v): %v", req, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return Resolve(ctx, c.adm, rule, config, group)
}

func TestResolveRules(t *testing.T) {
	c := newCluster(t)
	const from = "orders-0:5->%d orders-1:2->%d orders-2:7->%d payments-0:2->%d"
	want := func(o0, o1, o2, p0 int64) string { return fmt.Sprintf(from, o0, o1, o2, p0) }
	ts := func(v any) api.OffsetsResetRequest {
		return api.OffsetsResetRequest{To: api.ResetTimestamp, Timestamp: v}
	}
	offset := func(o int64) api.OffsetsResetRequest {
		return api.OffsetsResetRequest{To: api.ResetOffset, Offset: i64(o)}
	}
	shift := func(n int64) api.OffsetsResetRequest { return api.OffsetsResetRequest{ShiftBy: i64(n)} }
	for _, tc := range []struct {
		name string
		req  api.OffsetsResetRequest
		want string
	}{
		{"earliest is the log start", api.OffsetsResetRequest{To: api.ResetEarliest}, want(3, 0, 5, 1)},
		{"latest is the log end", api.OffsetsResetRequest{To: api.ResetLatest}, want(10, 6, 8, 4)},
		{"timestamp between records", ts(at(2500 * time.Millisecond)), want(3, 3, 5, 3)},
		{"timestamp exactly on a record", ts(at(3 * time.Second)), want(3, 3, 5, 3)},
		{"timestamp on a deleted record", ts(at(1 * time.Second)), want(3, 1, 5, 1)},
		{"timestamp one ms before a record", ts(at(2999 * time.Millisecond)), want(3, 3, 5, 3)},
		{"timestamp before the first record", ts(at(-time.Millisecond)), want(3, 0, 5, 1)},
		{"timestamp after some partitions' last record", ts(at(5 * time.Second)), want(5, 5, 5, 4)},
		{"timestamp after the end", ts(at(time.Hour)), want(10, 6, 8, 4)},
		{"timestamp as epoch ms", ts(json.Number(strconv.FormatInt(base.Add(2500*time.Millisecond).UnixMilli(), 10))), want(3, 3, 5, 3)},
		{"timestamp as epoch ms after the end", ts(json.Number(strconv.FormatInt(base.Add(time.Hour).UnixMilli(), 10))), want(10, 6, 8, 4)},
		{"offset inside", offset(4), want(4, 4, 5, 4)},
		{"offset inside some, beyond others", offset(7), want(7, 6, 7, 4)},
		{"offset below the start", offset(0), want(3, 0, 5, 1)},
		{"offset above the end", offset(100), want(10, 6, 8, 4)},
		{"shift back inside", shift(-1), want(4, 1, 6, 1)},
		{"shift forward inside", shift(1), want(6, 3, 8, 3)},
		{"shift back beyond the start", shift(-1000), want(3, 0, 5, 1)},
		{"shift forward beyond the end", shift(1000), want(10, 6, 8, 4)},
		{"shift by the largest number", shift(math.MaxInt64), want(10, 6, 8, 4)},
		{"shift by the smallest number", shift(math.MinInt64), want(3, 0, 5, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(t, c, tc.req, listed, committed())
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != tc.want {
				t.Errorf("got  %s\nwant %s", show(got), tc.want)
			}
		})
	}
}

func TestResolveSelection(t *testing.T) {
	c := newCluster(t)
	latest := func(topics []string, partitions ...int32) api.OffsetsResetRequest {
		return api.OffsetsResetRequest{To: api.ResetLatest, Topics: topics, Partitions: partitions}
	}
	someCommitted := map[string]map[int32]int64{"orders": {1: 2}}
	for _, tc := range []struct {
		name   string
		req    api.OffsetsResetRequest
		config map[string]string
		want   string
	}{
		{"a topic that does not exist is left out", latest(nil), listed,
			"orders-0:-->10 orders-1:2->6 orders-2:-->8 payments-0:-->4"},
		{"narrowed to a topic", latest([]string{"payments"}), listed, "payments-0:-->4"},
		{"narrowed to partitions of a topic", latest([]string{"orders"}, 2, 0), listed, "orders-0:-->10 orders-2:-->8"},
		{"narrowed to a partition of every topic", latest(nil, 0), listed, "orders-0:-->10 payments-0:-->4"},
		{"topics.regex, whole names", latest(nil), map[string]string{"topics.regex": "ord.*|pay"},
			"orders-0:-->10 orders-1:2->6 orders-2:-->8"},
		{"topics.regex skips internal topics", latest(nil), map[string]string{"topics.regex": ".*"},
			"audit-0:-->2 orders-0:-->10 orders-1:2->6 orders-2:-->8 payments-0:-->4"},
		{"topics.regex wins over topics", latest(nil), map[string]string{"topics": "orders", "topics.regex": "a.*"}, "audit-0:-->2"},
		{"topics.regex narrowed", latest([]string{"audit"}), map[string]string{"topics.regex": " .* "}, "audit-0:-->2"},
		{"a regex matching nothing resolves nothing", latest(nil), map[string]string{"topics.regex": "nothing"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(t, c, tc.req, tc.config, someCommitted)
			if err != nil {
				t.Fatal(err)
			}
			if show(got) != tc.want {
				t.Errorf("got  %s\nwant %s", show(got), tc.want)
			}
			if got == nil {
				t.Errorf("got a nil slice; want an empty one, which encodes as []")
			}
		})
	}
}

func TestResolveRefusals(t *testing.T) {
	c := newCluster(t)
	earliest := func(topics []string, partitions ...int32) api.OffsetsResetRequest {
		return api.OffsetsResetRequest{To: api.ResetEarliest, Topics: topics, Partitions: partitions}
	}
	regex := func(rx string) map[string]string { return map[string]string{"topics.regex": rx} }
	for _, tc := range []struct {
		name   string
		req    api.OffsetsResetRequest
		config map[string]string
		group  map[string]map[int32]int64
		want   string
	}{
		{"a topic the connector does not consume", earliest([]string{"orders", "audit"}), listed, nil,
			"Cannot reset the offsets of topic 'audit': it is not one of the connector's topics (orders,payments,missing)"},
		{"a topic missing on the broker", earliest([]string{"missing"}), listed, nil,
			"Cannot reset the offsets of topic 'missing': the topic does not exist on the Kafka cluster"},
		{"a topic the regex does not match", earliest([]string{"audit"}), regex("ord.*"), nil,
			"Cannot reset the offsets of topic 'audit': it does not match the connector's topics.regex 'ord.*'"},
		{"a topic the regex matches but the broker lacks", earliest([]string{"orders2"}), regex("ord.*"), nil,
			"Cannot reset the offsets of topic 'orders2': the topic does not exist on the Kafka cluster"},
		{"an internal topic under a regex", earliest([]string{"__shadow"}), regex(".*"), nil,
			"Cannot reset the offsets of topic '__shadow': it is an internal topic, which topics.regex never selects"},
		{"a partition a topic lacks", earliest(nil, 0, 3), listed, nil,
			"Cannot reset the offset of partition 3 of topic 'orders': the topic has 3 partition(s)"},
		{"a partition a narrowed topic lacks", earliest([]string{"payments"}, 1), listed, nil,
			"Cannot reset the offset of partition 1 of topic 'payments': the topic has 1 partition(s)"},
		{"a shift where nothing is committed", api.OffsetsResetRequest{ShiftBy: i64(-5)}, listed, map[string]map[int32]int64{"orders": {0: 5, 1: 2}, "payments": {0: 2}},
			"Cannot shift offset for partition orders-2 since there is no current committed offset"},
		{"a shift where the committed offset is negative", api.OffsetsResetRequest{ShiftBy: i64(1), Topics: []string{"payments"}}, listed, map[string]map[int32]int64{"payments": {0: -1}},
			"Cannot shift offset for partition payments-0 since there is no current committed offset"},
		{"no topics in the config", earliest(nil), map[string]string{"topics": " , "}, nil,
			"The connector's config has neither topics nor topics.regex: it consumes no topics to reset"},
		{"an invalid regex", earliest(nil), regex("orders("), nil,
			"The connector's topics.regex \"orders(\" is not a valid regular expression: error parsing regexp: missing closing ): `^(?:orders()$`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(t, c, tc.req, tc.config, tc.group)
			e, ok := err.(*api.Error)
			if !ok || e.Code != api.CodeBadRequest || e.Message != tc.want {
				t.Errorf("got %s, %#v\nwant 400 %q", show(got), err, tc.want)
			}
		})
	}
}

// failListOffsets answers a ListOffsets request with code(topic,
// partition) for each partition it names (offset -1, "none", where the
// code is 0): a broker failing on the partitions code picks.
func failListOffsets(req kmsg.Request, code func(string, kmsg.ListOffsetsRequestTopicPartition) int16) kmsg.Response {
	r := req.(*kmsg.ListOffsetsRequest)
	resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, rt := range r.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.ErrorCode = code(rt.Topic, rp)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// TestResolveBrokerFailures: a failing broker is a 500 naming the step.
func TestResolveBrokerFailures(t *testing.T) {
	c := newCluster(t)
	c.kc.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.kc.KeepControl()
		return failListOffsets(req, func(topic string, p kmsg.ListOffsetsRequestTopicPartition) int16 {
			if p.Timestamp >= 0 || topic == "payments" {
				return kerr.UnknownServerError.Code
			}
			return 0
		}), nil, true
	})
	for _, tc := range []struct {
		req  api.OffsetsResetRequest
		want string
	}{
		{api.OffsetsResetRequest{To: api.ResetEarliest},
			"Failed to list the log start offsets of topic 'payments': partition 0: " + kerr.UnknownServerError.Error()},
		{api.OffsetsResetRequest{To: api.ResetLatest, Topics: []string{"payments"}},
			"Failed to list the log end offsets of topic 'payments': partition 0: " + kerr.UnknownServerError.Error()},
		{api.OffsetsResetRequest{To: api.ResetTimestamp, Timestamp: at(time.Second), Topics: []string{"orders"}},
			"Failed to list the offsets at 2026-11-30T10:00:01Z of topic 'orders': partition 0: " + kerr.UnknownServerError.Error()},
	} {
		_, err := resolve(t, c, tc.req, listed, committed())
		e, ok := err.(*api.Error)
		if !ok || e.Code != api.CodeInternal || e.Message != tc.want {
			t.Errorf("%s: got %#v\nwant 500 %q", tc.req.To, err, tc.want)
		}
	}

	// Down, the broker fails the first call not answered from the
	// client's metadata cache; a new client has no cache.
	addrs := c.kc.ListenAddrs()
	c.kc.Close()
	rule, _ := Parse(api.OffsetsResetRequest{To: api.ResetLatest})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := Resolve(ctx, c.adm, rule, listed, committed())
	if e, ok := err.(*api.Error); !ok || e.Code != api.CodeInternal || !strings.HasPrefix(e.Message, "Failed to list the log end offsets of topics 'orders', 'payments': ") {
		t.Errorf("broker down: got %#v; want a 500 naming the end offsets step", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = Resolve(ctx, kadm.NewClient(cl), rule, listed, committed())
	if e, ok := err.(*api.Error); !ok || e.Code != api.CodeInternal || !strings.HasPrefix(e.Message, "Failed to read the metadata of topics 'orders', 'payments', 'missing': ") {
		t.Errorf("broker down, new client: got %#v; want a 500 naming the metadata step", err)
	}
}

// TestResolveRetries: an error Kafka says is transient is retried, and the
// answer is as if it had not happened.
func TestResolveRetries(t *testing.T) {
	c := newCluster(t)
	var failures atomic.Int32 // counted on kfake's goroutine, read on this one
	c.kc.ControlKey(int16(kmsg.ListOffsets), func(req kmsg.Request) (kmsg.Response, error, bool) {
		if failures.Load() == 2 {
			return nil, nil, false // handled as usual from now on
		}
		c.kc.KeepControl()
		failures.Add(1)
		return failListOffsets(req, func(string, kmsg.ListOffsetsRequestTopicPartition) int16 {
			return kerr.CoordinatorLoadInProgress.Code
		}), nil, true
	})
	got, err := resolve(t, c, api.OffsetsResetRequest{To: api.ResetOffset, Offset: i64(4)}, listed, committed())
	if want := "orders-0:5->4 orders-1:2->4 orders-2:7->5 payments-0:2->4"; err != nil || show(got) != want {
		t.Errorf("got %s, %v\nwant %s", show(got), err, want)
	}
	if n := failures.Load(); n != 2 {
		t.Errorf("the broker failed %d listings; want 2", n)
	}
}
