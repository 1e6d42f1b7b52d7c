package hubagent

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
	workv1 "open-cluster-management.io/api/work/v1"
)

// watchKey names one informer: a resource in a namespace ("" for a cluster-scoped resource).
type watchKey struct {
	gvr       schema.GroupVersionResource
	namespace string
}

// objectKey names one object of the regional hub.
type objectKey struct {
	watchKey
	name string
}

// informer is a running informer and how many (work, object) pairs use it.
type informer struct {
	cancel context.CancelFunc
	uses   int
}

// watches queues a work whenever an object it reports changes on the regional hub, with one
// informer per resource and namespace, started when the first work reports an object there
// and stopped when the last stops reporting one.
type watches struct {
	ctx     context.Context //nolint:containedctx // the agent's lifetime, which bounds every informer
	dynamic dynamic.Interface
	enqueue func(work string)
	wg      *sync.WaitGroup

	mu        sync.Mutex
	informers map[watchKey]*informer
	works     map[objectKey]sets.Set[string]
	byWork    map[string][]objectKey
}

func newWatches(ctx context.Context, dyn dynamic.Interface, enqueue func(string), wg *sync.WaitGroup) *watches {
	return &watches{ctx: ctx, dynamic: dyn, enqueue: enqueue, wg: wg,
		informers: map[watchKey]*informer{}, works: map[objectKey]sets.Set[string]{}, byWork: map[string][]objectKey{}}
}

// track makes the objects of manifests the ones watched for work; none stops watching for it.
func (w *watches) track(work string, manifests []workv1.ManifestCondition) {
	keys := objectKeys(manifests)
	w.mu.Lock()
	defer w.mu.Unlock()
	if slices.Equal(w.byWork[work], keys) {
		return
	}
	for _, k := range w.byWork[work] {
		w.remove(work, k)
	}
	for _, k := range keys {
		w.add(work, k)
	}
	if len(keys) == 0 {
		delete(w.byWork, work)
		return
	}
	w.byWork[work] = keys
}

// objectKeys are the sorted keys of the manifests' objects, those with a known resource.
func objectKeys(manifests []workv1.ManifestCondition) []objectKey {
	var keys []objectKey
	for _, m := range manifests {
		r := m.ResourceMeta
		if r.Resource == "" || r.Version == "" || r.Name == "" {
			continue
		}
		gvr := schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
		keys = append(keys, objectKey{watchKey: watchKey{gvr: gvr, namespace: r.Namespace}, name: r.Name})
	}
	slices.SortFunc(keys, func(x, y objectKey) int {
		return cmp.Or(cmp.Compare(x.gvr.String(), y.gvr.String()), cmp.Compare(x.namespace, y.namespace), cmp.Compare(x.name, y.name))
	})
	return slices.Compact(keys)
}

func (w *watches) add(work string, k objectKey) {
	if w.works[k] == nil {
		w.works[k] = sets.New[string]()
	}
	w.works[k].Insert(work)
	inf := w.informers[k.watchKey]
	if inf == nil {
		inf = w.start(k.watchKey)
		w.informers[k.watchKey] = inf
	}
	inf.uses++
}

func (w *watches) remove(work string, k objectKey) {
	w.works[k].Delete(work)
	if w.works[k].Len() == 0 {
		delete(w.works, k)
	}
	inf := w.informers[k.watchKey]
	inf.uses--
	if inf.uses == 0 {
		inf.cancel()
		delete(w.informers, k.watchKey)
	}
}

// start runs an informer on the regional hub, without resync: its events are enough.
func (w *watches) start(k watchKey) *informer {
	ctx, cancel := context.WithCancel(w.ctx)
	inf := dynamicinformer.NewFilteredDynamicInformer(w.dynamic, k.gvr, k.namespace, 0, toolscache.Indexers{}, nil).Informer()
	changed := func(obj any) {
		if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		o, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		w.mu.Lock()
		works := sets.List(w.works[objectKey{watchKey: k, name: o.GetName()}])
		w.mu.Unlock()
		for _, work := range works {
			w.enqueue(work)
		}
	}
	// AddEventHandler fails only on a stopped informer; this one has not started.
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed, UpdateFunc: func(_, obj any) { changed(obj) }, DeleteFunc: changed,
	})
	w.wg.Go(func() { inf.Run(ctx.Done()) })
	return &informer{cancel: cancel}
}
