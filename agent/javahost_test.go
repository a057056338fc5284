package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginPathNeedsTheHost: an agent with a plugin path but no java, or
// no built host, fails its start saying what is missing and how to build
// it, before it connects to anything.
func TestPluginPathNeedsTheHost(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hostDir := t.TempDir()
	for _, tc := range []struct {
		name, java string
		want       []string
	}{
		{"no java", filepath.Join(t.TempDir(), "java"), []string{"--plugin-path", "java (--java)"}},
		{"no host", exe, []string{"--plugin-path", filepath.Join(hostDir, "sluice-connect-host.jar"), "make javahost"}},
	} {
		a, err := New(Config{ID: "a1", NATSURL: "nats://127.0.0.1:1", Brokers: "127.0.0.1:1", GroupID: "g", OffsetsTopic: "o",
			PluginPath: []string{t.TempDir()}, Java: tc.java, ConnectorHostDir: hostDir})
		if err != nil {
			t.Fatal(err)
		}
		err = a.Start(context.Background())
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: start: %v, want %q in it", tc.name, err, w)
			}
		}
	}
}
