package main

import (
	"slices"
	"testing"
)

// TestFileFlags checks that --config-providers and --file-allowed-paths
// reach the coordinator's and the agent's configs, from their env vars.
func TestFileFlags(t *testing.T) {
	t.Setenv("SLUICE_CONFIG_PROVIDERS", "file, env,,directory")
	t.Setenv("SLUICE_FILE_ALLOWED_PATHS", "/var/lib/sluice/files,/srv/data")
	c := flagContext(t, coordinatorFlags()...)
	ccfg, err := coordinatorConfig(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantProviders, wantPaths := []string{"file", "env", "directory"}, []string{"/var/lib/sluice/files", "/srv/data"}
	if !slices.Equal(ccfg.ConfigProviders, wantProviders) || !slices.Equal(ccfg.FileAllowedPaths, wantPaths) {
		t.Fatalf("coordinator: providers %q, paths %q", ccfg.ConfigProviders, ccfg.FileAllowedPaths)
	}
	acfg, err := agentConfig(flagContext(t, agentFlags()...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acfg.ConfigProviders, wantProviders) || !slices.Equal(acfg.FileAllowedPaths, wantPaths) {
		t.Fatalf("agent: providers %q, paths %q", acfg.ConfigProviders, acfg.FileAllowedPaths)
	}
}
