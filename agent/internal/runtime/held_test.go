package runtime

import (
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/generator"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/offsetstore"
)

// TestCheckHeld: offsets held by a class (connect.OffsetsHeldKey) start a
// task of that class, named by its class or an alias, and refuse any other
// class with the holder's name; offsets not held start any class.
func TestCheckHeld(t *testing.T) {
	gen := generator.Plugin()
	reg, err := plugins.New(gen)
	if err != nil {
		t.Fatal(err)
	}
	held := []offsetstore.Entry{{Partition: map[string]any{"server": "db"}, Offset: map[string]any{"lsn": 1}},
		{Partition: map[string]any{"server": "db2"}, Offset: map[string]any{connect.OffsetsHeldKey: gen.Class}}}
	if err := checkHeld(held, reg, gen.Class); err != nil {
		t.Errorf("the holder's own class: %v", err)
	}
	if len(gen.Aliases) > 0 {
		if err := checkHeld(held, reg, gen.Aliases[0]); err != nil {
			t.Errorf("the holder's alias: %v", err)
		}
	}
	err = checkHeld(held, reg, "io.debezium.connector.postgresql.PostgresConnector")
	if err == nil || !strings.Contains(err.Error(), "only "+gen.Class+" can continue") {
		t.Errorf("another class: %v", err)
	}
	if err := checkHeld(held[:1], reg, "io.debezium.connector.postgresql.PostgresConnector"); err != nil {
		t.Errorf("offsets not held: %v", err)
	}
}
