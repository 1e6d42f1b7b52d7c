package ownership

import (
	"context"
	"errors"
	"fmt"
	"time"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
)

// Cleaner finds and deletes the objects made for a rollout.
type Cleaner struct {
	Client client.Client
	// Copies reads the ConfigMaps copied for hub templates, from a cache that holds only
	// those; nil reads them through Client.
	Copies client.Reader
	// Unserved are the optional APIs the hub does not serve: their kinds are not looked for.
	Unserved hubapi.Unserved
	// Teardown, when set, is given the rollout's views before they are deleted, to remove
	// from the spokes what the rollout's jobs set up there (spokejob.Runner.Teardown); the
	// views are deleted once it succeeded.
	Teardown func(ctx context.Context, views []viewv1beta1.ManagedClusterView) error
	// Clock dates the emptying of Placements (DrainTimeout); nil is the real clock.
	Clock clock.PassiveClock
}

// Cleanup deletes every object made for owner (Kinds, and the copied ConfigMaps in the
// owner's namespace), in every namespace. It returns how many were found, those already
// being deleted and those held back included: callers call it again until it finds none.
// Everything is listed from the cache, which holds these kinds filtered by the owner labels:
// cleaning up reads nothing from the API server.
func (c Cleaner) Cleanup(ctx context.Context, owner Owner) (int, error) {
	found, _, err := c.CleanupStep(ctx, owner)
	return found, err
}

// CleanupStep is one step of Cleanup; held reports that bindings or Placements were held
// back, to be deleted by a later step (callers look again: the events of the Placements'
// decisions and of the bindings' deletion usually come first).
//
// The order is what the governance-policy-propagator needs to put every replicated policy a
// binding override made enforce back to its root's remediation. It revisits a replica only
// when an event maps to it: a binding's deletion maps through the binding's Placement and
// that Placement's decisions, read when the event is handled (a Placement deleted in the
// same breath may be gone by then, and those replicas stay enforce); a change of decisions
// maps to the clusters that left them. So each Placement of the owner is first emptied
// (it selects no cluster) and its decisions awaited empty; then the bindings go; the
// Placements once the cache no longer shows a binding. A Placement whose decisions stay
// non-empty DrainTimeout after it was emptied (no placement controller answering) does not
// hold the bindings any longer.
func (c Cleaner) CleanupStep(ctx context.Context, owner Owner) (found int, held bool, err error) {
	selector := client.MatchingLabels(owner.Labels())
	s := &sweep{c: c}
	s.draining, err = c.drain(ctx, selector)
	if err != nil {
		s.errs = append(s.errs, err)
		s.draining = true // the bindings wait for a step that could read and write
	}
	for _, k := range Kinds {
		if !c.Unserved.Missing(k.Needs) {
			s.kind(ctx, k, selector)
		}
	}
	if s.views != nil {
		n, err := c.tearDown(ctx, s.views)
		s.found += n
		s.errs = append(s.errs, err)
	}
	copies := c.Copies
	if copies == nil {
		copies = c.Client
	}
	var configMaps corev1.ConfigMapList
	if err := copies.List(ctx, &configMaps, client.InNamespace(owner.Namespace), selector); err != nil {
		s.errs = append(s.errs, err)
	} else {
		n, err := c.deleteAll(ctx, &configMaps)
		s.found += n
		s.errs = append(s.errs, err)
	}
	return s.found, s.held, errors.Join(s.errs...)
}

// sweep is one CleanupStep in the making.
type sweep struct {
	c Cleaner
	// draining holds the bindings back; bindings is how many the owner has.
	draining bool
	bindings int
	// views are kept for the teardown, after the actions.
	views *viewv1beta1.ManagedClusterViewList
	found int
	held  bool
	errs  []error
}

// kind deletes the owner's objects of one kind, or holds them back.
func (s *sweep) kind(ctx context.Context, k Kind, selector client.MatchingLabels) {
	list := k.List()
	if err := s.c.Client.List(ctx, list, selector); err != nil {
		if !meta.IsNoMatchError(err) {
			s.errs = append(s.errs, err)
		}
		return
	}
	n := meta.LenList(list)
	hold := false
	switch l := list.(type) {
	case *viewv1beta1.ManagedClusterViewList:
		if s.c.Teardown != nil {
			s.views = l // after the actions
			return
		}
	case *policyv1.PlacementBindingList:
		s.bindings, hold = n, s.draining
	case *clusterv1beta1.PlacementList:
		hold = s.bindings > 0
	}
	if hold {
		s.found += n
		s.held = s.held || n > 0
		return
	}
	deleted, err := s.c.deleteAll(ctx, list)
	s.found += deleted
	s.errs = append(s.errs, err)
}

// DrainTimeout bounds how long the bindings of an emptied Placement wait for its decisions
// to be empty.
const DrainTimeout = 2 * time.Minute

// DrainedAnnotation on a Placement of the operator's is when Cleaner emptied it (RFC 3339).
const DrainedAnnotation = "ran.openshift.io/drained-at"

// decisionLabel names the Placement of a PlacementDecision.
const decisionLabel = "cluster.open-cluster-management.io/placement"

// drain empties the owner's Placements that still decide clusters, and reports whether one
// still does while the owner has bindings: those must wait. It reads nothing when the owner
// has no binding left.
func (c Cleaner) drain(ctx context.Context, selector client.MatchingLabels) (bool, error) {
	var pbs policyv1.PlacementBindingList
	if err := c.Client.List(ctx, &pbs, selector); err != nil || len(pbs.Items) == 0 {
		return false, err
	}
	var placements clusterv1beta1.PlacementList
	if err := c.Client.List(ctx, &placements, selector); err != nil {
		return false, err
	}
	now := c.now()
	waiting := false
	for i := range placements.Items {
		p := &placements.Items[i]
		if !p.DeletionTimestamp.IsZero() {
			continue
		}
		var pds clusterv1beta1.PlacementDecisionList
		if err := c.Client.List(ctx, &pds, client.InNamespace(p.Namespace), client.MatchingLabels{decisionLabel: p.Name}); err != nil {
			return false, err
		}
		if !decides(pds.Items) {
			continue
		}
		since, err := time.Parse(time.RFC3339, p.Annotations[DrainedAnnotation])
		if err != nil || !selectsNone(p) {
			if err := c.empty(ctx, p, now); err != nil {
				return false, err
			}
			waiting = true
			continue
		}
		waiting = waiting || now.Sub(since) < DrainTimeout
	}
	return waiting, nil
}

// empty makes a Placement select no cluster, noting when.
func (c Cleaner) empty(ctx context.Context, p *clusterv1beta1.Placement, now time.Time) error {
	patch := client.MergeFrom(p.DeepCopy())
	p.Spec.Predicates, p.Spec.NumberOfClusters = nil, ptr.To[int32](0)
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[DrainedAnnotation] = now.UTC().Format(time.RFC3339)
	if err := c.Client.Patch(ctx, p, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("emptying Placement %s/%s before its bindings go: %w", p.Namespace, p.Name, err)
	}
	return nil
}

// selectsNone reports whether a Placement selects no cluster.
func selectsNone(p *clusterv1beta1.Placement) bool {
	return p.Spec.NumberOfClusters != nil && *p.Spec.NumberOfClusters == 0
}

// decides reports whether decisions name a cluster.
func decides(pds []clusterv1beta1.PlacementDecision) bool {
	for _, pd := range pds {
		if len(pd.Status.Decisions) > 0 {
			return true
		}
	}
	return false
}

func (c Cleaner) now() time.Time {
	if c.Clock == nil {
		return time.Now()
	}
	return c.Clock.Now()
}

// tearDown removes from the spokes what the rollout's jobs set up (Teardown), then deletes
// their views. It runs once the rollout's actions were deleted, so that no setup action
// still unanswered creates an object after the teardown deleted it.
func (c Cleaner) tearDown(ctx context.Context, views *viewv1beta1.ManagedClusterViewList) (int, error) {
	if len(views.Items) == 0 {
		return 0, nil
	}
	if err := c.Teardown(ctx, views.Items); err != nil {
		return len(views.Items), fmt.Errorf("tearing down the spoke jobs' objects: %w", err)
	}
	return c.deleteAll(ctx, views)
}

func (c Cleaner) deleteAll(ctx context.Context, list client.ObjectList) (int, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok || !o.GetDeletionTimestamp().IsZero() {
			continue // already being deleted: its finalizers hold it
		}
		if err := c.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err))
		}
	}
	return len(items), errors.Join(errs...)
}

// Delete deletes those of objects (named, otherwise empty) that exist and were made for
// owner; those gone, or made by someone else, are skipped.
func (c Cleaner) Delete(ctx context.Context, owner Owner, objects ...client.Object) error {
	for _, o := range objects {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(o), o)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("reading %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		case !owner.Owns(o.GetLabels()):
			continue
		}
		uid := o.GetUID()
		if err := c.Client.Delete(ctx, o, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}
