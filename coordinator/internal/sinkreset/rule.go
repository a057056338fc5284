// Package sinkreset turns a reset rule (POST
// /sluice/connectors/{name}/offsets/reset) into the exact positions a sink
// connector's consumer group is to be moved to, resolved on the broker the
// way kafka-consumer-groups --reset-offsets resolves --to-earliest,
// --to-latest, --to-datetime, --shift-by and --to-offset. It computes
// positions only; writing them is the herder's fenced offsets path.
package sinkreset

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// ruleShift is the kind of a Rule made from shift_by: it has no "to".
const ruleShift = "shift_by"

// acceptedTo lists the values of "to" for the messages that refuse one.
const acceptedTo = "earliest, latest, timestamp or offset"

// timestampForms says what "timestamp" accepts, for the messages that
// refuse one.
const timestampForms = `an RFC 3339 time such as "2026-11-30T10:00:00Z" or epoch milliseconds as a JSON number`

// Rule is one validated reset rule. Only Parse makes one, so a Rule always
// holds exactly one rule with the values it needs.
type Rule struct {
	kind string // a wire.Reset* rule, or ruleShift
	// at is the time of a timestamp rule; millis is at in epoch
	// milliseconds, rounded up so that a record in the same millisecond
	// but before at is not "at or after" it.
	at     time.Time
	millis int64
	offset int64 // of an offset rule
	shift  int64 // of a shift rule

	topics     []string
	partitions []int32
}

// Parse validates req: exactly one rule, "to" (earliest, latest, timestamp
// or offset) or "shift_by" alone, with the value that rule needs and none
// other, and narrowing lists without blanks, negatives or repeats. Every
// refusal is a 400 *api.Error naming the field and what it accepts.
func Parse(req api.OffsetsResetRequest) (Rule, error) {
	r := Rule{kind: req.To}
	switch {
	case req.To == "" && req.ShiftBy == nil:
		return Rule{}, badRequest(`A reset needs exactly one rule: "to" (%s) or "shift_by"`, acceptedTo)
	case req.To != "" && req.ShiftBy != nil:
		return Rule{}, badRequest(`"to" and "shift_by" cannot be combined: give "to" (%s) or "shift_by" alone`, acceptedTo)
	case req.ShiftBy != nil:
		r.kind = ruleShift
		if *req.ShiftBy == 0 {
			return Rule{}, badRequest(`Invalid "shift_by" 0: it must be a non-zero number of records (negative moves back, positive forward)`)
		}
		r.shift = *req.ShiftBy
	case req.To != api.ResetEarliest && req.To != api.ResetLatest && req.To != api.ResetTimestamp && req.To != api.ResetOffset:
		return Rule{}, badRequest(`Invalid "to" %q: it must be %s`, req.To, acceptedTo)
	}

	if r.kind == api.ResetTimestamp {
		if req.Timestamp == nil {
			return Rule{}, badRequest(`"to": "timestamp" needs "timestamp": %s`, timestampForms)
		}
		at, err := parseTimestamp(req.Timestamp)
		if err != nil {
			return Rule{}, err
		}
		r.at = at.UTC()
		r.millis = ceilMillis(at)
	} else if req.Timestamp != nil {
		return Rule{}, badRequest(`"timestamp" is only accepted with "to": "timestamp" (this request's rule is %s)`, r.name())
	}

	if r.kind == api.ResetOffset {
		if req.Offset == nil {
			return Rule{}, badRequest(`"to": "offset" needs "offset": a position of 0 or more`)
		}
		if *req.Offset < 0 {
			return Rule{}, badRequest(`Invalid "offset" %d: it must be 0 or more`, *req.Offset)
		}
		r.offset = *req.Offset
	} else if req.Offset != nil {
		return Rule{}, badRequest(`"offset" is only accepted with "to": "offset" (this request's rule is %s)`, r.name())
	}

	seenTopic := map[string]bool{}
	for i, t := range req.Topics {
		switch {
		case t == "":
			return Rule{}, badRequest(`Invalid "topics": entry %d is empty; each entry must name a topic`, i)
		case seenTopic[t]:
			return Rule{}, badRequest(`Invalid "topics": %q is listed more than once`, t)
		}
		seenTopic[t] = true
	}
	seenPartition := map[int32]bool{}
	for _, p := range req.Partitions {
		switch {
		case p < 0:
			return Rule{}, badRequest(`Invalid "partitions": %d is negative; partitions are numbered from 0`, p)
		case seenPartition[p]:
			return Rule{}, badRequest(`Invalid "partitions": %d is listed more than once`, p)
		}
		seenPartition[p] = true
	}
	r.topics = append([]string(nil), req.Topics...)
	r.partitions = append([]int32(nil), req.Partitions...)
	return r, nil
}

// name is the rule as the request spelled it, for messages.
func (r Rule) name() string {
	if r.kind == ruleShift {
		return `"shift_by"`
	}
	return fmt.Sprintf(`"to": %q`, r.kind)
}

// parseTimestamp reads "timestamp": an RFC 3339 string, or epoch
// milliseconds as the JSON number the REST decoder makes (json.Number), or
// as float64 or an integer when decoded otherwise. A time before the epoch
// is refused: ListOffsets reads negative timestamps as special positions
// (-1 latest, -2 earliest), never as times.
func parseTimestamp(v any) (time.Time, error) {
	var ms int64
	switch t := v.(type) {
	case string:
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return time.Time{}, badRequest(`Invalid "timestamp" %q: expected %s`, t, timestampForms)
		}
		if at.Before(time.UnixMilli(0)) {
			return time.Time{}, badRequest(`Invalid "timestamp" %q: it must not be before 1970-01-01T00:00:00Z`, t)
		}
		return at, nil
	case json.Number:
		n, err := strconv.ParseInt(t.String(), 10, 64)
		if err != nil {
			return time.Time{}, badRequest(`Invalid "timestamp" %s: epoch milliseconds must be a whole number that fits 64 bits`, t)
		}
		ms = n
	case float64:
		if t != math.Trunc(t) || math.Abs(t) > 1<<53 {
			return time.Time{}, badRequest(`Invalid "timestamp" %v: epoch milliseconds must be a whole number`, t)
		}
		ms = int64(t)
	case int64:
		ms = t
	case int:
		ms = int64(t)
	default:
		return time.Time{}, badRequest(`Invalid "timestamp" of JSON type %s: expected %s`, jsonType(v), timestampForms)
	}
	if ms < 0 {
		return time.Time{}, badRequest(`Invalid "timestamp" %d: epoch milliseconds must not be negative`, ms)
	}
	return time.UnixMilli(ms), nil
}

// jsonType names the JSON type a decoded value came from.
func jsonType(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// ceilMillis is at in epoch milliseconds, rounded up: Kafka's record
// timestamps are milliseconds, and the first record at or after
// 10:00:00.0005 is the first one at 10:00:00.001 or later.
func ceilMillis(at time.Time) int64 {
	ms := at.UnixMilli()
	if at.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return ms
}

// Describe is the rule in one line for the offsets history entry:
// "to=earliest", "to=latest", "to=timestamp 2026-11-30T10:00:00Z",
// "to=offset 42" or "shift_by=-1000", followed by " topics=t1,t2" and
// " partitions=0,3" when narrowed.
func (r Rule) Describe() string {
	var b strings.Builder
	switch r.kind {
	case ruleShift:
		fmt.Fprintf(&b, "shift_by=%d", r.shift)
	case api.ResetTimestamp:
		fmt.Fprintf(&b, "to=timestamp %s", r.at.Format(time.RFC3339Nano))
	case api.ResetOffset:
		fmt.Fprintf(&b, "to=offset %d", r.offset)
	default:
		b.WriteString("to=" + r.kind)
	}
	if len(r.topics) > 0 {
		b.WriteString(" topics=" + strings.Join(r.topics, ","))
	}
	if len(r.partitions) > 0 {
		b.WriteString(" partitions=" + joinPartitions(r.partitions))
	}
	return b.String()
}

// SourceApplicable reports whether the rule means something for a source
// connector: only to=earliest with no narrowing, which is a reset of all
// its offsets. A source's offsets are its own, not Kafka positions, so no
// other rule (and no topic or partition) can be resolved for one.
func (r Rule) SourceApplicable() bool {
	return r.kind == api.ResetEarliest && len(r.topics) == 0 && len(r.partitions) == 0
}

func joinPartitions(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ",")
}

func badRequest(format string, args ...any) *api.Error {
	return api.Errorf(api.CodeBadRequest, format, args...)
}
