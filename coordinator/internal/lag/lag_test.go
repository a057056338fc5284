package lag

import (
	"context"
	"slices"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator/internal/store"
)

// conns are connectors' configs by name.
type conns map[string]map[string]string

func (c conns) All() []store.Connector {
	var out []store.Connector
	for n, cfg := range c {
		out = append(out, store.Connector{Name: n, Config: cfg})
	}
	return out
}

func (c conns) Get(name string) (store.Connector, bool) {
	cfg, ok := c[name]
	return store.Connector{Name: name, Config: cfg}, ok
}

// TestConnectorLagRefusals: lag is a sink's; a source, an unknown plugin
// and a missing connector get their errors before Kafka is asked.
func TestConnectorLagRefusals(t *testing.T) {
	r := &Reader{}
	r.Configure(Config{Connectors: conns{
		"src": {"connector.class": "Src"},
		"odd": {"connector.class": "Nope"},
	}, Type: func(c map[string]string) string {
		if c["connector.class"] == "Src" {
			return api.TypeSource
		}
		return api.TypeUnknown
	}})
	ctx := context.Background()
	for name, want := range map[string]string{
		"src":  "Connector src is a source connector: lag is a sink's consumer lag",
		"odd":  "Failed to find any class that implements Connector and which name matches Nope",
		"gone": "Connector gone not found",
	} {
		_, err := r.ConnectorLag(ctx, name)
		if e := api.AsError(err); e == nil || e.Message != want {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// TestSinkTopicsOfAList: a sink's topics list is split on commas, spaces
// and empty entries dropped (topics.regex asks the broker).
func TestSinkTopicsOfAList(t *testing.T) {
	r := &Reader{}
	r.Configure(Config{})
	got, err := r.sinkTopics(context.Background(), map[string]string{"topics": " orders, ,payments ,"}, nil)
	if err != nil || !slices.Equal(got, []string{"orders", "payments"}) {
		t.Fatalf("topics %q, %v", got, err)
	}
}
