package configpolicy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

// Errors returned by a Store, wrapped with details.
var (
	// ErrNotFound means the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists means an object with that name already exists.
	ErrAlreadyExists = errors.New("already exists")
	// ErrConflict means the object changed since it was read (resourceVersion mismatch).
	ErrConflict = errors.New("conflict")
	// ErrNoMapping means the kind is unknown to the store.
	ErrNoMapping = errors.New("no mapping")
)

// Store is the API of one simulated cluster as the evaluator sees it.
//
// Objects returned by Get and List are shared with the store and must be treated as read-only;
// change a DeepCopy and pass it to Update. Create and Update keep their own copy of the argument.
type Store interface {
	// Get returns the object, or an error wrapping ErrNotFound.
	Get(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects of the kind in the namespace ("" for all namespaces or for a
	// cluster-scoped kind), sorted by namespace and name.
	List(gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error)
	// Create stores a new object.
	Create(obj *unstructured.Unstructured) error
	// Update replaces an existing object; a set resourceVersion must match the stored one.
	Update(obj *unstructured.Unstructured) error
	// Delete removes the object.
	Delete(gvk schema.GroupVersionKind, namespace, name string) error
	// Mapping tells the resource name and scope of a kind, as API discovery would.
	Mapping(gvk schema.GroupVersionKind) (Mapping, bool)
}

// Mapping is what discovery says about a kind.
type Mapping struct {
	// Resource is the plural resource name used in compliance messages, e.g. "clusterversions".
	Resource string
	// Namespaced is true for namespaced kinds.
	Namespaced bool
}

// NamespaceGVK is the kind of Namespace objects, which namespaceSelector reads.
var NamespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}

// Mapper maps kinds to resources. Fill it before sharing it; lookups are then safe from many
// goroutines.
type Mapper struct {
	mappings map[schema.GroupVersionKind]Mapping
}

// NewMapper returns a Mapper that knows Namespace, ConfigMap, Secret, ClusterVersion and
// ClusterOperator.
func NewMapper() *Mapper {
	m := &Mapper{mappings: map[schema.GroupVersionKind]Mapping{}}
	m.Add(NamespaceGVK, "namespaces", false)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "configmaps", true)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, "secrets", true)

	configV1 := schema.GroupVersion{Group: "config.openshift.io", Version: "v1"}
	m.Add(configV1.WithKind("ClusterVersion"), "clusterversions", false)
	m.Add(configV1.WithKind("ClusterOperator"), "clusteroperators", false)

	return m
}

// Add registers a kind with its plural resource name and scope.
func (m *Mapper) Add(gvk schema.GroupVersionKind, resource string, namespaced bool) {
	m.mappings[gvk] = Mapping{Resource: resource, Namespaced: namespaced}
}

// Mapping returns the mapping of a kind.
func (m *Mapper) Mapping(gvk schema.GroupVersionKind) (Mapping, bool) {
	mapping, ok := m.mappings[gvk]

	return mapping, ok
}

type objectKey struct {
	namespace string
	name      string
}

// MapStore is a goroutine-safe Store backed by maps. Like an API server it requires the namespace
// of a namespaced object to exist on create, assigns resourceVersions and uids, and rejects
// updates with a stale resourceVersion.
type MapStore struct {
	mapper  *Mapper
	mu      sync.RWMutex
	kinds   map[schema.GroupVersionKind]map[objectKey]*unstructured.Unstructured
	version uint64
}

var _ Store = (*MapStore)(nil)

// NewMapStore returns an empty store that uses mapper for scopes and resource names.
func NewMapStore(mapper *Mapper) *MapStore {
	return &MapStore{
		mapper: mapper,
		kinds:  map[schema.GroupVersionKind]map[objectKey]*unstructured.Unstructured{},
	}
}

// Mapping returns the mapper's mapping of a kind.
func (s *MapStore) Mapping(gvk schema.GroupVersionKind) (Mapping, bool) {
	return s.mapper.Mapping(gvk)
}

// Get returns the stored object, shared: do not modify it.
func (s *MapStore) Get(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	key, err := s.key(gvk, namespace, name)
	if err != nil {
		return nil, err
	}

	s.mu.RLock()
	obj := s.kinds[gvk][key]
	s.mu.RUnlock()

	if obj == nil {
		return nil, s.fail(ErrNotFound, gvk, key)
	}

	return obj, nil
}

// List returns the stored objects, shared: do not modify them.
func (s *MapStore) List(gvk schema.GroupVersionKind, namespace string) ([]*unstructured.Unstructured, error) {
	mapping, ok := s.mapper.Mapping(gvk)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoMapping, gvk)
	}

	s.mu.RLock()
	bucket := s.kinds[gvk]
	out := make([]*unstructured.Unstructured, 0, len(bucket))

	for key, obj := range bucket {
		if !mapping.Namespaced || namespace == "" || key.namespace == namespace {
			out = append(out, obj)
		}
	}
	s.mu.RUnlock()

	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		if c := strings.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
			return c
		}

		return strings.Compare(a.GetName(), b.GetName())
	})

	return out, nil
}

// Create stores a copy of obj with a new uid and resourceVersion.
func (s *MapStore) Create(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()

	key, err := s.key(gvk, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	if key.namespace != "" && s.kinds[NamespaceGVK][objectKey{name: key.namespace}] == nil {
		return s.fail(ErrNotFound, NamespaceGVK, objectKey{name: key.namespace})
	}

	bucket := s.kinds[gvk]
	if bucket == nil {
		bucket = map[objectKey]*unstructured.Unstructured{}
		s.kinds[gvk] = bucket
	}

	if bucket[key] != nil {
		return s.fail(ErrAlreadyExists, gvk, key)
	}

	stored := obj.DeepCopy()
	s.version++
	stored.SetUID(k8stypes.UID("uid-" + strconv.FormatUint(s.version, 10)))
	stored.SetResourceVersion(strconv.FormatUint(s.version, 10))

	if !s.namespaced(gvk) {
		stored.SetNamespace("")
	}

	bucket[key] = stored

	return nil
}

// Update replaces the stored object with a copy of obj, keeping its uid and creationTimestamp.
func (s *MapStore) Update(obj *unstructured.Unstructured) error {
	gvk := obj.GroupVersionKind()

	key, err := s.key(gvk, obj.GetNamespace(), obj.GetName())
	if err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	current := s.kinds[gvk][key]
	if current == nil {
		return s.fail(ErrNotFound, gvk, key)
	}

	if rv := obj.GetResourceVersion(); rv != "" && rv != current.GetResourceVersion() {
		return s.fail(ErrConflict, gvk, key)
	}

	stored := obj.DeepCopy()
	s.version++
	stored.SetUID(current.GetUID())
	stored.SetCreationTimestamp(current.GetCreationTimestamp())
	stored.SetResourceVersion(strconv.FormatUint(s.version, 10))

	if !s.namespaced(gvk) {
		stored.SetNamespace("")
	}

	s.kinds[gvk][key] = stored

	return nil
}

// Delete removes the stored object.
func (s *MapStore) Delete(gvk schema.GroupVersionKind, namespace, name string) error {
	key, err := s.key(gvk, namespace, name)
	if err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	if s.kinds[gvk][key] == nil {
		return s.fail(ErrNotFound, gvk, key)
	}

	delete(s.kinds[gvk], key)

	return nil
}

// key builds the storage key; cluster-scoped kinds ignore the namespace like an API server does.
func (s *MapStore) key(gvk schema.GroupVersionKind, namespace, name string) (objectKey, error) {
	mapping, ok := s.mapper.Mapping(gvk)
	if !ok {
		return objectKey{}, fmt.Errorf("%w: %s", ErrNoMapping, gvk)
	}

	if !mapping.Namespaced {
		namespace = ""
	}

	return objectKey{namespace: namespace, name: name}, nil
}

func (s *MapStore) namespaced(gvk schema.GroupVersionKind) bool {
	mapping, _ := s.mapper.Mapping(gvk)

	return mapping.Namespaced
}

// storeError carries an API-server-like text and unwraps to one of the Err values.
type storeError struct {
	kind error
	text string
}

func (e *storeError) Error() string { return e.text }

func (e *storeError) Unwrap() error { return e.kind }

// fail builds an error worded like the API server's, e.g. namespaces "foo" not found.
func (s *MapStore) fail(kind error, gvk schema.GroupVersionKind, key objectKey) error {
	mapping, _ := s.mapper.Mapping(gvk)
	id := fmt.Sprintf("%s %q", mapping.Resource, key.name)

	switch {
	case errors.Is(kind, ErrConflict):
		return &storeError{kind: kind, text: fmt.Sprintf("Operation cannot be fulfilled on %s: the object has been "+
			"modified; please apply your changes to the latest version and try again", id)}
	case errors.Is(kind, ErrAlreadyExists):
		return &storeError{kind: kind, text: id + " already exists"}
	default:
		return &storeError{kind: kind, text: id + " not found"}
	}
}
