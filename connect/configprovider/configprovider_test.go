package configprovider

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/connect/allowedpaths"
)

func TestParseProperties(t *testing.T) {
	in := "# comment\n! also a comment\n\n" +
		"plain=value\n" +
		"  spaced  =  padded value  \n" +
		"colon:v\n" +
		"blank separated\n" +
		"empty=\n" +
		"novalue\n" +
		"eq==x\n" +
		`esc\=key=a\tb\u0041\\` + "\n" +
		"multi=one \\\n    two \\\n# not a comment\n" +
		"dup=first\ndup=second\n" +
		"crlf=yes\r\n"
	got, err := ParseProperties(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"plain": "value", "spaced": "padded value  ", "colon": "v", "blank": "separated",
		"empty": "", "novalue": "", "eq": "=x", "esc=key": "a\tbA\\",
		"multi": "one two # not a comment", "dup": "second", "crlf": "yes",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if _, err := ParseProperties(strings.NewReader(`bad=\u12`)); err == nil {
		t.Fatal("a malformed \\u escape was accepted")
	}
}

// secrets writes a properties file and a directory provider's directory
// under an allowed dir, and a file outside it.
func secrets(t *testing.T) (allowed, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	allowed, outside = filepath.Join(root, "allowed"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(allowed, "db", "..data"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(allowed, "app.properties"), "user=alice\npassword=s3cr3t\n")
	write(filepath.Join(outside, "app.properties"), "password=leaked\n")
	// A Kubernetes secret volume: files are links into ..data.
	write(filepath.Join(allowed, "db", "..data", "password"), "k8s-pass")
	if err := os.Symlink("..data/password", filepath.Join(allowed, "db", "password")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "app.properties"), filepath.Join(allowed, "db", "escape")); err != nil {
		t.Fatal(err)
	}
	return allowed, outside
}

func TestTransform(t *testing.T) {
	allowed, outside := secrets(t)
	paths, err := allowedpaths.New([]string{allowed})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DB_HOST": "db.internal"}
	tr, err := New([]string{"file", " env", "directory"}, Options{AllowedPaths: paths,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	props := filepath.Join(allowed, "app.properties")
	in := map[string]string{
		"user":        "${file:" + props + ":user}",
		"password":    "${file:" + props + ":password}",
		"url":         "jdbc://${env:DB_HOST}:5432/${env:DB_NAME}",
		"k8s":         "${directory:" + filepath.Join(allowed, "db") + ":password}",
		"k8s.escape":  "${directory:" + filepath.Join(allowed, "db") + ":escape}",
		"missing":     "${file:" + props + ":nope}",
		"unknown":     "${vault:secret/db:password}",
		"not.allowed": "${file:" + filepath.Join(outside, "app.properties") + ":password}",
		"plain":       "no placeholders",
		"two":         "${file:" + props + ":user}/${file:" + props + ":password}",
	}
	got, err := tr.Transform(in)
	if err != nil {
		t.Fatal(err)
	}
	want := maps.Clone(in)
	want["user"], want["password"] = "alice", "s3cr3t"
	want["url"] = "jdbc://db.internal:5432/${env:DB_NAME}"
	want["k8s"] = "k8s-pass"
	want["two"] = "alice/s3cr3t"
	if !maps.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if in["password"] != "${file:"+props+":password}" {
		t.Fatal("Transform changed its input")
	}

	if _, err := tr.Transform(map[string]string{"x": "${file:" + filepath.Join(allowed, "none.properties") + ":k}"}); err == nil ||
		!strings.Contains(err.Error(), "Could not read properties from file") {
		t.Fatalf("an unreadable file gave %v", err)
	}
	if _, err := tr.Transform(map[string]string{"x": "${env:some/path:HOME}"}); err == nil ||
		!strings.Contains(err.Error(), "Path component for EnvVarConfigProvider is not supported") {
		t.Fatalf("an env path gave %v", err)
	}
}

func TestTransformWithoutProviders(t *testing.T) {
	in := map[string]string{"a": "${env:HOME}"}
	for _, tr := range []*Transformer{nil, NewTransformer(nil)} {
		got, err := tr.Transform(in)
		if err != nil || !maps.Equal(got, in) {
			t.Fatalf("Transform = %v, %v; want it unchanged", got, err)
		}
	}
	if _, err := New([]string{"file", "vault"}, Options{}); err == nil || !strings.Contains(err.Error(), `"vault"`) {
		t.Fatalf("an unknown provider gave %v", err)
	}
}

func TestReverseTransform(t *testing.T) {
	raw := map[string]string{"password": "${file:/s.properties:pw}", "topic": "t", "url": "x://${env:H}"}
	tasks := []map[string]string{
		{"password": "s3cr3t", "topic": "t", "url": "x://h", "task.id": "0"},
		{"topic": "t", "derived": "s3cr3t"},
	}
	got := ReverseTransform(raw, tasks)
	want := []map[string]string{
		{"password": "${file:/s.properties:pw}", "topic": "t", "url": "x://${env:H}", "task.id": "0"},
		// A key the task config lacks is not added; one the connector
		// derived under another key is the connector's business.
		{"topic": "t", "derived": "s3cr3t"},
	}
	for i := range want {
		if !maps.Equal(got[i], want[i]) {
			t.Fatalf("task %d: got %q, want %q", i, got[i], want[i])
		}
	}
	if tasks[0]["password"] != "s3cr3t" {
		t.Fatal("ReverseTransform changed its input")
	}
}

func TestHasVariables(t *testing.T) {
	for v, want := range map[string]bool{"${env:A}": true, "${file:/p:k}": true, "${nokey}": false, "$env:A": false, "": false} {
		if HasVariables(v) != want {
			t.Errorf("HasVariables(%q) != %v", v, want)
		}
	}
}

func TestEnvAllowlist(t *testing.T) {
	re, err := CompileAllowlist("CONNECT_.*|DB_HOST")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CONNECT_PW": "a", "DB_HOST": "b", "DB_HOSTNAME": "c", "AWS_SECRET": "d"}
	tr, err := New([]string{"env"}, Options{EnvAllowlist: re, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]string{"a": "${env:CONNECT_PW}", "b": "${env:DB_HOST}", "c": "${env:DB_HOSTNAME}", "d": "${env:AWS_SECRET}"}
	got, err := tr.Transform(in)
	want := map[string]string{"a": "a", "b": "b", "c": "${env:DB_HOSTNAME}", "d": "${env:AWS_SECRET}"}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("Transform = %v, %v; want %v", got, err, want)
	}
	if re, err := CompileAllowlist(""); re != nil || err != nil {
		t.Fatalf("an empty allowlist = %v, %v", re, err)
	}
	if _, err := CompileAllowlist("("); err == nil {
		t.Fatal("a bad pattern was accepted")
	}
}
