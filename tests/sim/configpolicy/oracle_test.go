package configpolicy

import (
	"context"
	"slices"
	"strings"
	"testing"

	depclient "github.com/stolostron/kubernetes-dependency-watches/client"
	corev1 "k8s.io/api/core/v1"
	extv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	dynfake "k8s.io/client-go/dynamic/fake"
	clientsetfake "k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	"open-cluster-management.io/config-policy-controller/controllers"
	"open-cluster-management.io/config-policy-controller/pkg/common"
	"open-cluster-management.io/config-policy-controller/pkg/mappings"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	clientfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// oracle runs the real config-policy-controller v0.19.0 ConfigurationPolicy reconciler against
// fake clients (as its own dryrun command does), so that tests can check the evaluator against it.
// The fake dynamic client is made to treat writes like an API server does for resources with a
// status subresource: status is dropped on create and kept on update, and dry-run updates are not
// stored.
type oracle struct {
	rec     *controllers.ConfigurationPolicyReconciler
	dynamic dynamic.Interface
	tracker clienttesting.ObjectTracker
	mapper  *Mapper
	seen    map[string]int
}

const oracleParent = "parent-policy"

// newOracle starts a reconciler for the policies, all in namespace "managed", on a cluster holding
// the base namespaces and objs.
func newOracle(
	t *testing.T, mapper *Mapper, objs []*unstructured.Unstructured, policies ...*configpolicyv1.ConfigurationPolicy,
) *oracle {
	t.Helper()

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	scheme := runtime.NewScheme()
	must(t, clientgoscheme.AddToScheme(scheme))
	must(t, configpolicyv1.AddToScheme(scheme))
	must(t, extv1.AddToScheme(scheme))

	builder := clientfake.NewClientBuilder().WithScheme(scheme)

	for _, policy := range policies {
		policy = oraclePolicy(policy)
		builder = builder.WithObjects(policy).WithStatusSubresource(policy)
	}

	crd := &extv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: controllers.CRDName}}
	runtimeClient := builder.WithObjects(crd).Build()

	listKinds := map[schema.GroupVersionResource]string{}
	resources := map[schema.GroupVersion][]metav1.APIResource{}

	for gvk, m := range mapper.mappings {
		listKinds[gvk.GroupVersion().WithResource(m.Resource)] = gvk.Kind + "List"
		resources[gvk.GroupVersion()] = append(resources[gvk.GroupVersion()], metav1.APIResource{
			Name: m.Resource, Namespaced: m.Namespaced, Kind: gvk.Kind, Group: gvk.Group, Version: gvk.Version,
			Verbs: mappings.DefaultVerbs,
		})
	}

	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	dyn.PrependReactor("update", "*", updateLikeAPIServer(dyn.Tracker()))
	dyn.PrependReactor("create", "*", createLikeAPIServer(dyn.Tracker()))
	clientset := clientsetfake.NewClientset()

	for gv, list := range resources {
		clientset.Resources = append(clientset.Resources, &metav1.APIResourceList{
			GroupVersion: gv.String(), APIResources: list,
		})
	}

	watcherReconciler, _ := depclient.NewControllerRuntimeSource()
	watcher := depclient.NewWithClients(dyn, clientset.Discovery(), watcherReconciler,
		&depclient.Options{DisableInitialReconcile: true, EnableCache: true})

	go func() { _ = watcher.Start(ctx) }()

	<-watcher.Started()

	selector, err := common.NewNamespaceSelectorReconciler(runtimeClient, nil, "IfMatch")
	must(t, err)

	o := &oracle{
		rec: &controllers.ConfigurationPolicyReconciler{
			Client:                 runtimeClient,
			DecryptionConcurrency:  1,
			DynamicWatcher:         watcher,
			Scheme:                 scheme,
			Recorder:               &events.FakeRecorder{},
			InstanceName:           "oracle",
			TargetK8sClient:        clientset,
			TargetK8sDynamicClient: dyn,
			SelectorReconciler:     &selector,
			EvalBackoffSeconds:     5,
		},
		dynamic: dyn,
		tracker: dyn.Tracker(),
		mapper:  mapper,
		seen:    map[string]int{},
	}

	for _, obj := range append(objects(t, baseNamespaces...), objs...) {
		o.create(t, ctx, runtimeClient, obj)
	}

	return o
}

// updateLikeAPIServer keeps the stored status on updates of the main resource and does not store
// dry-run updates.
func updateLikeAPIServer(tracker clienttesting.ObjectTracker) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		update, ok := action.(clienttesting.UpdateActionImpl)
		if !ok || update.GetSubresource() != "" {
			return false, nil, nil
		}

		obj := update.GetObject().(*unstructured.Unstructured).DeepCopy()

		current, err := tracker.Get(update.GetResource(), update.GetNamespace(), obj.GetName())
		if err != nil {
			return true, nil, err
		}

		if status, ok := current.(*unstructured.Unstructured).Object["status"]; ok {
			obj.Object["status"] = status
		} else {
			delete(obj.Object, "status")
		}

		if len(update.UpdateOptions.DryRun) == 0 {
			err = tracker.Update(update.GetResource(), obj, update.GetNamespace())
		}

		return true, obj, err
	}
}

// createLikeAPIServer drops the status of created objects.
func createLikeAPIServer(tracker clienttesting.ObjectTracker) clienttesting.ReactionFunc {
	return func(action clienttesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(clienttesting.CreateActionImpl)
		if !ok || create.GetSubresource() != "" {
			return false, nil, nil
		}

		obj := create.GetObject().(*unstructured.Unstructured).DeepCopy()
		delete(obj.Object, "status")

		if len(create.CreateOptions.DryRun) > 0 {
			return true, obj, nil
		}

		return true, obj, tracker.Create(create.GetResource(), obj, create.GetNamespace())
	}
}

// oraclePolicy prepares a copy of a policy for the reconciler: owned by a parent Policy, so that
// compliance events are sent, and polled without delay, so that every Reconcile evaluates and
// reads the fake client directly.
func oraclePolicy(policy *configpolicyv1.ConfigurationPolicy) *configpolicyv1.ConfigurationPolicy {
	policy = policy.DeepCopy()
	// The reconciler caches by UID.
	policy.UID = types.UID("uid-" + policy.Name)
	policy.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "policy.open-cluster-management.io/v1", Kind: "Policy", Name: oracleParent, UID: "parent-uid",
	}}

	if policy.Spec.EvaluationInterval.Compliant == "" {
		policy.Spec.EvaluationInterval.Compliant = "0s"
	}

	if policy.Spec.EvaluationInterval.NonCompliant == "" {
		policy.Spec.EvaluationInterval.NonCompliant = "0s"
	}

	return policy
}

func (o *oracle) create(t *testing.T, ctx context.Context, c client.Client, obj *unstructured.Unstructured) {
	t.Helper()

	gvk := obj.GroupVersionKind()

	// The tracker, unlike the client, keeps the status of the cluster's initial objects.
	m, _ := o.mapper.Mapping(gvk)
	must(t, o.tracker.Create(gvk.GroupVersion().WithResource(m.Resource), obj.DeepCopy(), obj.GetNamespace()))

	if gvk == NamespaceGVK {
		ns := &corev1.Namespace{}
		must(t, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, ns))
		must(t, c.Create(ctx, ns))
	}
}

func (o *oracle) resource(gvk schema.GroupVersionKind, namespace string) dynamic.ResourceInterface {
	m, _ := o.mapper.Mapping(gvk)
	res := o.dynamic.Resource(gvk.GroupVersion().WithResource(m.Resource))

	if m.Namespaced {
		return res.Namespace(namespace)
	}

	return res
}

// evaluate reconciles the named policy once and returns its status and the compliance messages
// it sent since the previous call, oldest first.
func (o *oracle) evaluate(t *testing.T, name string) (configpolicyv1.ConfigurationPolicyStatus, []string) {
	t.Helper()

	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log.WithName("oracle"))
	key := types.NamespacedName{Namespace: "managed", Name: name}

	// A mapping error makes Reconcile return an error after writing the status; only the status
	// matters here.
	_, _ = o.rec.Reconcile(ctx, ctrl.Request{NamespacedName: key})

	policy := &configpolicyv1.ConfigurationPolicy{}
	must(t, o.rec.Get(ctx, key, policy))

	list := &corev1.EventList{}
	must(t, o.rec.List(ctx, list, client.InNamespace(key.Namespace)))

	var sent []corev1.Event

	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == oracleParent && ev.Related != nil && ev.Related.Name == name {
			sent = append(sent, ev)
		}
	}

	slices.SortFunc(sent, func(a, b corev1.Event) int { return strings.Compare(a.Name, b.Name) })

	messages := []string{}
	for _, ev := range sent[o.seen[name]:] {
		messages = append(messages, ev.Message)
	}

	o.seen[name] = len(sent)

	return policy.Status, messages
}

// get reads an object from the oracle's cluster, nil when absent.
func (o *oracle) get(gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	obj, err := o.resource(gvk, namespace).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err != nil {
		return nil
	}

	return obj
}

// updateStatus writes an object's status in the oracle's cluster, e.g. to play the
// cluster-version operator.
func (o *oracle) updateStatus(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()

	_, err := o.resource(obj.GroupVersionKind(), obj.GetNamespace()).
		UpdateStatus(context.Background(), obj.DeepCopy(), metav1.UpdateOptions{})
	must(t, err)
}

// oracleConditions returns the template conditions of a status, as the evaluator reports them.
func oracleConditions(status configpolicyv1.ConfigurationPolicyStatus) []Condition {
	out := make([]Condition, 0, len(status.CompliancyDetails))

	for _, d := range status.CompliancyDetails {
		var c Condition
		if len(d.Conditions) > 0 {
			c = Condition{Type: d.Conditions[0].Type, Reason: d.Conditions[0].Reason, Message: d.Conditions[0].Message}
		}

		out = append(out, c)
	}

	return out
}

func resultConditions(res Result) []Condition {
	out := make([]Condition, len(res.Templates))
	for i, t := range res.Templates {
		out[i] = t.Condition
	}

	return out
}

func must(t testing.TB, err error) {
	t.Helper()

	if err != nil {
		t.Fatal(err)
	}
}
