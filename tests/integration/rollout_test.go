package integration

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// rolloutWait bounds how long a test waits for a rollout to reach a state.
const rolloutWait = 2 * time.Minute

// createRollout posts a rollout and fails the test unless it is created.
func createRollout(c *sluicetest.Cluster, body map[string]any) api.Rollout {
	c.T.Helper()
	var r api.Rollout
	c.Must(http.StatusCreated, "POST", "/sluice/rollouts", body).JSON(c.T, &r)
	if r.ID == "" || r.State != api.RolloutRunning {
		c.T.Fatalf("created rollout %+v", r)
	}
	return r
}

// getRollout reads a rollout.
func getRollout(c *sluicetest.Cluster, id string) api.Rollout {
	c.T.Helper()
	var r api.Rollout
	c.Must(http.StatusOK, "GET", "/sluice/rollouts/"+id, nil).JSON(c.T, &r)
	return r
}

// waitRollout waits until a rollout is in state and returns it.
func waitRollout(c *sluicetest.Cluster, id, state string) api.Rollout {
	c.T.Helper()
	var r api.Rollout
	sluicetest.Eventually(c.T, rolloutWait, func() (bool, string) {
		r = getRollout(c, id)
		return r.State == state, fmt.Sprintf("rollout %s at batch %d: %s", r.State, r.Batch, batchStates(r))
	})
	return r
}

// batchStates is each batch's state, for messages.
func batchStates(r api.Rollout) string {
	var out []string
	for _, b := range r.Batches {
		out = append(out, fmt.Sprintf("%s(%d)", b.State, len(b.Connectors)))
	}
	return strings.Join(out, " ") + " " + r.Error
}

// connectorConfig is a connector's config as GET …/config answers it.
func connectorConfig(c *sluicetest.Cluster, name string) map[string]string {
	c.T.Helper()
	var cfg map[string]string
	c.Must(http.StatusOK, "GET", "/connectors/"+name+"/config", nil).JSON(c.T, &cfg)
	return cfg
}

// configWrites counts the config records written for a connector's config
// (its create and each change), from the config topic itself.
func configWrites(c *sluicetest.Cluster, names ...string) map[string]int {
	c.T.Helper()
	out := map[string]int{}
	for _, r := range c.ReadTopic(c.Prefix + "-configs") {
		if n, ok := strings.CutPrefix(string(r.Key), "connector-"); ok && r.Value != nil {
			out[n]++
		}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			out[n] = 0
		}
	}
	return out
}

// createGenerators creates n slow generators named <prefix>-<i>.
func createGenerators(c *sluicetest.Cluster, topic, prefix string, n int) []string {
	c.T.Helper()
	var names []string
	for i := range n {
		name := c.Name(fmt.Sprintf("%s-%d", prefix, i))
		mustCreate(c, name, generatorCfg(topic, "rate", "5"), "")
		names = append(names, name)
	}
	return names
}

// TestRolloutRollsBackFailedBatch is issue 17's rollout test: 60
// connectors, a patch that validates everywhere but makes the tasks of
// batch 2 fail (its connectors are file sinks, and the patch points their
// file into a directory that does not exist; the generators of the other
// batches ignore the key), on_failure rollback: the rollout stops after
// batch 2, batches 1 and 2 have exactly their previous configs, the later
// batch and a connector outside the match are untouched.
func TestRolloutRollsBackFailedBatch(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	topic, in := c.Name("gen"), c.Name("sink-in")
	c.Produce(in, "one")
	dir := t.TempDir()
	var names []string
	for i := range 60 {
		name := c.Name(fmt.Sprintf("ro-%02d", i))
		cfg := generatorCfg(topic, "rate", "5")
		if i >= 1 && i <= 10 {
			cfg = fileSinkCfg(filepath.Join(dir, name+".txt"), in)
		}
		mustCreate(c, name, cfg, "")
		names = append(names, name)
	}
	outside := c.Name("other")
	mustCreate(c, outside, generatorCfg(topic, "rate", "5"), "")
	before := map[string]map[string]string{}
	for _, n := range append(names, outside) {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
		before[n] = connectorConfig(c, n)
	}

	r := createRollout(c, map[string]any{
		"match":      c.Name("ro-*"),
		"patch":      map[string]any{"file": filepath.Join(dir, "missing", "out.txt"), "rollout.tag": "v2"},
		"batches":    []any{1, 10, "rest"},
		"health":     map[string]any{"running_for": "1s", "max_failed_tasks": 0},
		"on_failure": "rollback",
	})
	if len(r.Batches) != 3 || len(r.Batches[0].Connectors) != 1 || len(r.Batches[1].Connectors) != 10 || len(r.Batches[2].Connectors) != 49 {
		t.Fatalf("batches: %s", batchStates(r))
	}
	if got := r.Batches[1].Connectors[0]; got.Name != names[1] || !maps.Equal(got.Before, before[names[1]]) || got.After["rollout.tag"] != "v2" {
		t.Fatalf("batch 2's first connector: %+v", got)
	}
	r = waitRollout(c, r.ID, api.RolloutRolledBack)
	t.Logf("rolled back: %s", r.Error)
	if r.Batches[0].State != api.BatchRolledBack || r.Batches[1].State != api.BatchRolledBack || r.Batches[2].State != api.BatchPending {
		t.Fatalf("batch states: %s", batchStates(r))
	}
	if r.Batch != 1 || !strings.Contains(r.Error, "batch 2 of 3 failed its health gate") || !strings.Contains(r.Error, "FAILED") {
		t.Fatalf("rollout at batch %d, error %q", r.Batch, r.Error)
	}
	for _, rc := range append(r.Batches[0].Connectors, r.Batches[1].Connectors...) {
		if rc.State != api.BatchRolledBack || !rc.WasRunning {
			t.Errorf("%s: state %q, was_running %v", rc.Name, rc.State, rc.WasRunning)
		}
	}
	writes := configWrites(c, append(names, outside)...)
	for i, n := range append(names, outside) {
		if got := connectorConfig(c, n); !maps.Equal(got, before[n]) {
			t.Errorf("%s: config %v, want it as before %v", n, got, before[n])
		}
		want := 1 // created only
		if i <= 10 {
			want = 3 // created, patched, rolled back
		}
		if writes[n] != want {
			t.Errorf("%s: %d config writes, want %d", n, writes[n], want)
		}
	}
	for _, n := range names[1:11] {
		c.WaitState(n, "RUNNING", 1, "RUNNING") // back at its old file
	}
}

// TestRolloutPauseResumeAbort runs a rollout end to end through a pause and
// a resume, refuses an overlapping rollout while it is in progress, and
// aborts a second one, which leaves what it applied.
func TestRolloutPauseResumeAbort(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	topic := c.Name("gen")
	names := createGenerators(c, topic, "pr", 6)
	paused := c.Name("pr-paused")
	mustCreate(c, paused, generatorCfg(topic, "rate", "5"), "PAUSED")
	outside := c.Name("other")
	mustCreate(c, outside, generatorCfg(topic, "rate", "5"), "")
	for _, n := range append(names, outside) {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	outsideBefore := connectorConfig(c, outside)

	r := createRollout(c, map[string]any{
		"match":   c.Name("pr-*"),
		"patch":   map[string]any{"rate": "7"},
		"batches": []any{1, "50%"},
		"health":  map[string]any{"running_for": "1s"},
	})
	if r.Request.OnFailure != "pause" || r.Request.Health.RunningFor != "1s" || len(r.Batches) != 3 {
		t.Fatalf("created %+v: %s", r.Request, batchStates(r))
	}
	var p api.Rollout
	c.Must(http.StatusOK, "PUT", "/sluice/rollouts/"+r.ID+"/pause", nil).JSON(t, &p)
	if p.State != api.RolloutPaused {
		t.Fatalf("pause answered %s", p.State)
	}
	wantError(t, c.Do("PUT", "/sluice/rollouts/"+r.ID+"/pause", nil), http.StatusConflict,
		"Rollout "+r.ID+" is paused: only a running rollout can be paused")
	wantError(t, c.Do("POST", "/sluice/rollouts", map[string]any{"names": []string{names[5]}, "patch": map[string]any{"rate": "8"}}),
		http.StatusConflict, "Connector "+names[5]+" is already in rollout "+r.ID+" (paused): wait for it to end or abort it")
	held := getRollout(c, r.ID)
	sluicetest.Consistently(t, 1500*time.Millisecond, func() (bool, string) {
		now := getRollout(c, r.ID)
		return now.State == api.RolloutPaused && now.Batch == held.Batch && now.Batches[now.Batch].State == held.Batches[held.Batch].State,
			fmt.Sprintf("a paused rollout moved: %s, then %s", batchStates(held), batchStates(now))
	})
	if now := getRollout(c, r.ID); now.State != api.RolloutPaused || now.Batch != held.Batch || now.Batches[now.Batch].State != held.Batches[held.Batch].State {
		t.Fatalf("a paused rollout moved: %s, then %s", batchStates(held), batchStates(now))
	}
	c.Must(http.StatusOK, "PUT", "/sluice/rollouts/"+r.ID+"/resume", nil)
	r = waitRollout(c, r.ID, api.RolloutDone)
	for _, b := range r.Batches {
		if b.State != api.BatchDone {
			t.Fatalf("batch states %s", batchStates(r))
		}
		for _, rc := range b.Connectors {
			if rc.State != "applied" || rc.WasRunning != (rc.Name != paused) {
				t.Errorf("%s: state %q, was_running %v", rc.Name, rc.State, rc.WasRunning)
			}
		}
	}
	for _, n := range append(names, paused) {
		if got := connectorConfig(c, n); got["rate"] != "7" {
			t.Errorf("%s: rate %q after the rollout", n, got["rate"])
		}
	}
	if st, _ := c.Status(paused); st.Connector.State != "PAUSED" {
		t.Errorf("the paused connector is %s after the rollout, want it PAUSED still", st.Connector.State)
	}
	if got := connectorConfig(c, outside); !maps.Equal(got, outsideBefore) {
		t.Errorf("connector outside the match changed: %v", got)
	}

	// Aborted: it stops at once, and keeps what it applied. It is made
	// through a follower, which forwards it to the leader, and which shows
	// it as the leader does.
	_, follower := c.StartExtraCoordinator()
	sluicetest.WaitKnowsLeader(t, follower)
	var a api.Rollout
	fr := sluicetest.Do(t, follower, "POST", "/sluice/rollouts",
		map[string]any{"names": names, "patch": map[string]any{"rate": "9"}, "batches": []any{1}, "health": map[string]any{"running_for": "1m"}})
	if fr.Status != http.StatusCreated {
		t.Fatalf("create through a follower: %s", fr)
	}
	fr.JSON(t, &a)
	sluicetest.Eventually(t, rolloutWait, func() (bool, string) {
		var seen api.Rollout
		got := sluicetest.Do(t, follower, "GET", "/sluice/rollouts/"+a.ID, nil)
		got.JSON(t, &seen)
		return got.Status == http.StatusOK && seen.Batches[0].State != api.BatchPending, got.String()
	})
	sluicetest.Eventually(t, rolloutWait, func() (bool, string) {
		a = getRollout(c, a.ID)
		return a.Batches[0].State == api.BatchVerifying, batchStates(a)
	})
	c.Must(http.StatusOK, "PUT", "/sluice/rollouts/"+a.ID+"/abort", nil)
	wantError(t, c.Do("PUT", "/sluice/rollouts/"+a.ID+"/resume", nil), http.StatusConflict,
		"Rollout "+a.ID+" is aborted: only a paused rollout can be resumed")
	sluicetest.Consistently(t, 1500*time.Millisecond, func() (bool, string) {
		a := getRollout(c, a.ID)
		return a.State == api.RolloutAborted && a.Batches[1].State == api.BatchPending, fmt.Sprintf("aborted rollout: %s %s", a.State, batchStates(a))
	})
	a = getRollout(c, a.ID)
	if a.State != api.RolloutAborted || a.Batches[1].State != api.BatchPending {
		t.Fatalf("aborted rollout: %s %s", a.State, batchStates(a))
	}
	if got := connectorConfig(c, names[0]); got["rate"] != "9" {
		t.Errorf("the aborted rollout's applied connector has rate %q, want 9 kept", got["rate"])
	}
	if got := connectorConfig(c, names[1]); got["rate"] != "7" {
		t.Errorf("a connector of the aborted rollout's later batch has rate %q, want 7 untouched", got["rate"])
	}
	var list api.RolloutList
	c.Must(http.StatusOK, "GET", "/sluice/rollouts", nil).JSON(t, &list)
	if len(list.Rollouts) != 2 || list.Rollouts[0].ID != r.ID || list.Rollouts[1].ID != a.ID {
		t.Fatalf("list: %+v", list)
	}
	wantError(t, c.Do("GET", "/sluice/rollouts/nope", nil), http.StatusNotFound, "Rollout nope not found")
}

// TestRolloutResumesAfterLeaderChange stops the leader mid-rollout: the
// next leader carries on from the batch the fleet topic records, and no
// connector's config is written twice.
func TestRolloutResumesAfterLeaderChange(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 2})
	topic := c.Name("gen")
	names := createGenerators(c, topic, "lc", 8)
	for _, n := range names {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	r := createRollout(c, map[string]any{
		"match": c.Name("lc-*"), "patch": map[string]any{"rollout.tag": "v2"},
		"batches": []any{2, 2, 2}, "health": map[string]any{"running_for": "2s"},
	})
	// A connector already at its after (patched by hand; a rollout step
	// writes the config and its record in one transaction, so no leader
	// leaves one written but unrecorded): the rollout finds it there and
	// writes it no more.
	c.Must(http.StatusOK, "PATCH", "/connectors/"+names[7]+"/config", map[string]any{"rollout.tag": "v2"})
	sluicetest.Eventually(t, rolloutWait, func() (bool, string) {
		r = getRollout(c, r.ID)
		return r.Batch >= 1 && r.Batch < 3 && r.Batches[r.Batch].State == api.BatchVerifying, batchStates(r)
	})
	c.StopCoordinator()
	c.StartCoordinator()
	r = waitRollout(c, r.ID, api.RolloutDone)
	if len(r.Batches) != 4 {
		t.Fatalf("batches %s", batchStates(r))
	}
	writes := configWrites(c, names...)
	for _, n := range names {
		if got := connectorConfig(c, n); got["rollout.tag"] != "v2" {
			t.Errorf("%s: config %v", n, got)
		}
		if writes[n] != 2 {
			t.Errorf("%s: %d config writes, want 2 (created, patched once, by the rollout or by hand)", n, writes[n])
		}
		if rc := r.Batches[3].Connectors[1]; rc.Name != names[7] || rc.State != "applied" {
			t.Errorf("the connector patched by hand: %+v", rc)
		}
	}
}

// TestRolloutBadInput checks the 400s, 404s and 409s of POST
// /sluice/rollouts: nothing is recorded or applied for any of them.
func TestRolloutBadInput(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("gen")
	a, b := c.Name("bad-a"), c.Name("bad-b")
	mustCreate(c, a, generatorCfg(topic), "")
	mustCreate(c, b, generatorCfg(topic), "")
	ok := map[string]any{"rate": "7"}
	for _, tt := range []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"empty match", map[string]any{"match": "", "patch": ok}, 400, `Give exactly one of "names" or "match"`},
		{"both selectors", map[string]any{"match": "x*", "names": []string{a}, "patch": ok}, 400, `Give exactly one of "names" or "match"`},
		{"match of nothing", map[string]any{"match": c.Name("none-*"), "patch": ok}, 400, `The selector matches no connector: no connector's name matches "` + c.Name("none-*") + `"`},
		{"bad glob", map[string]any{"match": "[", "patch": ok}, 400, `Invalid "match" pattern "[": syntax error in pattern`},
		{"unknown name", map[string]any{"names": []string{c.Name("ghost")}, "patch": ok}, 404, "Connector " + c.Name("ghost") + " not found"},
		{"bad batch", map[string]any{"names": []string{a}, "patch": ok, "batches": []any{"ten"}}, 400,
			`Invalid batch "ten": give a number of connectors (1 or more), a share such as "25%", or "rest"`},
		{"bad running_for", map[string]any{"names": []string{a}, "patch": ok, "health": map[string]any{"running_for": "soon"}}, 400,
			"Invalid health.running_for 'soon': give a duration such as 30s or 2m"},
		{"bad on_failure", map[string]any{"names": []string{a}, "patch": ok, "on_failure": "retry"}, 400, "Invalid on_failure 'retry': must be pause or rollback"},
		{"unknown field", map[string]any{"names": []string{a}, "patch": ok, "dry_run": true}, 400, `Unrecognized field "dry_run"`},
		{"empty patch", map[string]any{"names": []string{a}, "patch": map[string]any{}}, 400, "The patch is empty: give the config keys to set (or null to remove)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Do("POST", "/sluice/rollouts", tt.body)
			if !strings.HasPrefix(tt.msg, "Unrecognized") {
				wantError(t, r, tt.status, tt.msg)
			} else if r.Status != tt.status || !strings.Contains(r.Message(), tt.msg) {
				t.Fatalf("got %s, want %d %q", r, tt.status, tt.msg)
			}
		})
	}
	// A patch both connectors refuse: each is listed with its errors.
	r := c.Do("POST", "/sluice/rollouts", map[string]any{"match": c.Name("bad-*"), "patch": map[string]any{"rate": "0"}})
	msg := r.Message()
	if r.Status != 400 || !strings.HasPrefix(msg, "The patch leaves 2 of the 2 matched connectors with an invalid config; nothing was applied:\n") ||
		!strings.Contains(msg, "\n"+a+": ") || !strings.Contains(msg, "\n"+b+": ") || !strings.Contains(msg, "rate") {
		t.Fatalf("invalid patch: %s", r)
	}
	var list api.RolloutList
	c.Must(http.StatusOK, "GET", "/sluice/rollouts", nil).JSON(t, &list)
	if len(list.Rollouts) != 0 {
		t.Fatalf("a refused rollout was recorded: %+v", list)
	}
	if w := configWrites(c, a, b); w[a] != 1 || w[b] != 1 {
		t.Fatalf("config writes %v: a refused rollout wrote", w)
	}
}

// TestRolloutDryRun: ?dry_run=true answers the rollout as it would be
// recorded — its batches, each connector's config before and after, state
// planned, no id — refuses what a create refuses, and records and writes
// nothing; the same rollout can then start.
func TestRolloutDryRun(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic := c.Name("gen")
	a, b := c.Name("dry-a"), c.Name("dry-b")
	mustCreate(c, a, generatorCfg(topic), "")
	mustCreate(c, b, generatorCfg(topic), "")
	body := map[string]any{"match": c.Name("dry-*"), "patch": map[string]any{"rate": "7"}, "batches": []any{1, "rest"}}
	var plan api.Rollout
	r := c.Do("POST", "/sluice/rollouts?dry_run=true", body)
	if r.Status != http.StatusOK || r.Header.Get("Location") != "" {
		t.Fatalf("dry run: %s", r)
	}
	r.JSON(t, &plan)
	if plan.State != api.RolloutPlanned || plan.ID != "" || len(plan.Batches) != 2 || plan.Batches[0].Connectors[0].Name != a ||
		plan.Batches[1].Connectors[0].Before["rate"] != generatorCfg(topic)["rate"] || plan.Batches[1].Connectors[0].After["rate"] != "7" {
		t.Fatalf("plan %+v", plan)
	}
	r = c.Do("POST", "/sluice/rollouts?dry_run=true", map[string]any{"match": c.Name("dry-*"), "patch": map[string]any{"rate": "0"}})
	if r.Status != 400 || !strings.HasPrefix(r.Message(), "The patch leaves 2 of the 2 matched connectors with an invalid config; nothing was applied:\n") {
		t.Fatalf("invalid dry run: %s", r)
	}
	var list api.RolloutList
	c.Must(http.StatusOK, "GET", "/sluice/rollouts", nil).JSON(t, &list)
	if len(list.Rollouts) != 0 {
		t.Fatalf("a dry run was recorded: %+v", list)
	}
	if w := configWrites(c, a, b); w[a] != 1 || w[b] != 1 {
		t.Fatalf("config writes %v: a dry run wrote", w)
	}
	c.Must(http.StatusCreated, "POST", "/sluice/rollouts", body)
}

// TestRolloutGrants checks that an operator limited to some connectors
// cannot reach others through a rollout's selector: the rollout is refused
// with a 403 naming the connector it may not change, and nothing is
// recorded; over its own connectors it may roll out and abort, and it may
// not abort another operator's rollout of connectors it cannot change.
func TestRolloutGrants(t *testing.T) {
	t.Parallel()
	authFile := writeFile(t, t.TempDir(), "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, connectors: ["team-a-*"]}]}
  - {name: otto, password_bcrypt: %q, grants: [{role: operator}]}
`, bcryptOf(t, "t"), bcryptOf(t, "o"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	tom, otto := basicAuth("tom", "t"), basicAuth("otto", "o")
	c.Headers = otto
	topic := c.Name("gen")
	mine, theirs := "team-a-"+c.Name("g"), "team-b-"+c.Name("g")
	mustCreate(c, mine, generatorCfg(topic), "")
	mustCreate(c, theirs, generatorCfg(topic), "")
	body := map[string]any{"match": "team-*", "patch": map[string]any{"rate": "7"}, "health": map[string]any{"running_for": "1m"}}
	wantError(t, sluicetest.DoWith(t, c.URL, "POST", "/sluice/rollouts", body, tom...), http.StatusForbidden,
		"User tom may not POST /sluice/rollouts: the role operator for connector "+theirs+" is needed, and tom has operator for connectors team-a-*")
	var list api.RolloutList
	c.Must(http.StatusOK, "GET", "/sluice/rollouts", nil).JSON(t, &list)
	if len(list.Rollouts) != 0 {
		t.Fatalf("a refused rollout was recorded: %+v", list)
	}
	var r api.Rollout
	r1 := sluicetest.DoWith(t, c.URL, "POST", "/sluice/rollouts", map[string]any{"names": []string{mine}, "patch": map[string]any{"rate": "7"}}, tom...)
	if r1.Status != http.StatusCreated {
		t.Fatalf("tom's rollout of his own connector: %s", r1)
	}
	r1.JSON(t, &r)
	if r.Principal != "tom" {
		t.Errorf("principal %q", r.Principal)
	}
	if a := sluicetest.DoWith(t, c.URL, "PUT", "/sluice/rollouts/"+r.ID+"/abort", nil, tom...); a.Status != http.StatusOK {
		t.Fatalf("tom aborts his rollout: %s", a)
	}
	o := createRollout(c, map[string]any{"names": []string{theirs}, "patch": map[string]any{"rate": "7"}, "health": map[string]any{"running_for": "1m"}})
	wantError(t, sluicetest.DoWith(t, c.URL, "PUT", "/sluice/rollouts/"+o.ID+"/abort", nil, tom...), http.StatusForbidden,
		"User tom may not PUT /sluice/rollouts/"+o.ID+": the role operator for connector "+theirs+" is needed, and tom has operator for connectors team-a-*")
}

// TestRolloutPausesOnFailure: with on_failure pause, a batch that fails its
// gate pauses the rollout and stays applied, later batches untouched; once
// the cause is fixed (the directory made, the task restarted), resume
// verifies the batch again and the rollout goes on to done.
func TestRolloutPausesOnFailure(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic, in := c.Name("gen"), c.Name("sink-in")
	c.Produce(in, "one")
	dir := t.TempDir()
	gen0, sink, gen2 := c.Name("pf-0"), c.Name("pf-1"), c.Name("pf-2")
	mustCreate(c, gen0, generatorCfg(topic, "rate", "5"), "")
	mustCreate(c, sink, fileSinkCfg(filepath.Join(dir, "out.txt"), in), "")
	mustCreate(c, gen2, generatorCfg(topic, "rate", "5"), "")
	for _, n := range []string{gen0, sink, gen2} {
		c.WaitState(n, "RUNNING", 1, "RUNNING")
	}
	before2 := connectorConfig(c, gen2)
	later := filepath.Join(dir, "later", "out.txt")
	r := createRollout(c, map[string]any{"match": c.Name("pf-*"), "patch": map[string]any{"file": later},
		"batches": []any{1, 1}, "health": map[string]any{"running_for": "1s"}})
	r = waitRollout(c, r.ID, api.RolloutPaused)
	if r.Batch != 1 || r.Batches[0].State != api.BatchDone || r.Batches[1].State != api.BatchFailed || r.Batches[2].State != api.BatchPending ||
		!strings.HasPrefix(r.Error, "batch 2 of 3 failed its health gate: 1 task(s) FAILED") {
		t.Fatalf("paused rollout: %s", batchStates(r))
	}
	if got := connectorConfig(c, sink); got["file"] != later {
		t.Fatalf("the failed batch's connector has file %q, want it left applied", got["file"])
	}
	if got := connectorConfig(c, gen2); !maps.Equal(got, before2) {
		t.Fatalf("a later batch's connector changed: %v", got)
	}
	if err := os.Mkdir(filepath.Dir(later), 0o755); err != nil {
		t.Fatal(err)
	}
	c.Must(http.StatusAccepted, "POST", "/connectors/"+sink+"/restart?includeTasks=true&onlyFailed=true", nil)
	c.WaitState(sink, "RUNNING", 1, "RUNNING")
	c.Must(http.StatusOK, "PUT", "/sluice/rollouts/"+r.ID+"/resume", nil)
	r = waitRollout(c, r.ID, api.RolloutDone)
	if r.Error != "" || connectorConfig(c, gen2)["file"] != later {
		t.Fatalf("resumed rollout: %s", batchStates(r))
	}
}

// TestRolloutMaxFailedTasks: a batch with one FAILED task passes a gate
// that allows one, once its other tasks have run for running_for.
func TestRolloutMaxFailedTasks(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	topic, in := c.Name("gen"), c.Name("sink-in")
	c.Produce(in, "one")
	dir := t.TempDir()
	sink, gen := c.Name("mf-0"), c.Name("mf-1")
	mustCreate(c, sink, fileSinkCfg(filepath.Join(dir, "out.txt"), in), "")
	mustCreate(c, gen, generatorCfg(topic, "rate", "5"), "")
	c.WaitState(sink, "RUNNING", 1, "RUNNING")
	c.WaitState(gen, "RUNNING", 1, "RUNNING")
	r := createRollout(c, map[string]any{"match": c.Name("mf-*"), "patch": map[string]any{"file": filepath.Join(dir, "missing", "out.txt")},
		"health": map[string]any{"running_for": "1s", "max_failed_tasks": 1}})
	r = waitRollout(c, r.ID, api.RolloutDone)
	if len(r.Batches) != 1 || r.Batches[0].State != api.BatchDone {
		t.Fatalf("rollout: %s", batchStates(r))
	}
	if st, _ := c.Status(sink); len(st.Tasks) != 1 || st.Tasks[0].State != "FAILED" {
		t.Fatalf("the sink's status %+v, want its task FAILED", st)
	}
}
