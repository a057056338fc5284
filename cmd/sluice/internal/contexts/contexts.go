// Package contexts keeps the CLI's named connection settings — a URL and
// the credential files for one Sluice — in a YAML file, with the one in
// use, as kubectl's contexts do.
package contexts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"gopkg.in/yaml.v3"
)

// Env names the variable that overrides the file's path.
const Env = "SLUICE_CONFIG"

// Context is how to reach one Sluice. Empty fields are not set.
type Context struct {
	URL          string `yaml:"url" json:"url"`
	User         string `yaml:"user,omitempty" json:"user,omitempty"`
	PasswordFile string `yaml:"password-file,omitempty" json:"password_file,omitempty"`
	TokenFile    string `yaml:"token-file,omitempty" json:"token_file,omitempty"`
	CA           string `yaml:"ca,omitempty" json:"ca,omitempty"`
}

// File is the contents of the config file.
type File struct {
	CurrentContext string             `yaml:"current-context,omitempty" json:"current_context,omitempty"`
	Contexts       map[string]Context `yaml:"contexts,omitempty" json:"contexts,omitempty"`
}

// Path is the config file: $SLUICE_CONFIG, or sluice/config.yaml under
// the user's config directory.
func Path() (string, error) {
	if p := os.Getenv(Env); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the config file (set %s): %w", Env, err)
	}
	return filepath.Join(dir, "sluice", "config.yaml"), nil
}

// Load reads the file at path; a missing file is an empty one.
func Load(path string) (*File, error) {
	f := &File{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the CLI config: %w", err)
	}
	if err := yaml.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("read the CLI config %s: %w", path, err)
	}
	return f, nil
}

// Save writes the file to path, readable by its owner only: it names
// credential files and the servers they open.
func (f *File) Save(path string) error {
	data, err := yaml.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode the CLI config: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write the CLI config: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write the CLI config: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write the CLI config: %w", err)
	}
	return nil
}

// Get returns the named context.
func (f *File) Get(name string) (Context, error) {
	c, ok := f.Contexts[name]
	if !ok {
		return Context{}, fmt.Errorf("no context %q (sluice config get-contexts lists them)", name)
	}
	return c, nil
}

// Set adds or replaces a context.
func (f *File) Set(name string, c Context) {
	if f.Contexts == nil {
		f.Contexts = map[string]Context{}
	}
	f.Contexts[name] = c
}

// Delete removes a context; if it was in use, none is.
func (f *File) Delete(name string) error {
	if _, err := f.Get(name); err != nil {
		return err
	}
	delete(f.Contexts, name)
	if f.CurrentContext == name {
		f.CurrentContext = ""
	}
	return nil
}

// Names are the contexts' names, sorted.
func (f *File) Names() []string {
	names := make([]string, 0, len(f.Contexts))
	for n := range f.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
