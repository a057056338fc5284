package e2e

import (
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/tests/harness"
)

// coordinatorManifest is the shipped Kubernetes manifest of the coordinator.
var coordinatorManifest = filepath.Join("..", "..", "deploy", "k8s", "coordinator.yaml")

// manifestAddressEnv names the coordinator's settings that ManifestEnv
// takes from the manifest: the ones that say where it listens and where the
// other coordinators reach it.
var manifestAddressEnv = []string{"SLUICE_LISTEN", "SLUICE_ADVERTISED_ADDRESS"}

// k8sVarRef is a Kubernetes dependent environment variable reference.
var k8sVarRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// ManifestEnv returns the coordinator's listen and advertised addresses as
// deploy/k8s/coordinator.yaml sets them, for a pod whose IP is the host of
// addr and whose REST port is addr's port (in place of the manifest's): the
// environment a test gives a coordinator so that it runs as the manifest
// configures it. Values are expanded as Kubernetes does: $(VAR) names a
// variable defined earlier in the container's env.
func ManifestEnv(t testing.TB, addr string) []string {
	t.Helper()
	objs, err := harness.DecodeManifest(coordinatorManifest)
	if err != nil {
		t.Fatal(err)
	}
	c, err := harness.ManifestContainer(objs, "coordinator")
	if err != nil {
		t.Fatalf("%s: %v", coordinatorManifest, err)
	}
	podIP, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	var restPort string
	for _, p := range c.Ports {
		if p.Name == "rest" {
			restPort = strconv.Itoa(int(p.ContainerPort))
		}
	}
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			vars[e.Name] = podIP
		case e.ValueFrom == nil:
			vars[e.Name] = k8sVarRef.ReplaceAllStringFunc(e.Value, func(ref string) string {
				if v, ok := vars[ref[2:len(ref)-1]]; ok {
					return v
				}
				return ref
			})
		}
	}
	var env []string
	for _, name := range manifestAddressEnv {
		v, ok := vars[name]
		if !ok {
			t.Fatalf("%s sets no %s", coordinatorManifest, name)
		}
		if h, p, err := net.SplitHostPort(v); err == nil && p == restPort {
			v = net.JoinHostPort(h, port)
		}
		env = append(env, name+"="+v)
	}
	return env
}
