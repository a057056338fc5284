package configprovider

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTransformScoped: a tenant's config reads the tenant's secrets; a
// placeholder naming another team's file (directly, through "..", or
// through a symlink in the tenant's directory) or variable fails the
// transform, naming the key and the path or variable, never a value.
func TestTransformScoped(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "team-a"), filepath.Join(root, "team-b")
	for _, d := range []string{a, b} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "kafka.properties"), []byte("password="+filepath.Base(d)+"-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(b, "kafka.properties"), filepath.Join(a, "link.properties")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TEAM_A_PASSWORD": "a-env", "TEAM_B_PASSWORD": "b-env"}
	tr, err := New([]string{File, Env, Directory}, Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	scope := &Scope{Owner: "tenant team-a", Paths: []string{a}, Env: []string{"TEAM_A_*"}}
	got, err := tr.TransformScoped(map[string]string{
		"p": "${file:" + a + "/kafka.properties:password}", "e": "${env:TEAM_A_PASSWORD}", "d": "${directory:" + a + ":kafka.properties}",
		"other": "${vault:x:y}", // no such provider: stays, as ever
	}, scope)
	if err != nil {
		t.Fatal(err)
	}
	if got["p"] != "team-a-secret" || got["e"] != "a-env" || !strings.HasPrefix(got["d"], "password=team-a-secret") || got["other"] != "${vault:x:y}" {
		t.Errorf("resolved %v", got)
	}
	for value, want := range map[string]string{
		"${file:" + b + "/kafka.properties:password}":           "config k: the file placeholder's path " + b + "/kafka.properties is not one tenant team-a may read (" + a + ")",
		"${file:" + a + "/../team-b/kafka.properties:password}": "is not one tenant team-a may read",
		"${file:" + a + "/link.properties:password}":            "link.properties is not one tenant team-a may read",
		"${file:kafka.properties:password}":                     "path kafka.properties is not one",
		"${directory:" + b + ":kafka.properties}":               "the directory placeholder's path " + b,
		"${env:TEAM_B_PASSWORD}":                                "config k: the env placeholder's variable TEAM_B_PASSWORD is not one tenant team-a may read (TEAM_A_*)",
	} {
		_, err := tr.TransformScoped(map[string]string{"k": value}, scope)
		var se *ScopeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a scope error saying %q", value, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") || err != nil && strings.Contains(err.Error(), "b-env") {
			t.Errorf("%s: the error shows a value: %v", value, err)
		}
	}
	if _, err := tr.TransformScoped(map[string]string{"k": "${env:TEAM_A_PASSWORD}"}, &Scope{Owner: "tenant c"}); err == nil {
		t.Error("a scope without secrets allowed a placeholder")
	}
}
