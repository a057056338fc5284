// Package natsperm renders the nats-server configuration Sluice ships
// (deploy/nats/nats-server.conf.tmpl) for one cluster: a user for each
// coordinator and one for each agent, each with its role's permissions,
// the agent's naming its id. Generate also makes the users' nkeys, as
// `sluice nats-config` and `sluice dev --secure` do.
package natsperm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/nats-io/nkeys"

	natsdeploy "github.com/sluice-io/sluice/deploy/nats"
	"github.com/sluice-io/sluice/shared/wire"
)

// User is one NATS user of the cluster: a coordinator (Agent empty) or an
// agent. It authenticates with an nkey (NKey, its public key) or a user
// name and password (which may be a bcrypt hash, as nats-server takes).
type User struct {
	// Name is shown in the file's comments: the coordinator's name or the
	// agent's id.
	Name string
	// AgentID is the agent's id; empty for a coordinator.
	AgentID        string
	NKey           string
	User, Password string
}

// Agent is the agent's id as its subjects spell it.
func (u User) Agent() string { return wire.SubjectToken(u.AgentID) }

// TLS is the server's certificate and, optionally, the CA it verifies
// clients' certificates against.
type TLS struct {
	Cert, Key, CA string
	// Verify requires clients to present a certificate the CA signed.
	Verify bool
}

// Config is what the configuration is rendered from.
type Config struct {
	GroupID  string
	Listen   string // host:port clients connect to (empty: the server's default)
	StoreDir string // JetStream's directory
	TLS      *TLS
	Users    []User
}

// Group is the group id as a subject token.
func (c Config) Group() string { return wire.SubjectToken(c.GroupID) }

// Bucket is the name of the group's leader lease bucket.
func (c Config) Bucket() string { return wire.LeaderBucket(c.GroupID) }

// Coordinators are the coordinator users.
func (c Config) Coordinators() []User { return c.filter(false) }

// Agents are the agent users.
func (c Config) Agents() []User { return c.filter(true) }

func (c Config) filter(agents bool) []User {
	var out []User
	for _, u := range c.Users {
		if (u.AgentID != "") == agents {
			out = append(out, u)
		}
	}
	return out
}

var tmpl = template.Must(template.New("nats-server.conf").Parse(natsdeploy.Template))

// Render writes the configuration.
func Render(cfg Config) ([]byte, error) {
	if cfg.GroupID == "" {
		return nil, errors.New("nats config: a group id is required")
	}
	for _, u := range cfg.Users {
		if u.NKey == "" && (u.User == "" || u.Password == "") {
			return nil, fmt.Errorf("nats config: user %s has neither an nkey nor a user and password", u.Name)
		}
		for _, s := range []string{u.Name, u.NKey, u.User, u.Password} {
			if strings.ContainsAny(s, "\"\\\n\r") {
				return nil, fmt.Errorf("nats config: user %s: quotes, backslashes and line ends cannot be written", u.Name)
			}
		}
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, cfg); err != nil {
		return nil, fmt.Errorf("render nats config: %w", err)
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n'), nil
}

// checkNames refuses an empty (or blank) name and a name given twice.
func checkNames(what string, names []string) error {
	seen := map[string]bool{}
	for i, n := range names {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("nats config: %s %d of %d is empty", what, i+1, len(names))
		}
		if seen[n] {
			return fmt.Errorf("nats config: %s %q is given twice", what, n)
		}
		seen[n] = true
	}
	return nil
}

// Files are what Generate wrote: the server's configuration and each
// user's nkey seed file, the coordinators' by name, the agents' by id.
type Files struct {
	Config       string
	Coordinators map[string]string
	Agents       map[string]string
}

// Generate writes, under dir, an nkey seed file (mode 0600) for each
// coordinator name and agent id — keeping a seed already there, so that a
// second run keeps every credential that did not change — and the server's
// configuration with their public keys. Deleting a seed file and running
// Generate again rotates that user's key (reload the server after).
func Generate(dir string, cfg Config, coordinators, agents []string) (Files, error) {
	// An empty agent id would make a user of the coordinator role (a
	// user's role is whether it has an agent id): a stray comma in an
	// --agent list must not hand out coordinator rights.
	if err := checkNames("coordinator name", coordinators); err != nil {
		return Files{}, err
	}
	if err := checkNames("agent id", agents); err != nil {
		return Files{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Files{}, fmt.Errorf("nats credentials dir: %w", err)
	}
	out := Files{Config: filepath.Join(dir, "nats-server.conf"), Coordinators: map[string]string{}, Agents: map[string]string{}}
	add := func(file, name, agentID string) error {
		pub, err := seed(file)
		if err != nil {
			return err
		}
		cfg.Users = append(cfg.Users, User{Name: name, AgentID: agentID, NKey: pub})
		return nil
	}
	for _, name := range coordinators {
		file := filepath.Join(dir, "coordinator-"+wire.SubjectToken(name)+".nk")
		if err := add(file, name, ""); err != nil {
			return Files{}, err
		}
		out.Coordinators[name] = file
	}
	for _, id := range agents {
		file := filepath.Join(dir, "agent-"+wire.SubjectToken(id)+".nk")
		if err := add(file, id, id); err != nil {
			return Files{}, err
		}
		out.Agents[id] = file
	}
	conf, err := Render(cfg)
	if err != nil {
		return Files{}, err
	}
	if err := os.WriteFile(out.Config, conf, 0o600); err != nil {
		return Files{}, fmt.Errorf("write nats config: %w", err)
	}
	return out, nil
}

// seed reads the user nkey seed in file, or makes one and writes it there
// (0600), and returns its public key.
func seed(file string) (string, error) {
	data, err := os.ReadFile(file)
	var kp nkeys.KeyPair
	switch {
	case err == nil:
		if kp, err = nkeys.FromSeed([]byte(strings.TrimSpace(string(data)))); err != nil {
			return "", fmt.Errorf("nkey seed file %s: field seed: %v", file, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if kp, err = nkeys.CreateUser(); err != nil {
			return "", fmt.Errorf("make an nkey for %s: %w", file, err)
		}
		s, _ := kp.Seed()
		if err := os.WriteFile(file, append(s, '\n'), 0o600); err != nil {
			return "", fmt.Errorf("write nkey seed file: %w", err)
		}
	default:
		return "", fmt.Errorf("nkey seed file %s: %w", file, err)
	}
	return kp.PublicKey()
}
