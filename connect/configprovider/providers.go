package configprovider

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sluice-io/sluice/connect/allowedpaths"
	"github.com/sluice-io/sluice/shared/javaregex"
)

// The names placeholders use for the built-in providers, as Kafka Connect's
// documentation names them (config.providers=file,env,directory).
const (
	File      = "file"
	Env       = "env"
	Directory = "directory"
)

// Options configures the built-in providers.
type Options struct {
	// AllowedPaths confines the file and directory providers (Kafka's
	// allowed.paths); nil allows every path.
	AllowedPaths *allowedpaths.Paths
	// LookupEnv reads environment variables; nil is os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// EnvAllowlist, when set, is the pattern an environment variable's
	// name must match for the env provider to read it (Kafka's
	// allowlist.pattern; CompileAllowlist anchors it to whole names); nil
	// allows every variable.
	EnvAllowlist *regexp.Regexp
	// Logger receives the warnings Kafka's providers log (a path that is
	// not allowed, a directory that is not one); nil is slog.Default().
	Logger *slog.Logger
}

// New builds a transformer with the built-in providers named (the
// --config-providers flag). No names give a transformer with no providers,
// which leaves every placeholder as it is.
func New(names []string, opts Options) (*Transformer, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	providers := map[string]Provider{}
	for _, name := range names {
		switch name = strings.TrimSpace(name); name {
		case "":
			continue
		case File:
			providers[name] = &FileProvider{Allowed: opts.AllowedPaths, Logger: opts.Logger}
		case Directory:
			providers[name] = &DirectoryProvider{Allowed: opts.AllowedPaths, Logger: opts.Logger}
		case Env:
			providers[name] = &EnvProvider{LookupEnv: opts.LookupEnv, Allowlist: opts.EnvAllowlist}
		default:
			return nil, fmt.Errorf("unknown config provider %q: the built-in providers are %s, %s and %s", name, File, Env, Directory)
		}
	}
	return NewTransformer(providers), nil
}

// FileProvider reads keys from Java properties files
// (${file:/path/to/file.properties:key}), as Kafka's FileConfigProvider.
type FileProvider struct {
	Allowed *allowedpaths.Paths
	Logger  *slog.Logger
}

// Get implements Provider. An empty path or one outside the allowed paths
// gives no values (the placeholders stay), with a warning for the latter;
// a file that cannot be read is an error.
func (p *FileProvider) Get(path string, keys []string) (map[string]string, error) {
	data := map[string]string{}
	resolved, ok := allowed(p.Allowed, p.Logger, path)
	if !ok {
		return data, nil
	}
	f, err := os.Open(resolved)
	if err != nil {
		p.Logger.Error("could not read properties from file", "path", path, "err", err)
		return nil, fmt.Errorf("Could not read properties from file %s", path)
	}
	defer f.Close()
	props, err := ParseProperties(f)
	if err != nil {
		p.Logger.Error("could not read properties from file", "path", path, "err", err)
		return nil, fmt.Errorf("Could not read properties from file %s", path)
	}
	for _, k := range keys {
		if v, ok := props[k]; ok {
			data[k] = v
		}
	}
	return data, nil
}

// DirectoryProvider reads each key from the file of that name in a
// directory (${directory:/path/to/dir:filename}), as Kafka's
// DirectoryConfigProvider: a Kubernetes secret mounted as a volume is such
// a directory. A file's whole content is the value, unchanged.
type DirectoryProvider struct {
	Allowed *allowedpaths.Paths
	Logger  *slog.Logger
}

// Get implements Provider. An empty path, one outside the allowed paths
// or one that is not a directory gives no values; a key names a regular
// file directly in the directory (symlinks followed, as Kubernetes
// mounts are links into a hidden subdirectory), never a path below it.
func (p *DirectoryProvider) Get(path string, keys []string) (map[string]string, error) {
	data := map[string]string{}
	dir, ok := allowed(p.Allowed, p.Logger, path)
	if !ok {
		return data, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		p.Logger.Warn("the path is not a directory", "path", path)
		return data, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("Could not list directory %s: %w", path, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !slices.Contains(keys, name) {
			continue
		}
		file := filepath.Join(dir, name)
		if st, err := os.Stat(file); err != nil || !st.Mode().IsRegular() {
			continue
		}
		// A link in the directory may point anywhere: its target must be
		// allowed too.
		resolved, ok := allowed(p.Allowed, p.Logger, file)
		if !ok {
			continue
		}
		b, err := os.ReadFile(resolved)
		if err != nil {
			p.Logger.Error("could not read file for property", "path", file, "property", name, "err", err)
			return nil, fmt.Errorf("Could not read file %s for property %s", file, name)
		}
		data[name] = string(b)
	}
	return data, nil
}

// allowed checks path against the allowed paths, logging a refusal as
// Kafka does, and returns it resolved. An empty path names nothing: false,
// silently, as Kafka's providers give no values for it.
func allowed(paths *allowedpaths.Paths, log *slog.Logger, path string) (string, bool) {
	if path == "" {
		return "", false
	}
	resolved, err := paths.Check(path, "")
	if err != nil {
		var na *allowedpaths.NotAllowedError
		if errors.As(err, &na) {
			log.Warn("The path is not allowed to be accessed", "path", path)
		} else {
			log.Warn("The path cannot be resolved", "path", path, "err", err)
		}
		return "", false
	}
	return resolved, true
}

// EnvProvider reads environment variables (${env:NAME}), as Kafka's
// EnvVarConfigProvider. A variable whose name Allowlist (when set) does not
// match is not read: its placeholder stays.
type EnvProvider struct {
	LookupEnv func(string) (string, bool)
	Allowlist *regexp.Regexp
}

// Get implements Provider. A path is refused, as Kafka refuses it.
func (p *EnvProvider) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, errors.New("Path component for EnvVarConfigProvider is not supported")
	}
	lookup := p.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	data := map[string]string{}
	for _, k := range keys {
		if p.Allowlist != nil && !p.Allowlist.MatchString(k) {
			continue
		}
		if v, ok := lookup(k); ok {
			data[k] = v
		}
	}
	return data, nil
}

// CompileAllowlist compiles an env allowlist pattern to match whole names
// only, as Java's Matcher.matches does; "" gives nil, which allows every
// variable.
func CompileAllowlist(pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := javaregex.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("env config provider allowlist %q: %w", pattern, err)
	}
	return re, nil
}
