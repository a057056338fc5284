package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

// TestCLIGauges reads a bounded generator's gauges through the CLI: `get
// gauges` as a table, one gauge a line, and as JSON rows; `connector
// gauges` as the server's answer; `describe connector` with a gauges
// section; an unknown connector is a 404, exit 1.
func TestCLIGauges(t *testing.T) {
	cl := startCluster(t)
	dir := t.TempDir()
	create(t, cl.URL, dir, `{"name":"gen","config":{"connector.class":"GeneratorSource","topic":"gen","streams":"2","count":"5","rate":"100"}}`)
	var table string
	eventually(t, 60*time.Second, func() (bool, string) {
		out, errOut, code := runCLI(t, "get", "gauges", "gen", "--url", cl.URL)
		table = out
		return code == 0 && strings.Contains(out, `generator_stream_records{stream="1"}  5`), out + errOut
	})
	lines := strings.Split(strings.TrimSpace(table), "\n")
	fields := func(i int) []string { return strings.Fields(lines[i]) }
	if len(lines) != 4 || strings.Join(fields(0), " ") != "CONNECTOR TASK AGENT GAUGE VALUE" ||
		strings.Join(fields(1)[3:], " ") != "generator_stream_count 5" ||
		strings.Join(fields(2)[3:], " ") != `generator_stream_records{stream="0"} 5` ||
		fields(1)[0] != "gen" || fields(1)[1] != "0" {
		t.Fatalf("get gauges:\n%s", table)
	}

	var rows []struct {
		Connector string            `json:"connector"`
		Task      int               `json:"task"`
		Agent     string            `json:"agent"`
		Name      string            `json:"name"`
		Labels    map[string]string `json:"labels"`
		Value     float64           `json:"value"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, "get", "gauges", "gen", "-o", "json", "--url", cl.URL)), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("get gauges -o json: %+v %v", rows, err)
	}
	if r := rows[2]; r.Connector != "gen" || r.Agent == "" || r.Name != "generator_stream_records" || r.Labels["stream"] != "1" || r.Value != 5 {
		t.Errorf("row %+v", r)
	}

	var answer api.ConnectorGauges
	if err := json.Unmarshal([]byte(mustCLI(t, "connector", "gauges", "gen", "--url", cl.URL)), &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Connector != "gen" || len(answer.Tasks) != 1 || answer.Tasks[0].WorkerID != rows[0].Agent || len(answer.Tasks[0].Gauges) != 3 {
		t.Errorf("connector gauges: %+v", answer)
	}

	// describe shows them too, the connector's tasks reporting some.
	if out := mustCLI(t, "describe", "connector", "gen", "--url", cl.URL); !strings.Contains(out, "\ngauges:\n") ||
		!strings.Contains(out, `generator_stream_records{stream="1"}  5`) {
		t.Errorf("describe connector:\n%s", out)
	}

	out, errOut, code := runCLI(t, "get", "gauges", "nope", "--url", cl.URL)
	if code != 1 || !strings.Contains(errOut, "404: Connector nope not found") {
		t.Errorf("unknown connector: exit %d\n%s%s", code, out, errOut)
	}
}
