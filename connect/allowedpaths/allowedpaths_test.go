package allowedpaths

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// setup makes root/allowed (with a file and a subdirectory) and
// root/secret, and returns root and the Paths allowing root/allowed.
func setup(t *testing.T) (string, *Paths) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"allowed/sub", "secret"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"allowed/in.txt", "secret/passwd"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Parse(filepath.Join(root, "allowed"))
	if err != nil {
		t.Fatal(err)
	}
	return root, p
}

func TestCheck(t *testing.T) {
	root, p := setup(t)
	allowed := filepath.Join(root, "allowed")
	links := map[string]string{
		"allowed/out":      "../secret",         // a directory link leading out
		"allowed/pw":       "../secret/passwd",  // a file link leading out
		"allowed/dangling": "../secret/new.txt", // a dangling link out: a sink would create it
		"allowed/inside":   "sub",               // a link that stays inside
		"allowed/loop":     "loop",              // a loop
		"secret/back":      "../allowed/in.txt", // a link from outside to inside
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, path, base string
		ok               bool
	}{
		{"file inside", filepath.Join(allowed, "in.txt"), "", true},
		{"the dir itself", allowed, "", true},
		{"relative inside", "in.txt", allowed, true},
		{"nonexistent sink file in an allowed dir", filepath.Join(allowed, "sub", "new.txt"), "", true},
		{"nonexistent file in a nonexistent subdir", filepath.Join(allowed, "a", "b", "new.txt"), "", true},
		{"link staying inside", filepath.Join(allowed, "inside", "new.txt"), "", true},
		{"dotdot escaping", filepath.Join(allowed, "..", "secret", "passwd"), "", false},
		{"relative dotdot escaping", "../secret/passwd", allowed, false},
		{"absolute outside", "/etc/passwd", "", false},
		{"prefix that is not a parent", allowed + "-evil/x", "", false},
		{"directory symlink escaping", filepath.Join(allowed, "out", "passwd"), "", false},
		{"file symlink escaping", filepath.Join(allowed, "pw"), "", false},
		{"dangling symlink escaping", filepath.Join(allowed, "dangling"), "", false},
		{"nonexistent file under an escaping link", filepath.Join(allowed, "out", "new.txt"), "", false},
		{"outside link pointing inside", filepath.Join(root, "secret", "back"), "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := p.Check(c.path, c.base)
			if c.ok {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want allowed", c.path, err)
				}
				if !under(got, p.Dirs()) {
					t.Fatalf("Check(%q) = %q, not under %v", c.path, got, p.Dirs())
				}
				return
			}
			var na *NotAllowedError
			if !errors.As(err, &na) {
				t.Fatalf("Check(%q) = %q, %v; want a NotAllowedError", c.path, got, err)
			}
			if na.Path != c.path {
				t.Fatalf("error names %q, want %q", na.Path, c.path)
			}
		})
	}
	if _, err := p.Check(filepath.Join(allowed, "loop", "x"), ""); err == nil {
		t.Fatal("a symlink loop was allowed")
	}
}

func TestUnrestricted(t *testing.T) {
	for _, p := range []*Paths{nil, {}} {
		if p.Restricted() {
			t.Fatal("empty paths restrict")
		}
		got, err := p.Check("x/../y", "/base")
		if err != nil || got != "/base/y" {
			t.Fatalf("Check = %q, %v; want /base/y", got, err)
		}
	}
	p, err := Parse(" , ")
	if err != nil || p.Restricted() {
		t.Fatalf("Parse of blanks = %v, %v", p, err)
	}
}

func TestNewRefusesRelative(t *testing.T) {
	if _, err := Parse("/ok,relative/dir"); err == nil {
		t.Fatal("a relative allowed path was accepted")
	}
}

func TestAllowsLexically(t *testing.T) {
	dirs := []string{"/var/lib/sluice/files/"}
	cases := map[string]bool{
		"/var/lib/sluice/files/a.txt":            true,
		"/var/lib/sluice/files":                  true,
		"a.txt":                                  false, // relative to the base below: /work/a.txt
		"/var/lib/sluice/files/../../etc/passwd": false,
		"/var/lib/sluice/filesystem":             false,
		"/etc/passwd":                            false,
	}
	for path, want := range cases {
		if got := AllowsLexically(path, "/work", dirs); got != want {
			t.Errorf("AllowsLexically(%q) = %v, want %v", path, got, want)
		}
	}
	if !AllowsLexically("files/a.txt", "/var/lib/sluice", dirs) {
		t.Error("a relative path under the base was refused")
	}
	if !AllowsLexically("/etc/passwd", "/work", nil) {
		t.Error("no dirs must allow everything")
	}
}
