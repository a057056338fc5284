package server

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/connect/allowedpaths"
)

// Flags of the agent's connector host, which runs Kafka Connect's Java
// plugins (docs/plugins.md).
var (
	pluginPathFlag = envflag.String("plugin-path", "",
		"directories (comma-separated) of Kafka Connect plugins, as plugin.path lays them out: the agent runs them in a connector host JVM (default: none, Go plugins only)")
	javaFlag = envflag.String("java", "",
		"java executable (17 or later) of the connector host (default: $JAVA_HOME/bin/java, then java on PATH)")
	connectHostDirFlag = envflag.String("connect-host-dir", "connect/javahost/target",
		"directory of the built connector host: sluice-connect-host.jar and lib/ (make javahost builds it)")
)

// hostFlags are the flags of this file, for agentFlags.
func hostFlags() []cli.Flag {
	return []cli.Flag{pluginPathFlag, javaFlag, connectHostDirFlag}
}

// hostSettings reads the flags of this file.
func hostSettings(c *cli.Context) (pluginPath []string, java, hostDir string) {
	return allowedpaths.SplitList(c.String("plugin-path")), c.String("java"), c.String("connect-host-dir")
}
