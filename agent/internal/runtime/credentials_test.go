package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/shared/wire"
)

// TestCredentialsMustReachTheAgentsListener: a connector's clients connect
// where the agent does, as another principal; a security.protocol of
// another kind than the agent's connection fails the task, saying why,
// and a sasl.jaas.config that does not parse fails it without repeating
// the value.
func TestCredentialsMustReachTheAgentsListener(t *testing.T) {
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="team-a" password="pw-team-a";`
	for name, tc := range map[string]struct {
		conn map[string]string
		want string
	}{
		"TLS over a plaintext agent": {map[string]string{"consumer.override.sasl.jaas.config": jaas, "consumer.override.sasl.mechanism": "SCRAM-SHA-512",
			"consumer.override.security.protocol": "SASL_SSL"}, "consumer.override.security.protocol SASL_SSL: this agent reaches Kafka over plaintext"},
		"a bad JAAS": {map[string]string{"consumer.override.sasl.jaas.config": "pw-team-a junk", "consumer.override.sasl.mechanism": "SCRAM-SHA-512"},
			"Invalid value [hidden] for configuration consumer.override.sasl.jaas.config"},
	} {
		t.Run(name, func(t *testing.T) {
			h := hostTasks{sink: &hostSink{}, failed: make(chan string, 1)}
			w, _ := newHostWorker(t, h, "in")
			conn := map[string]string{"connector.class": "io.example.JavaSink", "kind": "sink", "topics": "in"}
			for k, v := range tc.conn {
				conn[k] = v
			}
			w.Assign(context.Background(), 1, []wire.TaskAssignment{{ID: api.TaskID{Connector: "team-a-sink"}, Generation: 1, ConnectorConfig: conn, TaskConfig: map[string]string{}}})
			select {
			case trace := <-h.failed:
				if !strings.Contains(trace, tc.want) || strings.Contains(trace, "pw-team-a") {
					t.Errorf("trace %q, want it to say %q and no password", trace, tc.want)
				}
			case <-time.After(15 * time.Second):
				t.Fatal("the task did not fail")
			}
		})
	}
}
