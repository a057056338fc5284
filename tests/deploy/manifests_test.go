package deploy

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sluice-io/sluice/tests/harness"
)

// manifestDir holds the shipped Kubernetes manifests.
var manifestDir = filepath.Join("..", "..", "deploy", "k8s")

// TestManifestsDecodeStrictly decodes every document of every manifest
// into its Kubernetes API type, refusing unknown and duplicate fields, so a
// misspelt or misplaced field fails here rather than being dropped by the
// API server.
func TestManifestsDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", manifestDir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if objs := decodeManifest(t, f); len(objs) == 0 {
				t.Fatalf("%s holds no object", f)
			}
		})
	}
}

// TestCoordinatorManifest checks the coordinator's pod: it advertises
// host:port (the pod IP and the REST port, which the other coordinators
// forward writes to), probes GET /health for start-up and liveness and GET
// /readyz for readiness, is scraped at GET /metrics, and runs bounded,
// non-root and read-only.
func TestCoordinatorManifest(t *testing.T) {
	objs := decodeManifest(t, filepath.Join(manifestDir, "coordinator.yaml"))
	d := only[*appsv1.Deployment](t, objs)
	c := container(t, objs, "coordinator")
	restPort := port(t, c, "rest")

	env := map[string]corev1.EnvVar{}
	var order []string
	for _, e := range c.Env {
		env[e.Name] = e
		order = append(order, e.Name)
	}
	adv, ok := env["SLUICE_ADVERTISED_ADDRESS"]
	if !ok {
		t.Fatal("the coordinator has no SLUICE_ADVERTISED_ADDRESS")
	}
	if adv.ValueFrom != nil {
		t.Fatalf("SLUICE_ADVERTISED_ADDRESS is a field of the pod alone (%+v): it must be host:port, with the REST port", adv.ValueFrom)
	}
	// Kubernetes expands $(VAR) only for variables defined earlier.
	var ref string
	for _, name := range order {
		if name == "SLUICE_ADVERTISED_ADDRESS" {
			break
		}
		if e := env[name]; e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
			ref = "$(" + name + ")"
		}
	}
	if ref == "" {
		t.Fatal("no env var holding status.podIP is defined before SLUICE_ADVERTISED_ADDRESS")
	}
	host, p, err := net.SplitHostPort(adv.Value)
	if err != nil || host != ref || p != restPort {
		t.Errorf("SLUICE_ADVERTISED_ADDRESS is %q, want %s:%s (the pod IP and the REST port)", adv.Value, ref, restPort)
	}
	if _, lp, err := net.SplitHostPort(env["SLUICE_LISTEN"].Value); err != nil || lp != restPort {
		t.Errorf("SLUICE_LISTEN is %q, want the REST port %s", env["SLUICE_LISTEN"].Value, restPort)
	}

	for _, p := range []struct {
		name, path string
		probe      *corev1.Probe
	}{
		{"startup", "/health", c.StartupProbe},
		{"readiness", "/readyz", c.ReadinessProbe},
		{"liveness", "/health", c.LivenessProbe},
	} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", p.name)
			continue
		}
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port.String() != "rest" {
			t.Errorf("%s probe GET %s on port %s, want %s on rest", p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port.String(), p.path)
		}
	}
	// /readyz reads the topics' ends, for up to 2 s.
	if rp := c.ReadinessProbe; rp != nil && rp.TimeoutSeconds < 3 {
		t.Errorf("the readiness probe times out after %ds: /readyz may take 2s to read the topics' ends", rp.TimeoutSeconds)
	}
	// Prometheus' Kubernetes discovery, by the usual annotations, scrapes
	// GET /metrics on the REST port.
	ann := d.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" || ann["prometheus.io/port"] != restPort {
		t.Errorf("pod annotations %v: want prometheus.io/scrape true, path /metrics, port %s", ann, restPort)
	}
	checkBoundedNonRoot(t, d.Spec.Template.Spec, c)
}

// TestAgentSidecarManifest checks the agent container of the sidecar
// example: bounded, non-root and read-only (it writes only to the shared
// volume its tasks' files are on), its metrics listener reachable on its
// metrics port, probed there and announced to Prometheus.
func TestAgentSidecarManifest(t *testing.T) {
	objs := decodeManifest(t, filepath.Join(manifestDir, "agent-sidecar.yaml"))
	s := only[*appsv1.StatefulSet](t, objs)
	c := container(t, objs, "sluice-agent")
	checkBoundedNonRoot(t, s.Spec.Template.Spec, c)

	metricsPort := port(t, c, "metrics")
	var listen string
	for _, e := range c.Env {
		if e.Name == "SLUICE_METRICS_LISTEN" {
			listen = e.Value
		}
	}
	if host, p, err := net.SplitHostPort(listen); err != nil || host != "0.0.0.0" || p != metricsPort {
		t.Errorf("SLUICE_METRICS_LISTEN is %q, want 0.0.0.0:%s (reachable by the kubelet and Prometheus)", listen, metricsPort)
	}
	// A sidecar's readiness is its pod's: an agent must never take the
	// application beside it out of service (docs/observability.md).
	if c.ReadinessProbe != nil {
		t.Errorf("the agent sidecar has a readiness probe: a NATS or Kafka outage would take its application pod out of service")
	}
	for name, want := range map[string]struct {
		probe *corev1.Probe
		path  string
	}{"liveness": {c.LivenessProbe, "/healthz"}} {
		if want.probe == nil || want.probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", name)
			continue
		}
		if g := want.probe.HTTPGet; g.Path != want.path || g.Port.String() != "metrics" {
			t.Errorf("%s probe GET %s on port %s, want %s on metrics", name, g.Path, g.Port.String(), want.path)
		}
	}
	ann := s.Spec.Template.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != metricsPort || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("pod annotations %v, want prometheus.io scrape of /metrics on %s", ann, metricsPort)
	}
}

// checkBoundedNonRoot checks that c has resource requests and limits and
// runs as a non-root user on a read-only root file system, without
// privilege escalation or capabilities; the user may be set on the pod.
func checkBoundedNonRoot(t *testing.T, pod corev1.PodSpec, c corev1.Container) {
	t.Helper()
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := c.Resources.Requests[r]; !ok || q.IsZero() {
			t.Errorf("%s: no %s request", c.Name, r)
		}
		if q, ok := c.Resources.Limits[r]; !ok || q.IsZero() {
			t.Errorf("%s: no %s limit", c.Name, r)
		}
	}
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("%s: no securityContext", c.Name)
	}
	var ps corev1.PodSecurityContext
	if pod.SecurityContext != nil {
		ps = *pod.SecurityContext
	}
	nonRoot := first(sc.RunAsNonRoot, ps.RunAsNonRoot)
	user := first(sc.RunAsUser, ps.RunAsUser)
	if nonRoot == nil || !*nonRoot {
		t.Errorf("%s: runAsNonRoot is not true", c.Name)
	}
	if user == nil || *user == 0 {
		t.Errorf("%s: runs as uid %v, want a non-root uid", c.Name, user)
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: readOnlyRootFilesystem is not true", c.Name)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation is not false", c.Name)
	}
	if sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("%s: capabilities %+v, want drop [ALL]", c.Name, sc.Capabilities)
	}
}

// decodeManifest decodes path strictly, failing the test if it cannot.
func decodeManifest(t *testing.T, path string) []any {
	t.Helper()
	objs, err := harness.DecodeManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// only returns the one object of type T among objs.
func only[T any](t *testing.T, objs []any) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if v, ok := o.(T); ok {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		var zero T
		t.Fatalf("%d objects of type %T, want 1", len(found), zero)
	}
	return found[0]
}

func container(t *testing.T, objs []any, name string) corev1.Container {
	t.Helper()
	c, err := harness.ManifestContainer(objs, name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// port returns the number of c's port called name, as a string.
func port(t *testing.T, c corev1.Container, name string) string {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return strconv.Itoa(int(p.ContainerPort))
		}
	}
	t.Fatalf("container %s has no port %q", c.Name, name)
	return ""
}

func first[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}
