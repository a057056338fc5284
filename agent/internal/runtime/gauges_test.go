package runtime

import (
	"math"
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/connect"
)

// TestAPIGauges checks what the gauges command answers of a task's
// gauges: sorted by name then labels, without the values JSON cannot
// carry, and with labels the task cannot change afterwards.
func TestAPIGauges(t *testing.T) {
	labels := map[string]string{"table": "public.b"}
	got := apiGauges([]connect.Gauge{
		{Name: "rows", Labels: labels, Value: 2},
		{Name: "lag", Value: math.NaN()},
		{Name: "rows", Labels: map[string]string{"table": "public.a"}, Value: 1},
		{Name: "lag", Value: math.Inf(1)},
		{Name: "chunks", Help: "h", Value: 3},
	})
	labels["table"] = "changed"
	want := []api.Gauge{
		{Name: "chunks", Help: "h", Value: 3},
		{Name: "rows", Labels: map[string]string{"table": "public.a"}, Value: 1},
		{Name: "rows", Labels: map[string]string{"table": "public.b"}, Value: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
