// Package bundlegen builds the operator's OLM bundle (registry+v1) from the kustomize output of
// config/default, a hand-written ClusterServiceVersion base and the samples: the CSV with its
// install strategy, the CRDs and the other manifests OLM accepts, the bundle annotations and the
// bundle image's Dockerfile. It does no I/O; hack/bundle reads and writes the files.
//
// The output is deterministic (sorted, no timestamps) so that `make verify` can check it.
package bundlegen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// SpokeImageFlag is the manager's flag naming the image of the spoke-side precache program;
// the generator sets it to Options.SpokeImage.
const SpokeImageFlag = "--spoke-image="

// Options are the values `make bundle` passes in.
type Options struct {
	Package        string         // OLM package name, also the CSV name's prefix
	Version        semver.Version // the CSV's spec.version
	Image          string         // the manager's image (IMG); empty keeps config/default's
	SpokeImage     string         // the precache image (PRECACHE_IMG), --spoke-image and relatedImages
	Channels       []string
	DefaultChannel string
}

// Bundle is a generated bundle: manifests/ file names and their contents, and the
// annotations of metadata/annotations.yaml (also the bundle image's labels).
type Bundle struct {
	Manifests   map[string][]byte
	Annotations map[string]string
}

// parts are the kustomize output sorted by what the bundle does with them.
type parts struct {
	crds        []*unstructured.Unstructured
	deployments []appsv1.Deployment
	roles       map[string]rbacv1.Role        // by name
	clusterRole map[string]rbacv1.ClusterRole // by name
	bindings    []binding
	others      []*unstructured.Unstructured // written to manifests/ as they are
}

// binding is a RoleBinding (namespaced) or ClusterRoleBinding of some service accounts.
type binding struct {
	name            string
	namespaced      bool
	roleRef         rbacv1.RoleRef
	serviceAccounts []string
}

// Generate builds the bundle. base is the CSV base (YAML), config the objects of
// `kustomize build config/default`, examples the objects for alm-examples.
func Generate(base []byte, config, examples []*unstructured.Unstructured, opts Options) (*Bundle, error) {
	csv := &v1alpha1.ClusterServiceVersion{}
	if err := yaml.UnmarshalStrict(base, csv); err != nil {
		return nil, fmt.Errorf("reading the CSV base: %w", err)
	}
	p, err := split(config)
	if err != nil {
		return nil, err
	}
	if err := fillCSV(csv, p, examples, opts); err != nil {
		return nil, err
	}

	b := &Bundle{Manifests: map[string][]byte{}, Annotations: Annotations(opts)}
	csvYAML, err := marshalCSV(csv)
	if err != nil {
		return nil, err
	}
	b.Manifests[opts.Package+".clusterserviceversion.yaml"] = csvYAML
	for _, obj := range append(append([]*unstructured.Unstructured{}, p.crds...), p.others...) {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			return nil, fmt.Errorf("writing %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		b.Manifests[FileName(obj)] = data
	}
	return b, nil
}

// fillCSV sets everything in the CSV that comes from the configuration and the options.
func fillCSV(csv *v1alpha1.ClusterServiceVersion, p *parts, examples []*unstructured.Unstructured, opts Options) error {
	csv.Name = fmt.Sprintf("%s.v%s", opts.Package, opts.Version)
	csv.Spec.Version = version.OperatorVersion{Version: opts.Version}
	owned, err := ownedCRDs(p.crds, csv.Spec.CustomResourceDefinitions.Owned)
	if err != nil {
		return err
	}
	csv.Spec.CustomResourceDefinitions.Owned = owned

	image, err := setImages(p.deployments, opts)
	if err != nil {
		return err
	}
	csv.Spec.RelatedImages = []v1alpha1.RelatedImage{
		{Name: opts.Package, Image: image},
		{Name: opts.Package + "-precache", Image: opts.SpokeImage},
	}
	strategy, err := installStrategy(p)
	if err != nil {
		return err
	}
	csv.Spec.InstallStrategy = strategy

	almExamples, err := ALMExamples(examples)
	if err != nil {
		return err
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations["alm-examples"] = almExamples
	csv.Annotations["containerImage"] = image
	return nil
}

// split sorts the kustomize output by kind. The Namespace and the ServiceAccounts are left
// out: OLM installs into the OperatorGroup's namespace and creates the service accounts the
// install strategy names. Namespaces are dropped from every object for the same reason.
func split(config []*unstructured.Unstructured) (*parts, error) {
	p := &parts{roles: map[string]rbacv1.Role{}, clusterRole: map[string]rbacv1.ClusterRole{}}
	for _, obj := range config {
		obj = obj.DeepCopy()
		obj.SetNamespace("")
		var err error
		switch obj.GetKind() {
		case "Namespace", "ServiceAccount":
		case "CustomResourceDefinition":
			p.crds = append(p.crds, obj)
		case "Deployment":
			var d appsv1.Deployment
			err = fromUnstructured(obj, &d)
			p.deployments = append(p.deployments, d)
		case "Role":
			var r rbacv1.Role
			err = fromUnstructured(obj, &r)
			p.roles[r.Name] = r
		case "ClusterRole":
			var r rbacv1.ClusterRole
			err = fromUnstructured(obj, &r)
			p.clusterRole[r.Name] = r
		case "RoleBinding", "ClusterRoleBinding":
			var b binding
			b, err = toBinding(obj)
			p.bindings = append(p.bindings, b)
		case "Service", "ConfigMap", "Secret", "PodDisruptionBudget", "ServiceMonitor", "PrometheusRule":
			p.others = append(p.others, obj)
		default:
			err = fmt.Errorf("OLM does not install a %s in a bundle", obj.GetKind())
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	if len(p.deployments) == 0 {
		return nil, fmt.Errorf("the configuration holds no Deployment")
	}
	sort.Slice(p.deployments, func(i, j int) bool { return p.deployments[i].Name < p.deployments[j].Name })
	return p, nil
}

func toBinding(obj *unstructured.Unstructured) (binding, error) {
	var rb rbacv1.RoleBinding // a ClusterRoleBinding has the same fields, less the namespace
	if err := fromUnstructured(obj, &rb); err != nil {
		return binding{}, err
	}
	b := binding{name: obj.GetName(), namespaced: obj.GetKind() == "RoleBinding", roleRef: rb.RoleRef}
	for _, s := range rb.Subjects {
		if s.Kind != rbacv1.ServiceAccountKind {
			return binding{}, fmt.Errorf("binds a %s; only service accounts can be bound in a bundle", s.Kind)
		}
		b.serviceAccounts = append(b.serviceAccounts, s.Name)
	}
	return b, nil
}

func fromUnstructured(obj *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, into)
}

// ownedCRDs lists each served version of each CRD, with the display name, description and
// descriptors of the base's entry of the same kind.
func ownedCRDs(crds []*unstructured.Unstructured, base []v1alpha1.CRDDescription) ([]v1alpha1.CRDDescription, error) {
	byKind := map[string]v1alpha1.CRDDescription{}
	for _, d := range base {
		byKind[d.Kind] = d
	}
	var owned []v1alpha1.CRDDescription
	for _, crd := range crds {
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		desc, ok := byKind[kind]
		if !ok || desc.Description == "" || desc.DisplayName == "" {
			return nil, fmt.Errorf("the CSV base has no displayName and description for the owned CRD %s", kind)
		}
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			v, _ := v.(map[string]any)
			if served, _ := v["served"].(bool); !served {
				continue
			}
			d := desc
			d.Name, d.Version = crd.GetName(), fmt.Sprint(v["name"])
			owned = append(owned, d)
		}
	}
	sort.Slice(owned, func(i, j int) bool {
		if owned[i].Name != owned[j].Name {
			return owned[i].Name < owned[j].Name
		}
		return owned[i].Version < owned[j].Version
	})
	return owned, nil
}

// setImages sets the manager container's image (when opts.Image is set) and every
// --spoke-image flag, and returns the manager's image. It fails when no container has the
// flag: the spoke image must be a related image the deployment actually uses.
func setImages(deployments []appsv1.Deployment, opts Options) (string, error) {
	var image string
	spoke := false
	for i := range deployments {
		containers := deployments[i].Spec.Template.Spec.Containers
		for c := range containers {
			if opts.Image != "" && containers[c].Name == "manager" {
				containers[c].Image = opts.Image
			}
			if containers[c].Name == "manager" {
				image = containers[c].Image
			}
			for a, arg := range containers[c].Args {
				if strings.HasPrefix(arg, SpokeImageFlag) {
					containers[c].Args[a] = SpokeImageFlag + opts.SpokeImage
					spoke = true
				}
			}
		}
	}
	switch {
	case image == "":
		return "", fmt.Errorf("no Deployment has a container named manager")
	case !spoke:
		return "", fmt.Errorf("no container has a %s argument", strings.TrimSuffix(SpokeImageFlag, "="))
	}
	return image, nil
}

// installStrategy is the deployment strategy: the Deployments, and the rules bound to their
// service accounts (Role bindings become permissions, ClusterRole bindings clusterPermissions).
// A bound role is not written to manifests/; an unbound ClusterRole (the metrics reader) is.
func installStrategy(p *parts) (v1alpha1.NamedInstallStrategy, error) {
	spec := v1alpha1.StrategyDetailsDeployment{}
	accounts := map[string]bool{}
	for _, d := range p.deployments {
		spec.DeploymentSpecs = append(spec.DeploymentSpecs, v1alpha1.StrategyDeploymentSpec{
			Name: d.Name, Spec: d.Spec, Label: d.Labels,
		})
		accounts[d.Spec.Template.Spec.ServiceAccountName] = true
	}
	bound := map[string]bool{}
	for _, b := range p.bindings {
		rules, err := boundRules(p, b)
		if err != nil {
			return v1alpha1.NamedInstallStrategy{}, err
		}
		bound[b.roleRef.Kind+"/"+b.roleRef.Name] = true
		for _, sa := range b.serviceAccounts {
			if !accounts[sa] {
				return v1alpha1.NamedInstallStrategy{}, fmt.Errorf("binding %s: no Deployment runs as service account %s", b.name, sa)
			}
			perm := v1alpha1.StrategyDeploymentPermissions{ServiceAccountName: sa, Rules: rules}
			if b.namespaced {
				spec.Permissions = append(spec.Permissions, perm)
			} else {
				spec.ClusterPermissions = append(spec.ClusterPermissions, perm)
			}
		}
	}
	sortPermissions(spec.Permissions)
	sortPermissions(spec.ClusterPermissions)
	p.others = append(p.others, unboundRoles(p, bound)...)
	sort.Slice(p.others, func(i, j int) bool { return FileName(p.others[i]) < FileName(p.others[j]) })
	return v1alpha1.NamedInstallStrategy{StrategyName: v1alpha1.InstallStrategyNameDeployment, StrategySpec: spec}, nil
}

func boundRules(p *parts, b binding) ([]rbacv1.PolicyRule, error) {
	switch b.roleRef.Kind {
	case "Role":
		if r, ok := p.roles[b.roleRef.Name]; ok {
			return r.Rules, nil
		}
	case "ClusterRole":
		if r, ok := p.clusterRole[b.roleRef.Name]; ok {
			return r.Rules, nil
		}
	}
	return nil, fmt.Errorf("binding %s: the configuration has no %s %s", b.name, b.roleRef.Kind, b.roleRef.Name)
}

func unboundRoles(p *parts, bound map[string]bool) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	add := func(kind, name string, obj any) {
		if bound[kind+"/"+name] {
			return
		}
		m, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion(rbacv1.SchemeGroupVersion.String())
		u.SetKind(kind)
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		out = append(out, u)
	}
	for name, r := range p.roles {
		add("Role", name, &r)
	}
	for name, r := range p.clusterRole {
		add("ClusterRole", name, &r)
	}
	return out
}

func sortPermissions(perms []v1alpha1.StrategyDeploymentPermissions) {
	sort.SliceStable(perms, func(i, j int) bool { return perms[i].ServiceAccountName < perms[j].ServiceAccountName })
}

// ALMExamples is the alm-examples annotation: the examples as an indented JSON list, in order.
func ALMExamples(examples []*unstructured.Unstructured) (string, error) {
	objs := make([]map[string]any, 0, len(examples))
	for _, e := range examples {
		objs = append(objs, e.Object)
	}
	data, err := json.MarshalIndent(objs, "", "  ")
	if err != nil {
		return "", fmt.Errorf("writing alm-examples: %w", err)
	}
	return string(data), nil
}

// marshalCSV writes the CSV without the empty status and creation timestamps the typed
// structs carry.
func marshalCSV(csv *v1alpha1.ClusterServiceVersion) ([]byte, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(csv)
	if err != nil {
		return nil, fmt.Errorf("writing the CSV: %w", err)
	}
	delete(m, "status")
	unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
	deployments, _, _ := unstructured.NestedSlice(m, "spec", "install", "spec", "deployments")
	for _, d := range deployments {
		d, _ := d.(map[string]any)
		unstructured.RemoveNestedField(d, "spec", "template", "metadata", "creationTimestamp")
	}
	if err := unstructured.SetNestedSlice(m, deployments, "spec", "install", "spec", "deployments"); err != nil {
		return nil, fmt.Errorf("writing the CSV: %w", err)
	}
	data, err := yaml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("writing the CSV: %w", err)
	}
	return data, nil
}

// FileName is the name kustomize's `build -o <dir>` gives an object:
// <group>_<version>_<kind>_<name>.yaml, lower case, without the group of core objects.
func FileName(obj *unstructured.Unstructured) string {
	gv := strings.ReplaceAll(obj.GetAPIVersion(), "/", "_")
	return strings.ToLower(fmt.Sprintf("%s_%s_%s.yaml", gv, obj.GetKind(), obj.GetName()))
}

// Annotations are the bundle's metadata/annotations.yaml entries and the bundle image's labels.
func Annotations(opts Options) map[string]string {
	return map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1":       "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1":       "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":        "metadata/",
		"operators.operatorframework.io.bundle.package.v1":         opts.Package,
		"operators.operatorframework.io.bundle.channels.v1":        strings.Join(opts.Channels, ","),
		"operators.operatorframework.io.bundle.channel.default.v1": opts.DefaultChannel,
	}
}

// AnnotationsYAML is metadata/annotations.yaml.
func AnnotationsYAML(annotations map[string]string) ([]byte, error) {
	data, err := yaml.Marshal(map[string]any{"annotations": annotations})
	if err != nil {
		return nil, fmt.Errorf("writing the annotations: %w", err)
	}
	return data, nil
}

// Dockerfile builds the bundle image from bundleDir (relative to the build context), with the
// annotations as labels.
func Dockerfile(annotations map[string]string, bundleDir string) []byte {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Generated by `make bundle` (hack/bundle); do not edit.\nFROM scratch\n\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "LABEL %s=%s\n", k, annotations[k])
	}
	fmt.Fprintf(&b, "\nCOPY %s/manifests /manifests/\nCOPY %s/metadata /metadata/\n", bundleDir, bundleDir)
	return []byte(b.String())
}
