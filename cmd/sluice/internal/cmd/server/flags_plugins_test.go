package server

import (
	"slices"
	"testing"
)

// TestHostFlags checks that --plugin-path, --java and --connect-host-dir
// reach the agent's config from their env vars, and the host dir's
// default.
func TestHostFlags(t *testing.T) {
	acfg, err := agentConfig(flagContext(t, agentFlags()...), nil)
	if err != nil {
		t.Fatal(err)
	}
	if acfg.PluginPath != nil || acfg.Java != "" || acfg.ConnectorHostDir != "connect/javahost/target" {
		t.Fatalf("defaults: plugin path %v, java %q, host dir %q", acfg.PluginPath, acfg.Java, acfg.ConnectorHostDir)
	}
	t.Setenv("SLUICE_PLUGIN_PATH", "/opt/connect-plugins, /more/plugins,")
	t.Setenv("SLUICE_JAVA", "/usr/lib/jvm/java-17/bin/java")
	t.Setenv("SLUICE_CONNECT_HOST_DIR", "/opt/sluice/host")
	if acfg, err = agentConfig(flagContext(t, agentFlags()...), nil); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(acfg.PluginPath, []string{"/opt/connect-plugins", "/more/plugins"}) || acfg.Java != "/usr/lib/jvm/java-17/bin/java" || acfg.ConnectorHostDir != "/opt/sluice/host" {
		t.Fatalf("from env: plugin path %v, java %q, host dir %q", acfg.PluginPath, acfg.Java, acfg.ConnectorHostDir)
	}
}
