package preview

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/blocking"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// blocking evaluates spec.blockingCRs: why they keep the rollout from starting, if they
// do, and the clusters cluster filtering leaves out (those a timed-out blocking
// ClusterGroupUpgrade did not complete).
func (g gatherer) blocking(ctx context.Context) (*rollout.Problem, map[string]bool, error) {
	if len(g.cgu.Spec.BlockingCRs) == 0 {
		return nil, nil, nil
	}
	filtering := g.cgu.Annotations[blocking.AnnotationClusterFiltering] == "true"
	var lookupErr error
	lookup := func(ref blocking.Ref) (blocking.Upgrade, bool) {
		other := &ranv1alpha1.ClusterGroupUpgrade{}
		if err := g.r.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, other); err != nil {
			if !apierrors.IsNotFound(err) {
				lookupErr = errors.Join(lookupErr, err)
			}
			return blocking.Upgrade{}, false
		}
		u := blocking.Upgrade{Ref: ref, State: other.Status.State, BlockingCRs: BlockingRefs(other)}
		if filtering {
			frozen, err := ReadFrozen(ctx, g.r, other)
			lookupErr = errors.Join(lookupErr, err)
			u.NotCompleted = frozen.NotCompleted()
		}
		return u, true
	}
	res := blocking.Evaluate(blocking.Input{
		Self:        blocking.Ref{Namespace: g.cgu.Namespace, Name: g.cgu.Name},
		BlockingCRs: BlockingRefs(g.cgu), Annotations: g.cgu.Annotations, Lookup: lookup,
	})
	if lookupErr != nil {
		return nil, nil, fmt.Errorf("reading blocking ClusterGroupUpgrades: %w", lookupErr)
	}
	out := make(map[string]bool, len(res.Excluded))
	for _, c := range res.Excluded {
		out[c] = true
	}
	return res.Problem, out, nil
}

// BlockingRefs returns spec.blockingCRs, an empty namespace meaning the CGU's own.
func BlockingRefs(cgu *ranv1alpha1.ClusterGroupUpgrade) []blocking.Ref {
	out := make([]blocking.Ref, 0, len(cgu.Spec.BlockingCRs))
	for _, b := range cgu.Spec.BlockingCRs {
		ns := b.Namespace
		if ns == "" {
			ns = cgu.Namespace
		}
		out = append(out, blocking.Ref{Namespace: ns, Name: b.Name})
	}
	return out
}
