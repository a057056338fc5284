package audit

import (
	"net/url"
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
	// Since, when not zero, keeps only records from that time on.
	Since time.Time
	// Limit is the most records returned, the newest.
	Limit int
	// Visible, when set, keeps only the records it accepts the connector
	// of ("" for a record that names none): a caller sees only the records
	// of connectors its grants cover. Applied before Limit.
	Visible func(connector string) bool
}

// queryParams are the parameters GET /sluice/audit takes.
var queryParams = []string{"connector", "since", "limit"}

// ParseQuery reads GET /sluice/audit's parameters: connector (a name),
// since (an RFC 3339 time, or a duration back from now such as 90s, 1h or
// 7d) and limit (1 to MaxLimit, default DefaultLimit). Anything else, a
// parameter given twice or a value that does not parse is a 400 naming it.
func ParseQuery(params url.Values, now time.Time) (Query, error) {
	q := Query{Limit: DefaultLimit}
	for name, vals := range params {
		if !slices.Contains(queryParams, name) {
			return Query{}, api.Errorf(api.CodeBadRequest, "Unknown query parameter '%s': GET /sluice/audit takes connector, since and limit", name)
		}
		if len(vals) > 1 {
			return Query{}, api.Errorf(api.CodeBadRequest, "Query parameter '%s' is given %d times: give it once", name, len(vals))
		}
	}
	if params.Has("connector") {
		if q.Connector = params.Get("connector"); q.Connector == "" {
			return Query{}, api.Errorf(api.CodeBadRequest, "Query parameter 'connector' must not be empty: leave it out for every connector")
		}
	}
	if params.Has("since") {
		since, err := parseSince(params.Get("since"), now)
		if err != nil {
			return Query{}, err
		}
		q.Since = since
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

// parseSince reads since: an RFC 3339 time, or a positive duration back
// from now in Go's syntax (1h30m, 90s) or whole days (7d).
func parseSince(v string, now time.Time) (time.Time, error) {
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
		return time.Time{}, api.Errorf(api.CodeBadRequest, "Invalid since '%s': must be an RFC 3339 time (2026-01-02T15:04:05Z) or a positive duration back from now (90s, 1h, 7d)", v)
	}
	return now.Add(-d), nil
}
