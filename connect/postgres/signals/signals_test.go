package signals

import (
	"strings"
	"testing"
	"time"
)

// TestParseTable: signal.data.collection names a table, quoted parts
// included.
func TestParseTable(t *testing.T) {
	for v, want := range map[string]Table{
		"public.debezium_signal": {"public", "debezium_signal"},
		`public."my.signals"`:    {"public", "my.signals"},
		`"Odd ""s"".x".t`:        {`Odd "s".x`, "t"},
	} {
		if got, err := ParseTable(v); err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", v, got, err, want)
		}
	}
	for _, v := range []string{"t", "a.b.c", `public."open`, ".t", "public."} {
		if _, err := ParseTable(v); err == nil {
			t.Errorf("%s: accepted", v)
		}
	}
}

// TestParseRequest: an execute-snapshot's data as Debezium reads it, and
// what the native connector refuses with a reason.
func TestParseRequest(t *testing.T) {
	r, err := ParseRequest(`{"data-collections": [" public.orders "], "type": "INCREMENTAL",
		"additional-conditions": [{"data-collection": "public\\.orders", "filter": "region = 'EU'"}]}`, true)
	if err != nil || r.DataCollections[0] != "public.orders" || r.Filter("PUBLIC.orders") != "region = 'EU'" || r.Filter("public.other") != "" {
		t.Fatalf("%+v %v", r, err)
	}
	for data, want := range map[string]string{
		`{"data-collections": ["a.b"], "type": "blocking"}`:                                                   `snapshot type "blocking" is not supported`,
		`{"data-collections": []}`:                                                                            "data-collections is missing or empty",
		`{"data-collections": ["a.b"], "surrogate-key": "c"}`:                                                 "surrogate-key is not supported",
		`{"data-collections": ["a.b"], "additional-conditions": [{"data-collection": "(", "filter": "x"}]}`:   "is not a regular expression",
		`{"data-collections": ["a.b"], "additional-conditions": [{"data-collection": "a.b", "filter": " "}]}`: "has no filter",
		`[1]`: "is not a JSON object",
	} {
		if _, err := ParseRequest(data, true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", data, err, want)
		}
	}
	if _, err := ParseRequest("", false); err != nil {
		t.Errorf("a stop-snapshot without data: %v", err)
	}
}

// TestMatch: data-collections are regular expressions on the whole
// <schema>.<table>; each table is matched once, in the tables' order.
func TestMatch(t *testing.T) {
	matched, unmatched, err := Match([]string{`public\.o.*`, "public.items", "nope.x"}, []string{"public.items", "public.orders", "public.others", "public.ordersx.y"})
	if err != nil || strings.Join(matched, ",") != "public.orders,public.others,public.ordersx.y,public.items" || strings.Join(unmatched, ",") != "nope.x" {
		t.Errorf("matched %v, unmatched %v, %v", matched, unmatched, err)
	}
	if _, _, err := Match([]string{"("}, nil); err == nil {
		t.Error("a pattern that does not compile is accepted")
	}
}

// TestWatermark: the watermark rows as Debezium writes them.
func TestWatermark(t *testing.T) {
	open := time.Date(2026, 12, 7, 0, 17, 32, 852533370, time.UTC)
	id, data := Watermark("c1", open, time.Time{})
	if id != "c1-open" || data != `{"openWindowTimestamp": "2026-12-07T00:17:32.85253337Z"}` {
		t.Errorf("open: %s %s", id, data)
	}
	id, data = Watermark("c1", open, open.Add(time.Second))
	if id != "c1-close" || data != `{"openWindowTimestamp": "2026-12-07T00:17:32.85253337Z", "closeWindowTimestamp": "2026-12-07T00:17:33.85253337Z"}` {
		t.Errorf("close: %s %s", id, data)
	}
}
