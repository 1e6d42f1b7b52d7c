package bundlegen

import (
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const testBase = `
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: x.v0.0.0
spec:
  displayName: X
  customresourcedefinitions:
    owned:
    - kind: Widget
      displayName: Widget
      description: A widget.
`

var testConfig = []string{`
apiVersion: v1
kind: Namespace
metadata: {name: x-system}`, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  versions:
  - {name: v1beta1, served: false}
  - {name: v1, served: true, storage: true}`, `
apiVersion: v1
kind: ServiceAccount
metadata: {name: x-manager, namespace: x-system}`, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: x-manager, namespace: x-system, labels: {app: x}}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      serviceAccountName: x-manager
      containers:
      - name: manager
        image: controller:latest
        args: [--leader-elect, --spoke-image=old:tag]`, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: x-manager-role}
rules: [{apiGroups: [example.com], resources: [widgets], verbs: [get]}]`, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: x-manager-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: x-manager-role}
subjects: [{kind: ServiceAccount, name: x-manager, namespace: x-system}]`, `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: x-leader-election, namespace: x-system}
rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get]}]`, `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: x-leader-election, namespace: x-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x-leader-election}
subjects: [{kind: ServiceAccount, name: x-manager, namespace: x-system}]`, `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: x-metrics-reader}
rules: [{nonResourceURLs: [/metrics], verbs: [get]}]`, `
apiVersion: v1
kind: Service
metadata: {name: x-metrics, namespace: x-system}
spec: {ports: [{port: 8443}]}`,
}

const testExample = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec: {size: 2}`

var testOptions = Options{
	Package: "x", Version: semver.MustParse("1.2.3"), Image: "registry.example.com/x:v1.2.3",
	SpokeImage: "registry.example.com/x-spoke:v1.2.3", Channels: []string{"stable"}, DefaultChannel: "stable",
}

func objects(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func TestGenerate(t *testing.T) {
	g := NewWithT(t)
	config, examples := objects(t, testConfig...), objects(t, testExample)
	b, err := Generate([]byte(testBase), config, examples, testOptions)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(b.Manifests).To(HaveLen(4))
	g.Expect(b.Manifests).To(HaveKey("apiextensions.k8s.io_v1_customresourcedefinition_widgets.example.com.yaml"))
	g.Expect(b.Manifests).To(HaveKey("rbac.authorization.k8s.io_v1_clusterrole_x-metrics-reader.yaml"))
	g.Expect(string(b.Manifests["v1_service_x-metrics.yaml"])).NotTo(ContainSubstring("namespace"))
	g.Expect(b.Annotations).To(HaveKeyWithValue("operators.operatorframework.io.bundle.package.v1", "x"))

	csv := &v1alpha1.ClusterServiceVersion{}
	data := b.Manifests["x.clusterserviceversion.yaml"]
	g.Expect(yaml.UnmarshalStrict(data, csv)).To(Succeed())
	g.Expect(string(data)).NotTo(ContainSubstring("creationTimestamp"))
	g.Expect(string(data)).NotTo(ContainSubstring("status"))
	g.Expect(csv.Name).To(Equal("x.v1.2.3"))
	g.Expect(csv.Spec.Version.String()).To(Equal("1.2.3"))
	g.Expect(csv.Spec.CustomResourceDefinitions.Owned).To(Equal([]v1alpha1.CRDDescription{
		{Name: "widgets.example.com", Version: "v1", Kind: "Widget", DisplayName: "Widget", Description: "A widget."},
	}))
	g.Expect(csv.Annotations).To(HaveKeyWithValue("containerImage", testOptions.Image))
	g.Expect(csv.Annotations["alm-examples"]).To(ContainSubstring(`"kind": "Widget"`))
	g.Expect(csv.Spec.RelatedImages).To(ConsistOf(
		v1alpha1.RelatedImage{Name: "x", Image: testOptions.Image},
		v1alpha1.RelatedImage{Name: "x-precache", Image: testOptions.SpokeImage},
	))

	strategy := csv.Spec.InstallStrategy.StrategySpec
	g.Expect(strategy.DeploymentSpecs).To(HaveLen(1))
	container := strategy.DeploymentSpecs[0].Spec.Template.Spec.Containers[0]
	g.Expect(container.Image).To(Equal(testOptions.Image))
	g.Expect(container.Args).To(Equal([]string{"--leader-elect", "--spoke-image=" + testOptions.SpokeImage}))
	g.Expect(strategy.ClusterPermissions).To(HaveLen(1))
	g.Expect(strategy.ClusterPermissions[0].ServiceAccountName).To(Equal("x-manager"))
	g.Expect(strategy.ClusterPermissions[0].Rules[0].Resources).To(Equal([]string{"widgets"}))
	g.Expect(strategy.Permissions).To(HaveLen(1))
	g.Expect(strategy.Permissions[0].Rules[0].Resources).To(Equal([]string{"leases"}))

	// The same input gives the same bytes.
	again, err := Generate([]byte(testBase), objects(t, testConfig...), examples, testOptions)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.Manifests).To(Equal(b.Manifests))
}

func TestGenerateRejects(t *testing.T) {
	replace := func(from, to string) func([]string) []string {
		return func(docs []string) []string {
			out := make([]string, len(docs))
			for i, d := range docs {
				out[i] = strings.ReplaceAll(d, from, to)
			}
			return out
		}
	}
	cases := map[string]struct {
		base   string
		config func([]string) []string
		want   string
	}{
		"a manager without --spoke-image": {
			config: replace("--spoke-image=old:tag", "--zap-devel"),
			want:   "no container has a --spoke-image argument",
		},
		"a CRD the base does not describe": {
			base: strings.ReplaceAll(testBase, "Widget", "Gadget"),
			want: "no displayName and description for the owned CRD Widget",
		},
		"a binding of another service account": {
			config: replace("subjects: [{kind: ServiceAccount, name: x-manager,", "subjects: [{kind: ServiceAccount, name: other,"),
			want:   "no Deployment runs as service account other",
		},
		"a binding of a missing role": {
			config: replace("kind: Role, name: x-leader-election}", "kind: Role, name: missing}"),
			want:   "the configuration has no Role missing",
		},
		"a kind OLM does not install": {
			config: func(docs []string) []string {
				return append(docs, "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: w}")
			},
			want: "OLM does not install a MutatingWebhookConfiguration",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			base, config := testBase, testConfig
			if c.base != "" {
				base = c.base
			}
			if c.config != nil {
				config = c.config(append([]string{}, testConfig...))
			}
			_, err := Generate([]byte(base), objects(t, config...), objects(t, testExample), testOptions)
			g.Expect(err).To(MatchError(ContainSubstring(c.want)))
		})
	}
}

func TestDockerfileLabelsMatchAnnotations(t *testing.T) {
	g := NewWithT(t)
	annotations := Annotations(testOptions)
	dockerfile := string(Dockerfile(annotations, "bundle"))
	for k, v := range annotations {
		g.Expect(dockerfile).To(ContainSubstring("LABEL " + k + "=" + v + "\n"))
	}
	g.Expect(dockerfile).To(ContainSubstring("COPY bundle/manifests /manifests/\n"))
}
