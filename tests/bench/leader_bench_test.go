package bench

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// failoverRounds is how many leader kills the median is taken over.
const failoverRounds = 5

var (
	buildOnce sync.Once
	buildErr  error
)

// BenchmarkLeaderFailover measures leader failover as a client sees it:
// three `sluice coordinator` processes (default --leader-lease, 6s) and one
// agent; the leader is killed with SIGKILL, and the clock runs until a
// POST /connectors through a surviving coordinator answers 201 (creates are
// retried every 20ms, alternating between the survivors, while they answer
// 409). The killed coordinator is restarted as a follower before the next
// round. It reports the median and the maximum over 5 rounds; the run takes
// about 5 × (lease + restart), well under a minute on kfake.
//
//	go test -run '^$' -bench BenchmarkLeaderFailover -benchtime 1x ./bench/
func BenchmarkLeaderFailover(b *testing.B) {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sluice-bench-bin-")
		if err != nil {
			buildErr = err
			return
		}
		_, buildErr = procs.BuildBinary(dir) // removed with the machine's temp files
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	prefix := procs.UniquePrefix(b)
	be := sluicetest.StartBackends(b)
	brokers := be.Brokers
	var addrs []string
	var coords []*procs.Proc
	for i := range 3 {
		addr := sluicetest.FreeAddr(b)
		addrs = append(addrs, addr)
		coords = append(coords, procs.StartProc(b, fmt.Sprintf("coordinator-%d", i), "coordinator",
			"--nats", be.NATSURL, "--kafka", brokers, "--listen", addr, "--group-id", prefix,
			"--config-topic", prefix+"-configs", "--offsets-topic", prefix+"-offsets", "--status-topic", prefix+"-status"))
	}
	procs.StartProc(b, "agent-1", "agent", "--nats", be.NATSURL, "--kafka", brokers, "--id", "agent-1",
		"--work-dir", b.TempDir(), "--group-id", prefix, "--offsets-topic", prefix+"-offsets")
	for i, addr := range addrs {
		procs.WaitHealthy(b, "http://"+addr, 60*time.Second, coords[i])
	}

	create := func(i, n int) (int, error) {
		body := fmt.Sprintf(`{"name":%q,"initial_state":"STOPPED","config":{"connector.class":"FileStreamSource","file":"f.txt","topic":%q}}`,
			fmt.Sprintf("%s-c%d", prefix, n), prefix+"-t")
		resp, err := http.Post("http://"+addrs[i]+"/connectors", "application/json", strings.NewReader(body))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var took []time.Duration
	n := 0
	b.ResetTimer()
	for round := range failoverRounds {
		leader := waitLeader(b, addrs, 60*time.Second)
		// A write through the leader first, so every round starts healthy.
		if code, err := create(leader, n); err != nil || code != http.StatusCreated {
			b.Fatalf("round %d: create through the leader: %d %v", round, code, err)
		}
		n++
		survivors := []int{(leader + 1) % 3, (leader + 2) % 3}
		killed := time.Now()
		coords[leader].Kill()
		for k := 0; ; k++ {
			code, err := create(survivors[k%2], n)
			n++
			if err == nil && code == http.StatusCreated {
				break
			}
			if err == nil && code != http.StatusConflict && code < 500 {
				b.Fatalf("round %d: create answered %d", round, code)
			}
			if time.Since(killed) > 60*time.Second {
				b.Fatalf("round %d: no successful write 60s after the kill (last: %d %v)", round, code, err)
			}
			time.Sleep(20 * time.Millisecond) // the client's retry interval, part of what is measured
		}
		d := time.Since(killed)
		took = append(took, d)
		b.Logf("round %d: killed coordinator-%d; first write through a survivor after %v", round, leader, d.Round(time.Millisecond))
		coords[leader].Start()
		procs.WaitHealthy(b, "http://"+addrs[leader], 60*time.Second, coords[leader])
	}
	b.StopTimer()
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(took[len(took)/2]), "median-failover-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-failover-ms")
	b.ReportMetric(0, "ns/op")
}

// waitLeader waits until exactly one coordinator says role leader in GET
// /health and returns its index.
func waitLeader(b *testing.B, addrs []string, timeout time.Duration) int {
	b.Helper()
	leader := -1
	cl := &http.Client{Timeout: 2 * time.Second}
	sluicetest.Eventually(b, timeout, func() (bool, string) {
		var leaders []int
		for i, a := range addrs {
			resp, err := cl.Get("http://" + a + "/health")
			if err != nil {
				continue
			}
			var h struct {
				Role string `json:"role"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.Role == "leader" {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) != 1 {
			return false, fmt.Sprintf("leaders: %v", leaders)
		}
		leader = leaders[0]
		return true, ""
	})
	return leader
}
