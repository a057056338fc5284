// Package allowedpaths confines file access to a set of directories, as
// Kafka's allowed.paths (KIP-993) confines its file and directory config
// providers. Sluice applies it to the file connectors too: whoever may
// create a connector must not be able to read or write every file the
// agent can.
//
//	configured dirs ─► absolute, cleaned, symlinks resolved (New)
//	a path ─► absolute (against a base dir) ─► cleaned (no "..")
//	       ─► symlinks of its longest existing prefix resolved
//	       ─► under one of the dirs? the resolved path : *NotAllowedError
//
// A path that does not exist yet (a sink's file) is checked through its
// deepest existing parent, so a symlinked parent cannot lead out of the
// dirs either. The check is made just before the file is opened; a
// symlink swapped in between by someone who can write inside an allowed
// directory is outside what it protects against.
package allowedpaths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Paths is a set of allowed directories. The zero value, and a nil *Paths,
// allow every path: no restriction was configured.
type Paths struct {
	dirs []string // absolute, cleaned, symlinks resolved where they exist
}

// NotAllowedError says a path lies outside every allowed directory.
type NotAllowedError struct {
	// Path is the path as it was given.
	Path string
	// Dirs are the allowed directories.
	Dirs []string
}

// Error names the path and the directories it should have been under.
func (e *NotAllowedError) Error() string {
	return fmt.Sprintf("the path %s is not allowed: it is not under the allowed paths %s", e.Path, strings.Join(e.Dirs, ","))
}

// Parse reads a comma-separated list of directories (the
// --file-allowed-paths flag); blank entries are skipped, and an empty list
// restricts nothing.
func Parse(list string) (*Paths, error) { return New(SplitList(list)) }

// SplitList reads a comma-separated list, as --file-allowed-paths and an
// agent's announced setting spell it: entries trimmed, blanks dropped.
func SplitList(list string) []string {
	var out []string
	for _, d := range strings.Split(list, ",") {
		if d = strings.TrimSpace(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// New returns the set of dirs. Each must be absolute (as Kafka requires of
// allowed.paths); its symlinks are resolved when it exists, so that a path
// reached through the real location is allowed too.
func New(dirs []string) (*Paths, error) {
	p := &Paths{}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("allowed path %s is not absolute", d)
		}
		resolved, err := resolve(filepath.Clean(d))
		if err != nil {
			return nil, fmt.Errorf("allowed path %s: %w", d, err)
		}
		p.dirs = append(p.dirs, resolved)
	}
	return p, nil
}

// Restricted reports whether any directory was configured.
func (p *Paths) Restricted() bool { return p != nil && len(p.dirs) > 0 }

// Dirs returns the allowed directories, resolved.
func (p *Paths) Dirs() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.dirs...)
}

// String is the directories as Parse reads them, comma-separated; "" when
// unrestricted.
func (p *Paths) String() string { return strings.Join(p.Dirs(), ",") }

// Check resolves path (relative to base when it is not absolute) and
// returns it if it lies under an allowed directory, or a *NotAllowedError.
// Unrestricted, it returns the path made absolute, unresolved.
func (p *Paths) Check(path, base string) (string, error) {
	abs := Absolute(path, base)
	if !p.Restricted() {
		return abs, nil
	}
	resolved, err := resolve(abs)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", path, err)
	}
	if !under(resolved, p.dirs) {
		return "", &NotAllowedError{Path: path, Dirs: p.Dirs()}
	}
	return resolved, nil
}

// AllowsLexically reports whether path (relative to base when it is not
// absolute), once cleaned, lies under one of dirs, without looking at any
// file system: how a coordinator judges a path on an agent's host from
// the directories the agent announced. The agent checks again, symlinks
// resolved, before it opens the file. Empty dirs allow everything.
func AllowsLexically(path, base string, dirs []string) bool {
	if len(dirs) == 0 {
		return true
	}
	cleaned := make([]string, len(dirs))
	for i, d := range dirs {
		cleaned[i] = filepath.Clean(d)
	}
	return under(Absolute(path, base), cleaned)
}

// Absolute joins a relative path to base and cleans it, resolving "..".
func Absolute(path, base string) string {
	if !filepath.IsAbs(path) && base != "" {
		path = filepath.Join(base, path)
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// under reports whether path is one of dirs or inside one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// maxLinks bounds the symlinks followed while resolving one path, as the
// kernel bounds them, so a loop of links ends in an error.
const maxLinks = 40

// resolve returns path with the symlinks of its longest existing prefix
// resolved and the rest appended: a file not created yet resolves through
// its parent directories, and a dangling symlink is followed to where it
// points, since creating the file through it would write there.
func resolve(path string) (string, error) { return resolveDepth(path, 0) }

func resolveDepth(path string, links int) (string, error) {
	if links > maxLinks {
		return "", fmt.Errorf("%s: too many levels of symbolic links", path)
	}
	var rest []string
	cur := path
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if target, lerr := os.Readlink(cur); lerr == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return resolveDepth(filepath.Join(append([]string{filepath.Clean(target)}, rest...)...), links+1)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}
