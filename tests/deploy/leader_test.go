package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestManifestsPinTheLeaderKey checks that what deploy/ ships starts: a
// coordinator or agent with neither NATS credentials nor a pinned leader key
// refuses to, so the coordinator reads its leader key and every process the
// trusted keys, each from a file a mounted volume (or a systemd credential)
// provides (issue 34 §1).
func TestManifestsPinTheLeaderKey(t *testing.T) {
	for _, tc := range []struct {
		file, container string
		want            []string
	}{
		{"coordinator.yaml", "coordinator", []string{"SLUICE_LEADER_KEY_FILE", "SLUICE_LEADER_TRUSTED_KEYS_FILE"}},
		{"agent-sidecar.yaml", "sluice-agent", []string{"SLUICE_LEADER_TRUSTED_KEYS_FILE"}},
	} {
		objs := decodeManifest(t, filepath.Join(manifestDir, tc.file))
		c := container(t, objs, tc.container)
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		var pod corev1.PodSpec
		for _, o := range objs {
			if d, ok := o.(*appsv1.Deployment); ok {
				pod = d.Spec.Template.Spec
			}
			if s, ok := o.(*appsv1.StatefulSet); ok {
				pod = s.Spec.Template.Spec
			}
		}
		for _, name := range tc.want {
			path := env[name]
			if path == "" {
				t.Errorf("%s: %s sets no %s", tc.file, tc.container, name)
				continue
			}
			if !mounted(c, pod, path) {
				t.Errorf("%s: %s=%s is on no mounted secret or config map", tc.file, name, path)
			}
		}
	}
	for unit, want := range map[string][]string{
		"sluice-coordinator.service": {"SLUICE_LEADER_KEY_FILE", "SLUICE_LEADER_TRUSTED_KEYS_FILE"},
		"sluice-agent.service":       {"SLUICE_LEADER_TRUSTED_KEYS_FILE"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "systemd", unit))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range want {
			if !strings.Contains(string(data), "\nEnvironment="+name+"=") {
				t.Errorf("%s sets no %s", unit, name)
			}
		}
	}
}

// mounted reports whether path lies in a volume mount of c backed by a
// secret or a config map of pod.
func mounted(c corev1.Container, pod corev1.PodSpec, path string) bool {
	for _, m := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && (v.Secret != nil || v.ConfigMap != nil) {
				return true
			}
		}
	}
	return false
}
