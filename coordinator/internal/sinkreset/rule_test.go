package sinkreset

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

func i64(v int64) *int64 { return &v }

// decode reads a request body as the REST decoder does (numbers as
// json.Number), so that these cases are what a user sends.
func decode(t *testing.T, body string) api.OffsetsResetRequest {
	t.Helper()
	var req api.OffsetsResetRequest
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return req
}

func TestParseRefusals(t *testing.T) {
	for _, c := range []struct {
		body string
		want string
	}{
		{`{}`, `A reset needs exactly one rule: "to" (earliest, latest, timestamp or offset) or "shift_by"`},
		{`{"topics":["t"]}`, `A reset needs exactly one rule: "to" (earliest, latest, timestamp or offset) or "shift_by"`},
		{`{"to":"earliest","shift_by":5}`, `"to" and "shift_by" cannot be combined: give "to" (earliest, latest, timestamp or offset) or "shift_by" alone`},
		{`{"to":"beginning"}`, `Invalid "to" "beginning": it must be earliest, latest, timestamp or offset`},
		{`{"to":"Earliest"}`, `Invalid "to" "Earliest": it must be earliest, latest, timestamp or offset`},
		{`{"shift_by":0}`, `Invalid "shift_by" 0: it must be a non-zero number of records (negative moves back, positive forward)`},
		{`{"to":"timestamp"}`, `"to": "timestamp" needs "timestamp": an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"timestamp","timestamp":"yesterday"}`, `Invalid "timestamp" "yesterday": expected an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"timestamp","timestamp":"2026-11-30 10:00:00"}`, `Invalid "timestamp" "2026-11-30 10:00:00": expected an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"timestamp","timestamp":"1796032800000"}`, `Invalid "timestamp" "1796032800000": expected an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"timestamp","timestamp":"1969-12-31T23:59:59Z"}`, `Invalid "timestamp" "1969-12-31T23:59:59Z": it must not be before 1970-01-01T00:00:00Z`},
		{`{"to":"timestamp","timestamp":-1}`, `Invalid "timestamp" -1: epoch milliseconds must not be negative`},
		{`{"to":"timestamp","timestamp":1.5}`, `Invalid "timestamp" 1.5: epoch milliseconds must be a whole number that fits 64 bits`},
		{`{"to":"timestamp","timestamp":99999999999999999999}`, `Invalid "timestamp" 99999999999999999999: epoch milliseconds must be a whole number that fits 64 bits`},
		{`{"to":"timestamp","timestamp":true}`, `Invalid "timestamp" of JSON type boolean: expected an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"timestamp","timestamp":{"ms":1}}`, `Invalid "timestamp" of JSON type object: expected an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"timestamp","timestamp":[1]}`, `Invalid "timestamp" of JSON type array: expected an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`},
		{`{"to":"earliest","timestamp":"2026-11-30T10:00:00Z"}`, `"timestamp" is only accepted with "to": "timestamp" (this request's rule is "to": "earliest")`},
		{`{"shift_by":-3,"timestamp":5}`, `"timestamp" is only accepted with "to": "timestamp" (this request's rule is "shift_by")`},
		{`{"to":"offset"}`, `"to": "offset" needs "offset": a position of 0 or more`},
		{`{"to":"offset","offset":-1}`, `Invalid "offset" -1: it must be 0 or more`},
		{`{"to":"latest","offset":4}`, `"offset" is only accepted with "to": "offset" (this request's rule is "to": "latest")`},
		{`{"to":"timestamp","timestamp":5,"offset":4}`, `"offset" is only accepted with "to": "offset" (this request's rule is "to": "timestamp")`},
		{`{"shift_by":2,"offset":4}`, `"offset" is only accepted with "to": "offset" (this request's rule is "shift_by")`},
		{`{"to":"earliest","topics":["a",""]}`, `Invalid "topics": entry 1 is empty; each entry must name a topic`},
		{`{"to":"earliest","topics":["a","b","a"]}`, `Invalid "topics": "a" is listed more than once`},
		{`{"to":"earliest","partitions":[0,-1]}`, `Invalid "partitions": -1 is negative; partitions are numbered from 0`},
		{`{"to":"earliest","partitions":[3,1,3]}`, `Invalid "partitions": 3 is listed more than once`},
	} {
		_, err := Parse(decode(t, c.body))
		e, ok := err.(*api.Error)
		if !ok || e.Code != api.CodeBadRequest || e.Message != c.want {
			t.Errorf("Parse(%s)\n got %#v\nwant 400 %q", c.body, err, c.want)
		}
	}
}

func TestParseDescribe(t *testing.T) {
	for _, c := range []struct {
		body   string
		want   string
		source bool
	}{
		{`{"to":"earliest"}`, "to=earliest", true},
		{`{"to":"earliest","topics":["t1"]}`, "to=earliest topics=t1", false},
		{`{"to":"earliest","partitions":[0]}`, "to=earliest partitions=0", false},
		{`{"to":"latest"}`, "to=latest", false},
		{`{"to":"timestamp","timestamp":"2026-11-30T10:00:00Z"}`, "to=timestamp 2026-11-30T10:00:00Z", false},
		{`{"to":"timestamp","timestamp":"2026-11-30T11:00:00.25+01:00"}`, "to=timestamp 2026-11-30T10:00:00.25Z", false},
		{`{"to":"timestamp","timestamp":1796032800000}`, "to=timestamp 2026-11-30T10:00:00Z", false},
		{`{"to":"timestamp","timestamp":0}`, "to=timestamp 1970-01-01T00:00:00Z", false},
		{`{"to":"offset","offset":42}`, "to=offset 42", false},
		{`{"to":"offset","offset":0}`, "to=offset 0", false},
		{`{"shift_by":-1000}`, "shift_by=-1000", false},
		{`{"shift_by":7,"topics":["t1","t2"],"partitions":[0,3]}`, "shift_by=7 topics=t1,t2 partitions=0,3", false},
	} {
		r, err := Parse(decode(t, c.body))
		if err != nil {
			t.Errorf("Parse(%s): %v", c.body, err)
			continue
		}
		if got := r.Describe(); got != c.want {
			t.Errorf("Parse(%s).Describe() = %q, want %q", c.body, got, c.want)
		}
		if got := r.SourceApplicable(); got != c.source {
			t.Errorf("Parse(%s).SourceApplicable() = %v, want %v", c.body, got, c.source)
		}
	}
}

// TestParseTimestampForms: a timestamp decoded without UseNumber (float64)
// or set in Go (int64) reads as the json.Number would, and a time inside a
// millisecond rounds up, since no record of that millisecond is at or
// after it.
func TestParseTimestampForms(t *testing.T) {
	const ms = 1796032800000
	for _, v := range []any{json.Number("1796032800000"), float64(ms), int64(ms), "2026-11-30T10:00:00Z", "2026-11-30T09:59:59.9995Z"} {
		r, err := Parse(api.OffsetsResetRequest{To: api.ResetTimestamp, Timestamp: v})
		if err != nil || r.millis != ms {
			t.Errorf("timestamp %#v: millis %d, err %v; want %d", v, r.millis, err, ms)
		}
	}
	if _, err := Parse(api.OffsetsResetRequest{To: api.ResetTimestamp, Timestamp: 1.5}); err == nil {
		t.Errorf("a float64 with a fraction was accepted")
	}
	r, err := Parse(api.OffsetsResetRequest{ShiftBy: i64(-2), Topics: []string{"t"}})
	if err != nil || r.Describe() != "shift_by=-2 topics=t" {
		t.Errorf("Go-built request: %v, %v", r.Describe(), err)
	}
}
