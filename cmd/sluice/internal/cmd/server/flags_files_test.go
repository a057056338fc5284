package server

import (
	"slices"
	"testing"
)

// TestFileFlags checks that --config-providers and --file-allowed-paths
// reach the coordinator's and the agent's configs, from their env vars.
func TestFileFlags(t *testing.T) {
	t.Setenv("SLUICE_CONFIG_PROVIDERS", "file, env,,directory")
	t.Setenv("SLUICE_FILE_ALLOWED_PATHS", "/var/lib/sluice/files,/srv/data")
	t.Setenv("SLUICE_CONFIG_PROVIDER_ENV_ALLOWLIST", "CONNECT_.*")
	c := flagContext(t, coordinatorFlags()...)
	ccfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantProviders, wantPaths := []string{"file", "env", "directory"}, []string{"/var/lib/sluice/files", "/srv/data"}
	if p := ccfg.ConfigProviders; !slices.Equal(p.Providers, wantProviders) || !slices.Equal(p.FileAllowedPaths, wantPaths) || p.EnvAllowlist != "CONNECT_.*" {
		t.Fatalf("coordinator: %+v", p)
	}
	acfg, err := agentConfig(flagContext(t, agentFlags()...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := acfg.ConfigProviders; !slices.Equal(p.Providers, wantProviders) || !slices.Equal(p.FileAllowedPaths, wantPaths) || p.EnvAllowlist != "CONNECT_.*" {
		t.Fatalf("agent: %+v", p)
	}
}
