package runtime

import (
	"fmt"

	"github.com/sluice-io/sluice/connect"
	"github.com/sluice-io/sluice/connect/plugins"
	"github.com/sluice-io/sluice/shared/offsetstore"
)

// checkHeld refuses to start a source task of class on offsets another
// class holds (connect.OffsetsHeldKey): they carry work in progress only
// that class can continue, which this one would drop without a word.
func checkHeld(entries []offsetstore.Entry, reg *plugins.Registry, class string) error {
	own := class
	if reg != nil {
		if p, ok := reg.Lookup(class); ok {
			own = p.Class
		}
	}
	for _, e := range entries {
		held, _ := e.Offset[connect.OffsetsHeldKey].(string)
		if held == "" || held == own {
			continue
		}
		return fmt.Errorf("the connector's offsets hold work in progress that only %s can continue (offset key %s; the native PostgreSQL connector's: "+
			"an incremental snapshot): %s would drop it. Change the class back and let the work finish (or stop it: sluice snapshot-stop), then change the class",
			held, connect.OffsetsHeldKey, class)
	}
	return nil
}
