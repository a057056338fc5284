package integration

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/sluicetest"
)

// lagHistory reads a connector's lag history through url.
func lagHistory(t *testing.T, url, name string) api.LagHistory {
	t.Helper()
	r := sluicetest.DoWith(t, url, "GET", "/sluice/connectors/"+name+"/lag/history", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("lag history of %s: %s", name, r)
	}
	var h api.LagHistory
	r.JSON(t, &h)
	return h
}

// TestLagHistory: the leader samples a stopped sink's backlog, every
// sample of its partition the records it has not consumed; once the sink
// runs, the samples fall to 0, in time order. A follower forwards the read
// to the leader; a source connector's series are empty with a note, and an
// unknown connector is a 404.
func TestLagHistory(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, LagHistoryInterval: 100 * time.Millisecond})
	topic, sink := c.Name("lag-in"), c.Name("lag-sink")
	const backlog = 25
	c.Produce(topic, lines(0, backlog)...)
	fileSink(c, sink, topic, "lag-out.txt", "STOPPED")

	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		h := lagHistory(t, c.URL, sink)
		if len(h.Partitions) != 1 || len(h.Partitions[0].Samples) < 2 {
			return false, fmt.Sprintf("%+v", h)
		}
		for _, s := range h.Partitions[0].Samples {
			if s[1] != backlog {
				return false, fmt.Sprintf("a stopped sink's sample %v, want lag %d", s, backlog)
			}
		}
		return true, ""
	})

	c.Must(http.StatusAccepted, "PUT", "/connectors/"+sink+"/resume", nil)
	var h api.LagHistory
	sluicetest.Eventually(t, 60*time.Second, func() (bool, string) {
		h = lagHistory(t, c.URL, sink)
		s := h.Partitions[0].Samples
		return s[len(s)-1][1] == 0, fmt.Sprintf("newest sample %v", s[len(s)-1])
	})
	p := h.Partitions[0]
	if p.Topic != topic || p.Partition != 0 || h.IntervalMillis != 100 || h.Since.IsZero() || h.Connector != sink {
		t.Errorf("history %+v", h)
	}
	if p.Samples[0][1] != backlog {
		t.Errorf("oldest sample %v, want the backlog %d", p.Samples[0], backlog)
	}
	for i := 1; i < len(p.Samples); i++ {
		if p.Samples[i][0] < p.Samples[i-1][0] || p.Samples[i][1] > p.Samples[i-1][1] {
			t.Fatalf("samples %v then %v: out of time order, or a lag that grew with nothing produced", p.Samples[i-1], p.Samples[i])
		}
	}
	if len(p.Samples) > 240 {
		t.Errorf("%d samples kept, more than 240", len(p.Samples))
	}

	_, follower := c.StartExtraCoordinator()
	sluicetest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, follower, "GET", "/sluice/connectors/"+sink+"/lag/history", nil)
		return r.Status == http.StatusOK && strings.Contains(string(r.Body), `"topic":"`+topic+`"`), r.String()
	})

	src := c.Name("lag-src")
	fileSource(c, src, "in.txt", c.Name("lag-src-data"), "STOPPED")
	if h := lagHistory(t, c.URL, src); h.Note != "a source connector has no consumer lag" || len(h.Partitions) != 0 {
		t.Errorf("a source's lag history %+v", h)
	}
	wantError(t, c.Do("GET", "/sluice/connectors/"+c.Name("nobody")+"/lag/history", nil), http.StatusNotFound,
		fmt.Sprintf("Connector %s not found", c.Name("nobody")))
}
