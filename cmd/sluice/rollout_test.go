package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestRolloutCLI rolls a patch out to two file sources with `sluice
// rollout create --watch` (not a terminal: one progress line per change),
// then lists and shows it, and checks the commands' refusals.
func TestRolloutCLI(t *testing.T) {
	cl := startCluster(t)
	u := cl.URL
	dir := t.TempDir()
	writeFile(t, cl.WorkDir, "in.txt", "a\n")
	for _, n := range []string{"ro-a", "ro-b"} {
		writeFile(t, dir, n+".json", `{"name":"`+n+`","config":{"connector.class":"FileStreamSource","file":"in.txt","topic":"`+n+`"}}`)
		mustCLI(t, "connectors", "create", "-f", dir+"/"+n+".json", "--wait", "--url", u)
	}
	spec := writeFile(t, dir, "rollout.json", `{"match":"ro-*","patch":{"batch.size":"10"},"batches":[1],"health":{"running_for":"1s"}}`)
	// A dry run shows the batches and each change, and starts nothing: the
	// rollout below takes the same connectors without a 409.
	plan := mustCLI(t, "rollout", "create", "-f", spec, "--dry-run", "--url", u)
	if !strings.HasPrefix(plan, "dry run: 2 connectors in 2 batches, on failure pause, healthy for 1s with at most 0 task(s) FAILED; nothing was started\n") ||
		!regexp.MustCompile(`(?m)^2\s+pending\s+ro-b\s+pending\s+false\s+\+batch.size$`).MatchString(plan) {
		t.Fatalf("create --dry-run:\n%s", plan)
	}
	if _, _, code := runCLI(t, "rollout", "create", "-f", spec, "--dry-run", "--watch", "--url", u); code != exitUsage {
		t.Fatalf("--dry-run --watch: exit %d", code)
	}
	out := mustCLI(t, "rollout", "create", "-f", spec, "--watch", "--interval", "200ms", "--url", u)
	id := regexp.MustCompile(`^rollout (\S+): 2 connectors in 2 batches\n`).FindStringSubmatch(out)
	if id == nil || !strings.Contains(out, "batch 1/2 [##########] 1/1 verifying\n") || !strings.Contains(out, "batch 2/2 [##########] 1/1 done\n") ||
		!strings.HasSuffix(out, "rollout "+id[1]+" done\n") {
		t.Fatalf("create --watch:\n%s", out)
	}
	if strings.Count(out, "batch 1/2 [##########] 1/1 done\n") != 1 {
		t.Fatalf("an unchanged line was printed again:\n%s", out)
	}
	list := mustCLI(t, "rollout", "list", "--url", u)
	if !regexp.MustCompile(`(?m)^ID\s+STATE\s+BATCH\s+CONNECTORS\s+PATCH\s+PRINCIPAL\s+CREATED\n` + regexp.QuoteMeta(id[1]) + `\s+done\s+2/2\s+2\s+batch.size\s+anonymous\s`).MatchString(list) {
		t.Fatalf("list:\n%s", list)
	}
	get := mustCLI(t, "rollout", "get", id[1], "--url", u)
	if !strings.HasPrefix(get, "rollout "+id[1]+": done, batch 2/2, on failure pause, healthy for 1s with at most 0 task(s) FAILED\n") ||
		!regexp.MustCompile(`(?m)^1\s+done\s+ro-a\s+applied\s+true\s+\+batch.size$`).MatchString(get) {
		t.Fatalf("get:\n%s", get)
	}
	var r api.Rollout
	if err := json.Unmarshal([]byte(mustCLI(t, "rollout", "get", id[1], "-o", "json", "--url", u)), &r); err != nil || r.ID != id[1] || r.Batches[1].Connectors[0].After["batch.size"] != "10" {
		t.Fatalf("get -o json: %+v, %v", r, err)
	}
	_, errOut, code := runCLI(t, "rollout", "abort", id[1], "--url", u)
	if code != exitRefused || errOut != "sluice: 409: Rollout "+id[1]+" is done already\n" {
		t.Fatalf("abort of a done rollout: exit %d, %s", code, errOut)
	}
	if _, _, code := runCLI(t, "rollout", "pause", "--url", u); code != exitUsage {
		t.Fatalf("pause without an id: exit %d", code)
	}
	bad := writeFile(t, dir, "bad.json", `{"match":"","patch":{"k":"v"}}`)
	_, errOut, code = runCLI(t, "rollout", "create", "-f", bad, "--url", u)
	if code != exitRefused || !strings.Contains(errOut, `400: Give exactly one of "names" or "match"`) {
		t.Fatalf("an empty match: exit %d, %s", code, errOut)
	}
}
