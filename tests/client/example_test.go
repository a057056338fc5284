package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-io/sluice/api"
)

// exampleAddress is where the examples' coordinator listens: in your
// program, "127.0.0.1:8083" (sluice dev) or your cluster's address.
func exampleAddress() string { return cluster.URL }

// Create a connector stopped at a chosen position (KIP-980, KIP-995), read
// its offsets and its config back, and delete it.
func Example() {
	c, err := api.NewClient(api.Config{Address: exampleAddress()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	_ = os.WriteFile(filepath.Join(cluster.WorkDir, "example.txt"), []byte("hello\nworld\n"), 0o644)
	created, err := c.Connectors().Create(ctx, api.CreateConnectorRequest{
		Name:         "example-src",
		Config:       map[string]string{"connector.class": "FileStreamSource", "file": "example.txt", "topic": "example-lines"},
		InitialState: api.StateStopped,
		InitialOffsets: []api.ConnectorOffset{{
			Partition: map[string]any{"filename": "example.txt"},
			Offset:    map[string]any{"position": 6}, // skip "hello\n"
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created", created.Name, "with", created.OffsetsStatus.Message)

	offsets, err := c.Offsets().Get(ctx, "example-src")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("starts at", offsets.Offsets[0].Offset["position"])

	info, err := c.Connectors().Get(ctx, "example-src")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Type, "connector with", len(info.Tasks), "tasks while stopped")

	if err := c.Connectors().Delete(ctx, "example-src"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// created example-src with The offsets for this connector have been altered successfully
	// starts at 6
	// source connector with 0 tasks while stopped
}

// A refused call is an *api.Error carrying the server's status and message.
func Example_errors() {
	c, err := api.NewClient(api.Config{Address: exampleAddress()})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.Connectors().Get(context.Background(), "no-such-connector")
	var e *api.Error
	if errors.As(err, &e) {
		fmt.Println(e.Code, e.Message)
	}
	fmt.Println(api.IsCode(err, api.CodeNotFound))
	// Output:
	// 404 Connector no-such-connector not found
	// true
}

// Move a stopped connector's position, with the reason recorded in its
// offsets history, then read the history back.
func Example_offsetsHistory() {
	c, err := api.NewClient(api.Config{Address: exampleAddress()})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	file := map[string]any{"filename": "history.txt"}
	_, err = c.Connectors().Create(ctx, api.CreateConnectorRequest{
		Name:           "example-history",
		Config:         map[string]string{"connector.class": "FileStreamSource", "file": "history.txt", "topic": "example-history"},
		InitialState:   api.StateStopped,
		InitialOffsets: []api.ConnectorOffset{{Partition: file, Offset: map[string]any{"position": 120}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = c.Connectors().DeleteResettingOffsets(ctx, "example-history") }()

	rewind := api.WithReason(ctx, "replay INC-4711")
	if _, err := c.Offsets().Alter(rewind, "example-history", []api.ConnectorOffset{{Partition: file, Offset: map[string]any{"position": 0}}}); err != nil {
		fmt.Println(err)
		return
	}
	hist, err := c.Offsets().History(ctx, "example-history", api.HistoryQuery{Limit: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range hist.Entries {
		fmt.Printf("%s by %s (%q): position %v -> %v\n", e.Operation, e.Principal, e.Reason,
			e.Changes[0].From["position"], e.Changes[0].To["position"])
	}
	// Output:
	// alter by anonymous ("replay INC-4711"): position 120 -> 0
	// create by anonymous (""): position <nil> -> 120
}
