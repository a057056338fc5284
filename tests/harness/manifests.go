package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// DecodeManifest decodes every YAML document of the Kubernetes manifest at
// path into the API type its apiVersion and kind name (*appsv1.Deployment,
// *appsv1.StatefulSet, *corev1.Service, *policyv1.PodDisruptionBudget), strictly: an unknown or duplicate
// field is an error, where the API server would drop it or pick one.
func DecodeManifest(path string) ([]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "apps/v1 Deployment":
			obj = &appsv1.Deployment{}
		case "apps/v1 StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "v1 Service":
			obj = &corev1.Service{}
		case "policy/v1 PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		default:
			return nil, fmt.Errorf("%s: a document of apiVersion %q kind %q, which the tests do not know", path, tm.APIVersion, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: %s %s does not decode strictly: %w", path, tm.APIVersion, tm.Kind, err)
		}
		objs = append(objs, obj)
	}
}

// ManifestContainer returns the container called name of the pod template
// of the one Deployment or StatefulSet in objs that has it.
func ManifestContainer(objs []any, name string) (corev1.Container, error) {
	for _, o := range objs {
		var pod corev1.PodSpec
		switch v := o.(type) {
		case *appsv1.Deployment:
			pod = v.Spec.Template.Spec
		case *appsv1.StatefulSet:
			pod = v.Spec.Template.Spec
		default:
			continue
		}
		for _, c := range pod.Containers {
			if c.Name == name {
				return c, nil
			}
		}
	}
	return corev1.Container{}, fmt.Errorf("no container %q", name)
}
