package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluice-io/sluice/shared/natsperm"
	"github.com/sluice-io/sluice/sluicetest"
	"github.com/sluice-io/sluice/sluicetest/procs"
)

// natsServerBin is the nats-server built from the nats-server/v2 module
// by BuildNATSServer.
var natsServerBin string

// BuildNATSServer builds nats-server, the main package of the
// github.com/nats-io/nats-server/v2 module the project already requires,
// into dir, so the suite runs NATS as a process of its own at the version
// Sluice embeds.
func BuildNATSServer(dir string) (string, error) {
	out := filepath.Join(dir, "nats-server")
	cmd := exec.Command("go", "build", "-o", out, "github.com/nats-io/nats-server/v2")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build nats-server: %w\n%s", err, msg)
	}
	natsServerBin = out
	return out, nil
}

// adminUser is the suite's own NATS user, with every permission: what an
// operator holds, used to look at streams and to delete the lease bucket.
const adminUser = "faults-admin"

// natsNode is one nats-server process.
type natsNode struct {
	Name    string
	Addr    string // client host:port
	Proc    *procs.Proc
	Cluster string // route host:port (cluster of several nodes only)
}

// natsSet is the NATS of a faults cluster: one server or a cluster of
// three, secured with deploy/nats's per-role users (natsperm) unless open.
type natsSet struct {
	t        testing.TB
	Nodes    []*natsNode
	Open     bool
	Creds    natsperm.Files
	adminPwd string
}

// startNATS starts n nats-server processes (1, or 3 as one cluster with
// JetStream replicated across them). Unless open, each serves the
// configuration natsperm renders for group (coordinators and agents given
// by name) with the suite's admin user added.
func startNATS(t testing.TB, n int, open bool, group string, coordinators, agents []string) *natsSet {
	t.Helper()
	s := &natsSet{t: t, Open: open}
	dir := t.TempDir()
	pwd := make([]byte, 12)
	_, _ = rand.Read(pwd)
	s.adminPwd = hex.EncodeToString(pwd)
	for i := range n {
		s.Nodes = append(s.Nodes, &natsNode{Name: fmt.Sprintf("nats-%d", i+1), Addr: sluicetest.FreeAddr(t)})
		if n > 1 {
			s.Nodes[i].Cluster = sluicetest.FreeAddr(t)
		}
	}
	for i, node := range s.Nodes {
		store := filepath.Join(dir, node.Name+"-js")
		var conf string
		if open {
			conf = fmt.Sprintf("listen: %q\njetstream {\n  store_dir: %q\n}\n", node.Addr, store)
		} else {
			// One set of seeds for every node: Generate keeps the seeds
			// already in its directory.
			files, err := natsperm.Generate(filepath.Join(dir, "creds"), natsperm.Config{GroupID: group, Listen: node.Addr, StoreDir: store}, coordinators, agents)
			if err != nil {
				t.Fatal(err)
			}
			s.Creds = files
			data, err := os.ReadFile(files.Config)
			if err != nil {
				t.Fatal(err)
			}
			conf = string(data)
			admin := fmt.Sprintf("  users: [\n    # The fault suite's operator.\n    { user: %q, password: %q }", adminUser, s.adminPwd)
			if !strings.Contains(conf, "  users: [") {
				t.Fatalf("%s: no users list to add the admin to", files.Config)
			}
			conf = strings.Replace(conf, "  users: [", admin, 1)
		}
		conf = fmt.Sprintf("server_name: %q\n", node.Name) + conf
		if len(s.Nodes) > 1 {
			var routes []string
			for j, other := range s.Nodes {
				if j != i {
					routes = append(routes, fmt.Sprintf("nats://%s", other.Cluster))
				}
			}
			conf += fmt.Sprintf("\ncluster {\n  name: \"faults\"\n  listen: %q\n  routes: [%s]\n}\n", node.Cluster, strings.Join(routes, ", "))
		}
		path := filepath.Join(dir, node.Name+".conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		node.Proc = procs.NewProcOf(t, natsServerBin, node.Name, "-c", path)
		node.Proc.Start()
	}
	s.waitJetStream(30 * time.Second)
	return s
}

// URL is every node's client URL, comma-separated, as Sluice's --nats
// takes it.
func (s *natsSet) URL() string {
	var urls []string
	for _, n := range s.Nodes {
		urls = append(urls, "nats://"+n.Addr)
	}
	return strings.Join(urls, ",")
}

// Connect opens a connection as the suite's admin (anonymous on an open
// NATS) to every node.
func (s *natsSet) Connect() (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("faults-admin"), nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond)}
	if !s.Open {
		opts = append(opts, nats.UserInfo(adminUser, s.adminPwd))
	}
	return nats.Connect(s.URL(), opts...)
}

// waitJetStream waits until JetStream answers (in a cluster: once it
// elected its meta leader).
func (s *natsSet) waitJetStream(timeout time.Duration) {
	s.t.Helper()
	sluicetest.Eventually(s.t, timeout, func() (bool, string) {
		for _, n := range s.Nodes {
			if !n.Proc.Running() {
				s.t.Fatalf("%s exited", n.Name)
			}
		}
		nc, err := s.Connect()
		if err != nil {
			return false, err.Error()
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return false, err.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := js.AccountInfo(ctx); err != nil {
			return false, "JetStream: " + err.Error()
		}
		return true, ""
	})
}

// StreamLeader is the name of the node that leads stream.
func (s *natsSet) StreamLeader(stream string) (string, error) {
	nc, err := s.Connect()
	if err != nil {
		return "", err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return "", fmt.Errorf("stream %s has no leader", stream)
	}
	return info.Cluster.Leader, nil
}

// Node returns the node called name.
func (s *natsSet) Node(name string) *natsNode {
	for _, n := range s.Nodes {
		if n.Name == name {
			return n
		}
	}
	s.t.Fatalf("no NATS node %q", name)
	return nil
}
