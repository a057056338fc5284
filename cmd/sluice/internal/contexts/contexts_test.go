package contexts

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.yaml")
	f, err := Load(path)
	if err != nil || len(f.Contexts) != 0 {
		t.Fatalf("missing file: %+v, %v", f, err)
	}
	f.Set("prod", Context{URL: "https://p:8083", User: "ada", PasswordFile: "/pw", CA: "/ca.pem"})
	f.Set("dev", Context{URL: "127.0.0.1:8083"})
	f.CurrentContext = "prod"
	if err := f.Save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, %v", st.Mode(), err)
	}
	g, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := g.Get("prod"); err != nil || c.User != "ada" || g.CurrentContext != "prod" {
		t.Fatalf("loaded %+v, %v", g, err)
	}
	if err := g.Delete("prod"); err != nil || g.CurrentContext != "" || len(g.Names()) != 1 {
		t.Fatalf("after delete: %+v, %v", g, err)
	}
	if err := g.Delete("prod"); err == nil {
		t.Fatal("deleted a missing context")
	}
}
