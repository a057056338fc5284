package audit

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/api"
)

// The bounds of GET /sluice/audit's limit.
const (
	DefaultLimit = 100
	MaxLimit     = 10000
)

// Query selects audit records.
type Query struct {
	// Connector, when set, keeps only the records of that connector.
	Connector string
	// Principal, when set, keeps only the records of that caller.
	Principal string
	// Operation, when set, keeps only the records whose operation it
	// matches: a name such as connector.create, or a glob in path.Match
	// syntax such as offsets.* (a UI filters a family of writes with it).
	Operation string
	// Since, when not zero, keeps only records from that time on.
	Since time.Time
	// Until, when not zero, keeps only records from before that time: with
	// Since a time range, and alone the cursor of the next page back (the
	// time of the oldest record of the page before).
	Until time.Time
	// Limit is the most records returned, the newest.
	Limit int
	// Visible, when set, keeps only the records it accepts the connector
	// of ("" for a record that names none): a caller sees only the records
	// of connectors its grants cover. Applied before Limit.
	Visible func(connector string) bool
}

// queryParams are the parameters GET /sluice/audit takes.
var queryParams = []string{"connector", "principal", "operation", "since", "until", "limit"}

// ParseQuery reads GET /sluice/audit's parameters: connector (a name),
// principal (a caller), operation (a name or a glob), since and until (an
// RFC 3339 time, or a duration back from now such as 90s, 1h or 7d) and
// limit (1 to MaxLimit, default DefaultLimit). Anything else, a parameter
// given twice or empty, or a value that does not parse is a 400 naming it.
func ParseQuery(params url.Values, now time.Time) (Query, error) {
	q := Query{Limit: DefaultLimit}
	for name, vals := range params {
		if !slices.Contains(queryParams, name) {
			return Query{}, api.Errorf(api.CodeBadRequest, "Unknown query parameter '%s': GET /sluice/audit takes connector, principal, operation, since, until and limit", name)
		}
		if len(vals) > 1 {
			return Query{}, api.Errorf(api.CodeBadRequest, "Query parameter '%s' is given %d times: give it once", name, len(vals))
		}
	}
	for _, p := range []struct {
		name string
		to   *string
	}{{"connector", &q.Connector}, {"principal", &q.Principal}, {"operation", &q.Operation}} {
		if name, to := p.name, p.to; params.Has(name) {
			if *to = params.Get(name); *to == "" {
				return Query{}, api.Errorf(api.CodeBadRequest, "Query parameter '%s' must not be empty: leave it out for every %s", name, name)
			}
		}
	}
	if _, err := path.Match(q.Operation, ""); err != nil {
		return Query{}, api.Errorf(api.CodeBadRequest, "Invalid operation '%s': not a glob (%v)", q.Operation, err)
	}
	for _, p := range []struct {
		name string
		to   *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if name, to := p.name, p.to; params.Has(name) {
			t, err := parseTime(name, params.Get(name), now)
			if err != nil {
				return Query{}, err
			}
			*to = t
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return Query{}, api.Errorf(api.CodeBadRequest, "Invalid time range: since (%s) must be before until (%s)",
			q.Since.UTC().Format(time.RFC3339Nano), q.Until.UTC().Format(time.RFC3339Nano))
	}
	if params.Has("limit") {
		v := params.Get("limit")
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return Query{}, api.Errorf(api.CodeBadRequest, "Invalid limit '%s': must be an integer from 1 to %d", v, MaxLimit)
		}
		q.Limit = n
	}
	return q, nil
}

// parseTime reads since or until (name): an RFC 3339 time, or a positive
// duration back from now in Go's syntax (1h30m, 90s) or whole days (7d).
func parseTime(name, v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(v)
	if days, ok := strings.CutSuffix(v, "d"); ok && err != nil {
		if n, nerr := strconv.Atoi(days); nerr == nil && n >= 0 && n <= 100000 {
			d, err = time.Duration(n)*24*time.Hour, nil
		}
	}
	if err != nil || d <= 0 {
		return time.Time{}, api.Errorf(api.CodeBadRequest, "Invalid %s '%s': must be an RFC 3339 time (2026-01-02T15:04:05Z) or a positive duration back from now (90s, 1h, 7d)", name, v)
	}
	return now.Add(-d), nil
}
