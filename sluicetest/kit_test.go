package sluicetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// TestKit starts a cluster, creates a generator through the typed client,
// waits for its records with Eventually and reads them back: the kit's
// ordinary use, end to end.
func TestKit(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, topic := c.Name("gen"), c.Name("gen-data")
	cl := c.Client()
	if _, err := cl.Connectors().Create(ctx, api.CreateConnectorRequest{Name: name, Config: map[string]string{
		"connector.class": "io.sluice.connect.generator.GeneratorSourceConnector",
		"topic":           topic, "rate": "50",
	}}); err != nil {
		t.Fatal(err)
	}
	c.WaitState(name, "RUNNING", 1, "RUNNING")
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(c.ReadTopic(topic))
		return n >= 5, fmt.Sprintf("%d records in %s", n, topic)
	})
	names, err := cl.Connectors().List(ctx)
	if err != nil || len(names) != 1 || names[0] != name {
		t.Fatalf("connectors %v (%v), want [%s]", names, err, name)
	}
}

// TestConsistentlyAndHold: Consistently sees a condition hold throughout,
// and Hold returns once its time passed.
func TestConsistentlyAndHold(t *testing.T) {
	t.Parallel()
	start := time.Now()
	sluicetest.Consistently(t, 120*time.Millisecond, func() (bool, string) { return true, "" })
	sluicetest.Hold(t, 50*time.Millisecond, "nothing, for the test")
	if d := time.Since(start); d < 170*time.Millisecond {
		t.Fatalf("Consistently and Hold returned after %v, want at least 170ms", d)
	}
}
