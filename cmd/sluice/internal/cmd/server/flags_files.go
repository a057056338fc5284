package server

import (
	"github.com/urfave/cli/v2"

	"github.com/sluice-io/sluice/cmd/sluice/internal/envflag"
	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/connect/configprovider"
)

// Flags of config providers and file access, on coordinators (which run
// validation and the connectors' Connector part) and agents (which run the
// tasks); sluice dev applies them to both.
var (
	configProvidersFlag = envflag.String("config-providers", "",
		"config providers whose placeholders connector configs may hold, comma-separated: file (${file:/path/file.properties:key}), env (${env:NAME}), directory (${directory:/path/dir:filename}); resolved where connector code runs, stored unresolved")
	fileAllowedPathsFlag = envflag.String("file-allowed-paths", "",
		"directories (absolute, comma-separated) the file connectors and the file and directory config providers may touch files in, after resolving .. and symlinks (default: anywhere)")
	envAllowlistFlag = envflag.String("config-provider-env-allowlist", "",
		"regular expression an environment variable's whole name must match for ${env:NAME} to read it (default: any variable)")
)

// providerFlags are the flags of this file, for coordinatorFlags and
// agentFlags.
func providerFlags() []cli.Flag {
	return []cli.Flag{configProvidersFlag, fileAllowedPathsFlag, envAllowlistFlag}
}

// providerSettings reads the flags of this file.
func providerSettings(c *cli.Context) configprovider.Settings {
	return configprovider.Settings{
		Providers:        allowedpaths.SplitList(c.String("config-providers")),
		FileAllowedPaths: allowedpaths.SplitList(c.String("file-allowed-paths")),
		EnvAllowlist:     c.String("config-provider-env-allowlist"),
	}
}
