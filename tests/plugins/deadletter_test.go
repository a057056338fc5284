package plugins

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/sluicetest"
)

// jsonSink is a Java FileStream sink of topic reading schemaless JSON
// values, with errors.tolerance as given and a DLQ with context headers.
func jsonSink(topic, file, tolerance, dlq string) map[string]string {
	return map[string]string{
		"connector.class": sinkClass, "connector.plugin.version": javaFileVersion,
		"file": file, "topics": topic,
		"value.converter":                                 "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":                  "false",
		"errors.tolerance":                                tolerance,
		"errors.deadletterqueue.topic.name":               dlq,
		"errors.deadletterqueue.context.headers.enable":   "true",
		"errors.deadletterqueue.topic.replication.factor": "1",
	}
}

func header(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}

// TestSinkDeadLetterQueueThroughHost: Kafka's FileStreamSinkConnector with
// a JSON value converter and errors.tolerance=all writes the valid values
// in order, and the invalid ones land in the DLQ topic byte for byte, with
// Kafka Connect's context headers naming where they came from and that
// the value converter failed. With errors.tolerance=none the task fails
// with Kafka Connect's "Tolerance exceeded in error handler".
func TestSinkDeadLetterQueueThroughHost(t *testing.T) {
	c := start(t, 1)
	topic := c.Name("json")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One partition: the file's order is the topic's.
	if _, err := c.Admin().CreateTopic(ctx, 1, -1, nil, topic); err != nil {
		t.Fatal(err)
	}
	in := []string{`"v0"`, `"v1"`, `not json{`, `"v3"`, `"v4"`, `{"cut": `, `"v6"`}
	bad := map[int]bool{2: true, 5: true}
	c.Produce(topic, in...)

	out := filepath.Join(c.WorkDir, "valid.txt")
	dlq := c.Name("dead")
	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "tolerant", "config": jsonSink(topic, out, "all", dlq)})
	var want bytes.Buffer
	for i, v := range in {
		if !bad[i] {
			want.WriteString(strings.Trim(v, `"`) + "\n")
		}
	}
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		got, _ := os.ReadFile(out)
		return bytes.Equal(got, want.Bytes()), fmt.Sprintf("the sink file has %q, want %q", got, want.Bytes())
	})
	var letters []*kgo.Record
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		letters = sluicetest.ReadLog(t, c.Brokers, "dlq-reader", dlq, true)
		return len(letters) >= len(bad), fmt.Sprintf("the DLQ has %d records", len(letters))
	})
	if len(letters) != len(bad) {
		t.Fatalf("the DLQ has %d records, want %d", len(letters), len(bad))
	}
	i := 0
	for offset, v := range in {
		if !bad[offset] {
			continue
		}
		r := letters[i]
		i++
		if string(r.Value) != v || r.Key != nil {
			t.Errorf("letter %d: %q=%q, want the consumed record %q", i, r.Key, r.Value, v)
		}
		for key, want := range map[string]string{
			"__connect.errors.topic":                topic,
			"__connect.errors.partition":            "0",
			"__connect.errors.offset":               strconv.Itoa(offset),
			"__connect.errors.connector.name":       "tolerant",
			"__connect.errors.task.id":              "0",
			"__connect.errors.stage":                "VALUE_CONVERTER",
			"__connect.errors.class.name":           "org.apache.kafka.connect.json.JsonConverter",
			"__connect.errors.exception.class.name": "org.apache.kafka.connect.errors.DataException",
		} {
			if got, _ := header(r, key); got != want {
				t.Errorf("letter of offset %d: %s = %q, want %q", offset, key, got, want)
			}
		}
		if msg, _ := header(r, "__connect.errors.exception.message"); !strings.Contains(msg, "Converting byte[] to Kafka Connect data failed") {
			t.Errorf("letter of offset %d: exception message %q", offset, msg)
		}
		if trace, _ := header(r, "__connect.errors.exception.stacktrace"); !strings.HasPrefix(trace, "org.apache.kafka.connect.errors.DataException") {
			t.Errorf("letter of offset %d: stack trace %q", offset, trace)
		}
	}

	c.Must(http.StatusCreated, "POST", "/connectors", map[string]any{"name": "strict",
		"config": jsonSink(topic, filepath.Join(c.WorkDir, "strict.txt"), "none", c.Name("strict-dead"))})
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		st, _ := c.Status("strict")
		return len(st.Tasks) == 1 && st.Tasks[0].State == "FAILED" &&
				strings.Contains(st.Tasks[0].Trace, "Tolerance exceeded in error handler"),
			fmt.Sprintf("strict tasks: %+v", st.Tasks)
	})
	// As in Kafka Connect, the record that failed the task is in its DLQ.
	first := sluicetest.ReadLog(t, c.Brokers, "dlq-reader", c.Name("strict-dead"), true)
	if len(first) == 0 || string(first[0].Value) != in[2] {
		t.Errorf("the strict DLQ has %d records, want the first invalid one", len(first))
	}
}
