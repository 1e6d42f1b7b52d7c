package realspoke

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	workclientset "open-cluster-management.io/api/client/work/clientset/versioned"
	workinformers "open-cluster-management.io/api/client/work/informers/externalversions"
	ocmfeature "open-cluster-management.io/api/feature"
	"open-cluster-management.io/ocm/pkg/features"
	"open-cluster-management.io/ocm/pkg/work/helper"
	"open-cluster-management.io/ocm/pkg/work/spoke/auth"
	"open-cluster-management.io/ocm/pkg/work/spoke/conditions"
	"open-cluster-management.io/ocm/pkg/work/spoke/controllers/finalizercontroller"
	"open-cluster-management.io/ocm/pkg/work/spoke/controllers/manifestcontroller"
	"open-cluster-management.io/ocm/pkg/work/spoke/controllers/statuscontroller"
	"open-cluster-management.io/ocm/pkg/work/spoke/objectreader"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// workStatusSync is how often the work agent reads back the status of what it applied (10 s
// in a cluster): the tests wait on it.
const workStatusSync = time.Second

// registerWorkFeatures registers the work agent's feature gates once per process, as its
// command does.
var registerWorkFeatures = sync.OnceValue(func() error {
	return features.SpokeMutableFeatureGate.Add(ocmfeature.DefaultSpokeWorkFeatureGates)
})

// startWorkAgent runs Open Cluster Management's work agent for the spoke, as the klusterlet
// deploys it: its controllers (ocm/pkg/work/spoke/controllers) apply the ManifestWorks of the
// spoke's cluster namespace on the hub to the spoke and write their status back, feedback and
// condition rules included. They are wired here as the agent's RunWorkloadAgent wires them
// for its kube driver, which keeps out the cloud-events transports that function links.
func (s *Spoke) startWorkAgent(ctx context.Context) error {
	if err := registerWorkFeatures(); err != nil {
		return fmt.Errorf("registering the work agent's feature gates: %w", err)
	}
	cluster := s.opts.ClusterName
	spokeConfig := clientConfig(s.cfg)
	spokeConfig.UserAgent = "work-agent"
	dynamicClient, err := dynamic.NewForConfig(spokeConfig)
	if err != nil {
		return err
	}
	kubeClient, err := kubernetes.NewForConfig(spokeConfig)
	if err != nil {
		return err
	}
	crdClient, err := apiextensionsclient.NewForConfig(spokeConfig)
	if err != nil {
		return err
	}
	spokeWork, err := workclientset.NewForConfig(spokeConfig)
	if err != nil {
		return err
	}
	httpClient, err := rest.HTTPClientFor(spokeConfig)
	if err != nil {
		return err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(spokeConfig, httpClient)
	if err != nil {
		return err
	}
	hubConfig := clientConfig(s.opts.HubConfig)
	hubWork, err := workclientset.NewForConfig(hubConfig)
	if err != nil {
		return err
	}
	hubInformers := workinformers.NewSharedInformerFactoryWithOptions(hubWork, 24*time.Hour, workinformers.WithNamespace(cluster))
	works := hubInformers.Work().V1().ManifestWorks()
	hubWorks := hubWork.WorkV1().ManifestWorks(cluster)
	spokeInformers := workinformers.NewSharedInformerFactory(spokeWork, 21*time.Hour)
	applied := spokeInformers.Work().V1().AppliedManifestWorks()
	appliedClient := spokeWork.WorkV1().AppliedManifestWorks()
	hubHash := helper.HubHash(hubConfig.Host)
	agentID := hubHash

	validator := auth.NewFactory(spokeConfig, kubeClient, works, cluster, mapper).NewExecutorValidator(ctx, false)
	conditionReader, err := conditions.NewConditionReader()
	if err != nil {
		return err
	}
	objectReader, err := objectreader.NewOptions().NewObjectReader(dynamicClient, works)
	if err != nil {
		return err
	}
	lister := works.Lister().ManifestWorks(cluster)
	type runnable interface {
		Run(ctx context.Context, workers int)
	}
	controllers := map[string]runnable{
		"manifestwork": manifestcontroller.NewManifestWorkController(dynamicClient, kubeClient, crdClient, hubWorks, works, lister,
			appliedClient, applied, objectReader, hubHash, agentID, mapper, validator),
		"add-finalizer":                 finalizercontroller.NewAddFinalizerController(hubWorks, works, lister),
		"appliedmanifestwork-finalize":  finalizercontroller.NewAppliedManifestWorkFinalizeController(dynamicClient, appliedClient, applied, objectReader, agentID),
		"manifestwork-finalize":         finalizercontroller.NewManifestWorkFinalizeController(hubWorks, works, lister, appliedClient, applied, hubHash),
		"unmanaged-appliedmanifestwork": finalizercontroller.NewUnManagedAppliedWorkController(works, lister, appliedClient, applied, time.Hour, hubHash, agentID),
		"available-status":              statuscontroller.NewAvailableStatusController(hubWorks, works, lister, conditionReader, objectReader, 1024, workStatusSync),
	}
	s.goRun("work agent informers", func(ctx context.Context) error {
		spokeInformers.Start(ctx.Done())
		hubInformers.Start(ctx.Done())
		<-ctx.Done()
		spokeInformers.Shutdown()
		hubInformers.Shutdown()
		return nil
	})
	for name, c := range controllers {
		s.goRun("work agent "+name, func(ctx context.Context) error {
			c.Run(ctx, 2)
			return nil
		})
	}
	return nil
}

// startLifecycleAgent runs the simulated lifecycle agent on the spoke's ImageBasedUpgrade.
func (s *Spoke) startLifecycleAgent(ctx context.Context) error {
	agent := sim.NewLifecycleAgent(*s.opts.LifecycleAgent)
	ibu := &unstructured.Unstructured{}
	ibu.SetGroupVersionKind(sim.ImageBasedUpgradeGVK)
	store := clientStore{c: s.client}
	return s.startRunner(ctx, "lifecycle agent", ibu, cache.ByObject{},
		func(context.Context) (time.Duration, error) { return agent.Step(store, s.opts.Clock.Now()) })
}

// clientStore is the simulator's object store over the spoke's apiserver, for the simulated
// operators: a status the operator changed is written through the status subresource.
type clientStore struct{ c client.Client }

var _ configpolicy.Store = clientStore{}

func (s clientStore) Get(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := s.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, namespace, name, configpolicy.ErrNotFound)
		}
		return nil, err
	}
	return u, nil
}

func (s clientStore) List(gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := s.c.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// Create creates obj, then writes its status, which a create leaves out.
func (s clientStore) Create(obj *unstructured.Unstructured) error {
	status, hasStatus := obj.Object["status"]
	created := obj.DeepCopy()
	if err := s.c.Create(context.Background(), created); err != nil {
		return err
	}
	if !hasStatus {
		return nil
	}
	created.Object["status"] = status
	return s.c.Status().Update(context.Background(), created)
}

// Update writes obj's status when it changed, else the object.
func (s clientStore) Update(obj *unstructured.Unstructured) error {
	stored, err := s.Get(obj.GroupVersionKind(), obj.GetNamespace(), obj.GetName())
	if err != nil {
		return err
	}
	if !apiequality.Semantic.DeepEqual(stored.Object["status"], obj.Object["status"]) {
		return s.c.Status().Update(context.Background(), obj.DeepCopy())
	}
	return s.c.Update(context.Background(), obj.DeepCopy())
}

func (s clientStore) Delete(gvk schema.GroupVersionKind, namespace, name string) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(namespace)
	u.SetName(name)
	return client.IgnoreNotFound(s.c.Delete(context.Background(), u))
}

func (s clientStore) Mapping(gvk schema.GroupVersionKind) (configpolicy.Mapping, bool) {
	m, err := s.c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return configpolicy.Mapping{}, false
	}
	return configpolicy.Mapping{Resource: m.Resource.Resource, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}, true
}

// removeTempDirs removes the spoke's temporary files.
func (s *Spoke) removeTempDirs() error {
	var errs []error
	for _, d := range s.tempDirs {
		errs = append(errs, os.RemoveAll(d))
	}
	return errors.Join(errs...)
}
