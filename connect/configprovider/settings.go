package configprovider

import (
	"fmt"
	"log/slog"

	"github.com/sluice-io/sluice/connect/allowedpaths"
)

// Settings are a process's config provider and file access settings, as
// its flags give them; coordinators and agents build theirs alike.
type Settings struct {
	// Providers names the built-in providers placeholders may use
	// (--config-providers: file, env, directory); none resolves nothing.
	Providers []string
	// FileAllowedPaths are absolute directories the file and directory
	// providers, and on agents the file connectors, may touch files in
	// (--file-allowed-paths); empty: any path.
	FileAllowedPaths []string
	// EnvAllowlist is the pattern environment variable names must match
	// for the env provider to read them (--config-provider-env-allowlist;
	// whole names); "": any variable.
	EnvAllowlist string
}

// Build returns the transformer and the allowed paths the settings
// describe; an error names the setting that is wrong.
func (s Settings) Build(log *slog.Logger) (*Transformer, *allowedpaths.Paths, error) {
	allowed, err := allowedpaths.New(s.FileAllowedPaths)
	if err != nil {
		return nil, nil, fmt.Errorf("--file-allowed-paths: %w", err)
	}
	allow, err := CompileAllowlist(s.EnvAllowlist)
	if err != nil {
		return nil, nil, fmt.Errorf("--config-provider-env-allowlist: %w", err)
	}
	tr, err := New(s.Providers, Options{AllowedPaths: allowed, EnvAllowlist: allow, Logger: log})
	if err != nil {
		return nil, nil, fmt.Errorf("--config-providers: %w", err)
	}
	return tr, allowed, nil
}
