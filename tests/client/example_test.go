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
