package confighistory

import (
	"reflect"
	"testing"

	"github.com/sluice-io/sluice/api"
)

// TestDiff names each key once, as added, removed or changed, sorted; a
// create adds every key and a delete removes every key.
func TestDiff(t *testing.T) {
	before := map[string]string{"a": "1", "b": "2", "c": "3"}
	after := map[string]string{"a": "1", "b": "20", "d": "4", "e": "5"}
	want := api.ConfigDiff{Added: []string{"d", "e"}, Removed: []string{"c"}, Changed: []string{"b"}}
	if got := Diff(before, after); !reflect.DeepEqual(got, want) {
		t.Fatalf("diff %+v, want %+v", got, want)
	}
	if got := Diff(nil, after); !reflect.DeepEqual(got.Added, []string{"a", "b", "d", "e"}) || len(got.Removed) != 0 || got.Changed == nil {
		t.Fatalf("diff of a create %+v", got)
	}
	if got := Diff(before, nil); !reflect.DeepEqual(got.Removed, []string{"a", "b", "c"}) || len(got.Added) != 0 {
		t.Fatalf("diff of a delete %+v", got)
	}
}

// TestSecretsHiddenReferencesKept: a PASSWORD key's literal value is
// stored as [hidden], while one made of provider references alone is kept
// as written; the diff still says the secret changed.
func TestSecretsHiddenReferencesKept(t *testing.T) {
	before := map[string]string{"db.password": "hunter2", "api.secret": "${vault:kv/app:secret}", "url": "u"}
	after := map[string]string{"db.password": "hunter3", "api.secret": "x${vault:kv/app:secret}", "url": "u"}
	secret := []string{"db.password", "api.secret"}
	e := newEntry("c", &Change{Operation: api.ConfigPut}, "ada", before, after, secret, secret)
	if e.Before["db.password"] != Hidden || e.After["db.password"] != Hidden {
		t.Fatalf("a literal password is stored: before %q after %q", e.Before["db.password"], e.After["db.password"])
	}
	if e.Before["api.secret"] != "${vault:kv/app:secret}" {
		t.Fatalf("a provider reference is not kept as written: %q", e.Before["api.secret"])
	}
	if e.After["api.secret"] != Hidden {
		t.Fatalf("a value with literal text around a reference is stored: %q", e.After["api.secret"])
	}
	if !reflect.DeepEqual(e.Hidden, []string{"api.secret", "db.password"}) {
		t.Fatalf("hidden %v", e.Hidden)
	}
	if !reflect.DeepEqual(e.Diff.Changed, []string{"api.secret", "db.password"}) {
		t.Fatalf("diff %+v: a changed secret must show as changed", e.Diff)
	}
	if before["db.password"] != "hunter2" {
		t.Fatal("the caller's config was changed")
	}
}

// TestRestoredConfigKeepsCurrentSecrets: a restore writes the entry's
// after config with the connector's current value for each hidden key,
// and names the hidden keys the connector no longer has.
func TestRestoredConfigKeepsCurrentSecrets(t *testing.T) {
	e := api.ConfigHistoryEntry{
		After:  map[string]string{"db.password": Hidden, "token": Hidden, "ref": "${file:/s:ref}", "tasks.max": "1"},
		Hidden: []string{"db.password", "token"},
	}
	config, kept, missing := restoredConfig(e, map[string]string{"db.password": "now", "tasks.max": "4"})
	if config["db.password"] != "now" || config["tasks.max"] != "1" || config["ref"] != "${file:/s:ref}" {
		t.Fatalf("restored config %v", config)
	}
	if !reflect.DeepEqual(kept, []string{"db.password"}) || !reflect.DeepEqual(missing, []string{"token"}) {
		t.Fatalf("kept %v missing %v", kept, missing)
	}
	if e.After["db.password"] != Hidden {
		t.Fatal("the entry was changed")
	}
}
