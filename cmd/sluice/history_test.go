package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
)

// TestCLIConfigHistory: `get config-history` lists a connector's config
// changes as a table, newest first, and shows one entry's changes;
// `restore config` puts an entry's config back and says what changed;
// `connector config-history` prints the server's answer.
func TestCLIConfigHistory(t *testing.T) {
	cl := startCluster(t)
	dir := t.TempDir()
	create(t, cl.URL, dir, `{"name":"gen","config":{"connector.class":"GeneratorSource","topic":"gen","rate":"50"},"initial_state":"STOPPED"}`)
	mustCLI(t, "patch", "connector", "gen", "--set", "rate=7", "--url", cl.URL)

	out := mustCLI(t, "get", "config-history", "gen", "--url", cl.URL)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || strings.Join(strings.Fields(lines[0]), " ") != "ID TIME OPERATION PRINCIPAL CHANGES DETAIL" ||
		!strings.Contains(lines[1], " patch ") || !strings.Contains(lines[1], "~rate") || !strings.Contains(lines[2], " create ") {
		t.Fatalf("get config-history:\n%s", out)
	}
	createID := strings.Fields(lines[2])[0]
	patchID := strings.Fields(lines[1])[0]
	if out := mustCLI(t, "get", "config-history", "gen", patchID, "--url", cl.URL); !strings.Contains(out, "operation:  patch") || !strings.Contains(out, "~rate: 50 -> 7") {
		t.Fatalf("get config-history gen %s:\n%s", patchID, out)
	}

	if out := mustCLI(t, "restore", "config", "gen", createID, "--url", cl.URL); !strings.Contains(out, "~rate: 7 -> 50") {
		t.Fatalf("restore config:\n%s", out)
	}
	var h api.ConfigHistory
	if err := json.Unmarshal([]byte(mustCLI(t, "connector", "config-history", "gen", "--url", cl.URL)), &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Entries) != 3 || h.Entries[0].Operation != "restore" || h.Entries[0].Detail != "restored entry "+createID {
		t.Fatalf("connector config-history: %+v", h)
	}
	_, errOut, code := runCLI(t, "restore", "config", "gen", "1796119200123-c98a176d316d2399", "--url", cl.URL)
	if code != 1 || !strings.Contains(errOut, "404: Config history entry 1796119200123-c98a176d316d2399 of connector gen not found") {
		t.Errorf("restore of an unknown entry: exit %d %s", code, errOut)
	}
}

// TestCLILag: `get lag` shows a stopped sink's lag per partition, and
// `--history` the leader's samples of it with a trend; a source's history
// says why it has none.
func TestCLILag(t *testing.T) {
	t.Setenv("SLUICE_LAG_HISTORY_INTERVAL", "100ms")
	cl := startCluster(t)
	dir := t.TempDir()
	create(t, cl.URL, dir, `{"name":"gen","config":{"connector.class":"GeneratorSource","topic":"lagged","count":"5","rate":"100"}}`)
	create(t, cl.URL, dir, `{"name":"snk","config":{"connector.class":"FileStreamSink","topics":"lagged","file":"out.txt"},"initial_state":"STOPPED"}`)
	eventually(t, 60*time.Second, func() (bool, string) {
		out, errOut, code := runCLI(t, "get", "lag", "snk", "--url", cl.URL)
		return code == 0 && len(strings.Fields(strings.Split(out, "\n")[1])) == 6 && strings.Fields(strings.Split(out, "\n")[1])[3] == "5", out + errOut
	})
	var out string
	eventually(t, 60*time.Second, func() (bool, string) {
		o, errOut, code := runCLI(t, "get", "lag", "snk", "--history", "--url", cl.URL)
		out = o
		f := strings.Fields(strings.Split(o+"\n", "\n")[1])
		return code == 0 && len(f) == 8 && f[3] == "5" && strings.HasSuffix(f[7], "██"), o + errOut
	})
	if head := strings.Join(strings.Fields(strings.Split(out, "\n")[0]), " "); head != "CONNECTOR TOPIC PARTITION NOW MIN MAX SINCE TREND" {
		t.Errorf("get lag --history:\n%s", out)
	}
	if out := mustCLI(t, "get", "lag", "gen", "--history", "--url", cl.URL); !strings.Contains(out, "a source connector has no consumer lag") {
		t.Errorf("a source's lag history:\n%s", out)
	}
}
