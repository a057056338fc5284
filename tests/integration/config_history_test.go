package integration

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/api"
	"github.com/sluice-io/sluice/coordinator"
	"github.com/sluice-io/sluice/sluicetest"
)

// configHistory reads a connector's config history through url, newest
// first.
func configHistory(t *testing.T, url, name string, headers ...string) []api.ConfigHistorySummary {
	t.Helper()
	r := sluicetest.DoWith(t, url, "GET", "/sluice/connectors/"+name+"/config/history", nil, headers...)
	if r.Status != http.StatusOK {
		t.Fatalf("config history of %s: %s", name, r)
	}
	var h api.ConfigHistory
	r.JSON(t, &h)
	return h.Entries
}

// configOps are the entries' operations, newest first.
func configOps(es []api.ConfigHistorySummary) string {
	var ops []string
	for _, e := range es {
		ops = append(ops, e.Operation)
	}
	return strings.Join(ops, ",")
}

// restoreConfig posts a restore of entry id through url and checks the
// status.
func restoreConfig(t *testing.T, url, name, id string, status int, headers ...string) sluicetest.Response {
	t.Helper()
	r := sluicetest.DoWith(t, url, "POST", "/sluice/connectors/"+name+"/config/history/"+id+"/restore", nil, headers...)
	if r.Status != status {
		t.Fatalf("restore of %s's entry %s: %s, want %d", name, id, r, status)
	}
	return r
}

// TestConfigHistoryRestore: a create, a PUT and a PATCH leave three
// entries, newest first, each with who made it and the keys it changed; a
// restore puts the first config back and records a fourth; restoring it
// again changes nothing; a delete is recorded and its entry cannot be
// restored, while an earlier one re-creates the connector; the history
// and restores outlive a leader change.
func TestConfigHistoryRestore(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	name := c.Name("cfg")
	original := generatorCfg(c.Name("cfg-data"), "tasks.max", "1")
	mustCreate(c, name, original, "STOPPED")
	c.Must(http.StatusOK, "PUT", "/connectors/"+name+"/config", cfgWith(original, "tasks.max", "2", "streams", "3"))
	c.Must(http.StatusOK, "PATCH", "/connectors/"+name+"/config", map[string]any{"rate": "10", "streams": nil})

	es := configHistory(t, c.URL, name)
	if got := configOps(es); got != "patch,put,create" {
		t.Fatalf("operations %s, want patch,put,create", got)
	}
	for _, e := range es {
		if e.Principal != "anonymous" || e.Connector != name || e.Time.IsZero() {
			t.Errorf("entry %+v", e)
		}
	}
	if d := es[1].Diff; !slices.Equal(d.Added, []string{"streams"}) || !slices.Equal(d.Changed, []string{"tasks.max"}) || len(d.Removed) != 0 {
		t.Errorf("the PUT's diff %+v", d)
	}
	if d := es[0].Diff; !slices.Equal(d.Removed, []string{"streams"}) || !slices.Equal(d.Changed, []string{"rate"}) || len(d.Added) != 0 {
		t.Errorf("the PATCH's diff %+v", d)
	}
	var put api.ConfigHistoryEntry
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/config/history/"+es[1].ID, nil).JSON(t, &put)
	if put.Before["tasks.max"] != "1" || put.After["tasks.max"] != "2" || put.After["streams"] != "3" || put.Before["name"] != name {
		t.Fatalf("the PUT's entry: before %v after %v", put.Before, put.After)
	}
	var created api.ConfigHistoryEntry
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/config/history/"+es[2].ID, nil).JSON(t, &created)
	if created.Before != nil {
		t.Fatalf("a create's before: %v", created.Before)
	}

	// Restore the create: the config is the first one again.
	var res api.ConfigRestoreResult
	restoreConfig(t, c.URL, name, es[2].ID, http.StatusOK).JSON(t, &res)
	want := cfgWith(original, "name", name)
	if cfg := configOf(c, name); !maps.Equal(cfg, want) {
		t.Fatalf("config after the restore %v, want %v", cfg, want)
	}
	es = configHistory(t, c.URL, name)
	if got := configOps(es); got != "restore,patch,put,create" || res.HistoryID != es[0].ID || res.Restored != es[3].ID {
		t.Fatalf("after the restore: %s, answer %+v", got, res)
	}
	if es[0].Detail != "restored entry "+es[3].ID || !slices.Equal(es[0].Diff.Changed, []string{"rate", "tasks.max"}) {
		t.Errorf("the restore's entry %+v", es[0])
	}
	// Again: the config is the entry's already, nothing is recorded.
	res = api.ConfigRestoreResult{}
	restoreConfig(t, c.URL, name, es[3].ID, http.StatusOK).JSON(t, &res)
	if res.HistoryID != "" || len(configHistory(t, c.URL, name)) != 4 {
		t.Fatalf("a restore to the same config recorded %q", res.HistoryID)
	}

	unknown := fmt.Sprintf("%013d-%016x", time.Now().UnixMilli(), 7)
	wantError(t, c.Do("GET", "/sluice/connectors/"+name+"/config/history/"+unknown, nil), http.StatusNotFound,
		fmt.Sprintf("Config history entry %s of connector %s not found (the history keeps the newest 100 entries of each connector)", unknown, name))
	wantError(t, c.Do("POST", "/sluice/connectors/"+name+"/config/history/"+unknown+"/restore", nil), http.StatusNotFound,
		fmt.Sprintf("Config history entry %s of connector %s not found (the history keeps the newest 100 entries of each connector)", unknown, name))
	wantError(t, c.Do("GET", "/sluice/connectors/"+c.Name("nobody")+"/config/history", nil), http.StatusNotFound,
		fmt.Sprintf("Connector %s not found, and the config history holds no entry of it", c.Name("nobody")))

	// A delete is recorded; its entry wrote no config to restore.
	c.Must(http.StatusNoContent, "DELETE", "/connectors/"+name, nil)
	es = configHistory(t, c.URL, name)
	if es[0].Operation != "delete" || len(es[0].Diff.Removed) != len(want) {
		t.Fatalf("the delete's entry %+v", es[0])
	}
	wantError(t, c.Do("POST", "/sluice/connectors/"+name+"/config/history/"+es[0].ID+"/restore", nil), http.StatusConflict,
		fmt.Sprintf("Config history entry %s of connector %s removed the connector (delete) and wrote no config: restore an earlier entry", es[0].ID, name))

	// A new leader reads the same history and restores from it: the PUT's
	// config re-creates the deleted connector.
	if es[3].Operation != "put" {
		t.Fatalf("history %s", configOps(es))
	}
	_, next := c.StartExtraCoordinator()
	c.StopCoordinator()
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		r := sluicetest.DoWith(t, next, "POST", "/sluice/connectors/"+name+"/config/history/"+es[3].ID+"/restore", nil)
		return r.Status == http.StatusOK, r.String()
	})
	r := sluicetest.DoWith(t, next, "GET", "/connectors/"+name+"/config", nil)
	var cfg map[string]string
	r.JSON(t, &cfg)
	if cfg["tasks.max"] != "2" || cfg["streams"] != "3" {
		t.Fatalf("config restored by the new leader: %s", r)
	}
	if got := configOps(configHistory(t, next, name)); got != "restore,delete,restore,patch,put,create" {
		t.Fatalf("history through the new leader: %s", got)
	}
}

// configOf reads a connector's config.
func configOf(c *sluicetest.Cluster, name string) map[string]string {
	c.T.Helper()
	var cfg map[string]string
	c.Must(http.StatusOK, "GET", "/connectors/"+name+"/config", nil).JSON(c.T, &cfg)
	return cfg
}

// TestConfigHistoryRolesAndTenancy: a viewer reads a connector's config
// history but cannot restore it; a team's operator neither reads nor
// restores another team's; a restore is admitted as a PUT is, so a config
// whose topic the tenant's rules no longer allow is refused, recording
// nothing.
func TestConfigHistoryRolesAndTenancy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secrets := t.TempDir()
	tenantsFile := writeFile(t, dir, "tenants.yaml", []byte(tenantsYAML(secrets, `"team-a.*"`)))
	authFile := writeFile(t, dir, "auth.yaml", []byte(fmt.Sprintf(`principals:
  - {name: vera, password_bcrypt: %q, grants: [{role: viewer}]}
  - {name: tom, password_bcrypt: %q, grants: [{role: operator, tenants: [team-a]}]}
  - {name: ada, password_bcrypt: %q, grants: [{role: admin}]}
`, bcryptOf(t, "v"), bcryptOf(t, "t"), bcryptOf(t, "a"))))
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, TenantsFile: tenantsFile, RESTSecurity: coordinator.RESTSecurity{AuthFile: authFile}})
	vera, tom, ada := basicAuth("vera", "v"), basicAuth("tom", "t"), basicAuth("ada", "a")
	c.Headers = tom
	p := c.Prefix
	ours, theirs := "team-a-"+p, "team-b-"+p
	mustCreate(c, ours, generatorCfg("team-a."+p+".x"), "STOPPED")
	c.Must(http.StatusOK, "PATCH", "/connectors/"+ours+"/config", map[string]any{"topic": "team-a." + p + ".y"})
	c.Headers = ada
	mustCreate(c, theirs, generatorCfg("team-b."+p), "STOPPED")

	es := configHistory(t, c.URL, ours, vera...)
	if got := configOps(es); got != "patch,create" || es[0].Principal != "tom" {
		t.Fatalf("history as a viewer: %s, newest by %s", got, es[0].Principal)
	}
	r := restoreConfig(t, c.URL, ours, es[1].ID, http.StatusForbidden, vera...)
	if !strings.Contains(string(r.Body), "the role operator is needed, and vera has viewer") {
		t.Errorf("a viewer's restore: %s", r)
	}
	if r := sluicetest.DoWith(t, c.URL, "GET", "/sluice/connectors/"+theirs+"/config/history", nil, tom...); r.Status != http.StatusForbidden {
		t.Errorf("team a's operator reading team b's history: %s, want 403", r)
	}
	theirEntry := configHistory(t, c.URL, theirs, ada...)[0].ID
	restoreConfig(t, c.URL, theirs, theirEntry, http.StatusForbidden, tom...)

	// Team a may no longer use topic x: the create's config is refused.
	c.StopCoordinator()
	writeFile(t, dir, "tenants.yaml", []byte(tenantsYAML(secrets, fmt.Sprintf("%q", "team-a."+p+".y"))))
	c.StartCoordinator()
	var refused sluicetest.Response
	sluicetest.Eventually(t, 30*time.Second, func() (bool, string) {
		refused = sluicetest.DoWith(t, c.URL, "POST", "/sluice/connectors/"+ours+"/config/history/"+es[1].ID+"/restore", nil, tom...)
		return refused.Status != http.StatusConflict, refused.String() // 409 until it leads
	})
	wantError(t, refused, http.StatusBadRequest,
		invalidConfig(fmt.Sprintf("Invalid value team-a.%s.x for configuration topic: the topic 'team-a.%s.x' is not one of tenant team-a's topics (team-a.%s.y)", p, p, p)))
	if got := configOps(configHistory(t, c.URL, ours, tom...)); got != "patch,create" {
		t.Fatalf("a refused restore was recorded: %s", got)
	}
	// The tenant's allowed config restores, by its operator.
	var res api.ConfigRestoreResult
	restoreConfig(t, c.URL, ours, es[0].ID, http.StatusOK, tom...).JSON(t, &res)
	if res.HistoryID != "" {
		t.Fatalf("restoring the current config recorded %s", res.HistoryID)
	}
}

// TestConfigHistoryOfRolloutAndMove: a rollout's patch is recorded on
// each connector it changes, by the rollout's creator and naming the
// rollout; a move records the new connector's creation and the old one's
// removal, both naming the move; a copy leaves the old connector's history
// alone.
func TestConfigHistoryOfRolloutAndMove(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	gen, old := c.Name("ro-gen"), c.Name("mv-old")
	mustCreate(c, gen, generatorCfg(c.Name("ro-data"), "rate", "5"), "")
	c.WaitState(gen, "RUNNING", 1, "RUNNING")
	r := createRollout(c, map[string]any{"names": []string{gen}, "patch": map[string]any{"rollout.tag": "v2"},
		"batches": []any{1}, "health": map[string]any{"running_for": "1s"}})
	waitRollout(c, r.ID, api.RolloutDone)
	es := configHistory(t, c.URL, gen)
	if got := configOps(es); got != "rollout,create" {
		t.Fatalf("history of the rolled out connector: %s", got)
	}
	if es[0].Detail != "rollout "+r.ID+", batch 1" || es[0].Principal != r.Principal || !slices.Equal(es[0].Diff.Added, []string{"rollout.tag"}) {
		t.Errorf("the rollout's entry %+v", es[0])
	}

	mustCreate(c, old, generatorCfg(c.Name("mv-data")), "STOPPED")
	moved, copied := c.Name("mv-new"), c.Name("mv-copy")
	move(c, old, map[string]any{"to": moved}, http.StatusOK)
	es = configHistory(t, c.URL, moved)
	if got := configOps(es); got != "move" || es[0].Detail != "moved from "+old+" to "+moved || len(es[0].Diff.Added) == 0 {
		t.Fatalf("history of the new connector: %s %+v", got, es)
	}
	es = configHistory(t, c.URL, old)
	if got := configOps(es); got != "move,create" || len(es[0].Diff.Removed) == 0 || len(es[0].Diff.Added) != 0 {
		t.Fatalf("history of the old connector: %s %+v", got, es)
	}
	move(c, moved, map[string]any{"to": copied, "copy": true}, http.StatusOK)
	if got := configOps(configHistory(t, c.URL, moved)); got != "move" {
		t.Errorf("a copy changed the history of the connector copied: %s", got)
	}
	if es := configHistory(t, c.URL, copied); len(es) != 1 || es[0].Detail != "copied from "+moved+" to "+copied {
		t.Errorf("history of the copy: %+v", es)
	}
}

// TestConfigHistorySecrets: the value of a key the plugin declares
// PASSWORD never reaches the history topic — its entries read [hidden]
// and name the key, while the diff still says it changed — but a provider
// reference is kept as written; a restore keeps the connector's current
// secret, and refuses when the connector no longer has one.
func TestConfigHistorySecrets(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1, CoordinatorPlugins: secretPlugins(t)})
	name := c.Name("sec")
	cfg := cfgOf("connector.class", classSecretGenerator, "topic", c.Name("sec-data"), "rate", "1", "secret", "s3cr3t-value")
	mustCreate(c, name, cfg, "STOPPED")
	c.Must(http.StatusOK, "PUT", "/connectors/"+name+"/config", cfgWith(cfg, "secret", "n3w-value", "rate", "2"))
	c.Must(http.StatusOK, "PATCH", "/connectors/"+name+"/config", map[string]any{"secret": "${file:/etc/sluice/db.properties:pw}"})

	for _, r := range c.ReadTopic(c.Prefix + "-config-history") {
		if v := string(r.Value); strings.Contains(v, "s3cr3t-value") || strings.Contains(v, "n3w-value") {
			t.Fatalf("a secret in clear in the config history topic: %s", v)
		}
	}
	es := configHistory(t, c.URL, name)
	if got := configOps(es); got != "patch,put,create" {
		t.Fatalf("operations %s", got)
	}
	if !slices.Equal(es[1].Diff.Changed, []string{"rate", "secret"}) {
		t.Errorf("the PUT's diff %+v: a changed secret shows as changed", es[1].Diff)
	}
	var put, patched api.ConfigHistoryEntry
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/config/history/"+es[1].ID, nil).JSON(t, &put)
	if put.Before["secret"] != "[hidden]" || put.After["secret"] != "[hidden]" || !slices.Equal(put.Hidden, []string{"secret"}) {
		t.Errorf("the PUT's entry: before %q after %q hidden %v", put.Before["secret"], put.After["secret"], put.Hidden)
	}
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+name+"/config/history/"+es[0].ID, nil).JSON(t, &patched)
	if patched.After["secret"] != "${file:/etc/sluice/db.properties:pw}" {
		t.Errorf("a provider reference is not kept as written: %q", patched.After["secret"])
	}

	// The PUT's config comes back with the secret the connector has now.
	var res api.ConfigRestoreResult
	restoreConfig(t, c.URL, name, es[1].ID, http.StatusOK).JSON(t, &res)
	if got := configOf(c, name); got["rate"] != "2" || got["secret"] != "${file:/etc/sluice/db.properties:pw}" || !slices.Equal(res.KeptCurrent, []string{"secret"}) {
		t.Fatalf("restored config %v, kept %v", got, res.KeptCurrent)
	}
	c.Must(http.StatusOK, "PATCH", "/connectors/"+name+"/config", map[string]any{"secret": nil})
	wantError(t, c.Do("POST", "/sluice/connectors/"+name+"/config/history/"+es[2].ID+"/restore", nil), http.StatusConflict,
		fmt.Sprintf("Config history entry %s of connector %s cannot be restored: the history does not keep the secret value of secret, and the connector has no current value to keep; PUT the config with the value instead", es[2].ID, name))
}

// TestConfigHistoryOfRollback: a rollout whose batch fails its health
// gate and rolls back leaves two entries on its connector, the patch and
// its rollback, both by the rollout's creator; the rollback's config is
// the one from before the rollout.
func TestConfigHistoryOfRollback(t *testing.T) {
	t.Parallel()
	c := sluicetest.Start(t, sluicetest.Options{Agents: 1})
	in, sink := c.Name("rb-in"), c.Name("rb-sink")
	c.Produce(in, "one")
	fileSink(c, sink, in, "rb-out.txt", "")
	c.WaitState(sink, "RUNNING", 1, "RUNNING")
	before := configOf(c, sink)
	r := createRollout(c, map[string]any{"names": []string{sink}, "patch": map[string]any{"file": t.TempDir() + "/missing/out.txt"},
		"batches": []any{1}, "health": map[string]any{"running_for": "1s"}, "on_failure": "rollback"})
	waitRollout(c, r.ID, api.RolloutRolledBack)
	es := configHistory(t, c.URL, sink)
	if got := configOps(es); got != "rollback,rollout,create" {
		t.Fatalf("history %s", got)
	}
	if es[0].Principal != r.Principal || es[0].Detail != "rollout "+r.ID+", batch 1" || !slices.Equal(es[0].Diff.Changed, []string{"file"}) {
		t.Errorf("the rollback's entry %+v", es[0])
	}
	var back api.ConfigHistoryEntry
	c.Must(http.StatusOK, "GET", "/sluice/connectors/"+sink+"/config/history/"+es[0].ID, nil).JSON(t, &back)
	if !maps.Equal(back.After, before) {
		t.Errorf("the rollback wrote %v, want the config from before %v", back.After, before)
	}
}
