package policies

import (
	"context"
	"fmt"
	"strings"
	"sync"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
)

// Enforced names what enforces a managed policy on one cluster: the replica the propagator
// makes in the cluster's namespace of the policy a rollout binds (the managed policy itself
// in Override mode, its enforce copy in Copy mode).
type Enforced struct {
	Cluster string
	// Namespace and Name are the bound policy's.
	Namespace, Name string
}

// EnforcedOn is what enforces the managed policy namespace/name for owner, in mode, on
// cluster.
func EnforcedOn(owner ownership.Owner, mode ranv1alpha1.EnforcementMode, namespace, name, cluster string) Enforced {
	if mode == ranv1alpha1.EnforcementOverride {
		return Enforced{Cluster: cluster, Namespace: namespace, Name: name}
	}
	return Enforced{Cluster: cluster, Namespace: owner.Namespace, Name: names.PolicyCopy(owner.Namespace, owner.Name, name)}
}

// Releases remembers, for each rollout, the replicas the hub showed no longer enforcing
// (Released), so that each is read from the API server until it is released, and no more:
// the operator does not cache replicas (tens of thousands on a large hub).
type Releases struct {
	mu       sync.Mutex
	released map[string]map[Enforced]bool
}

// Released returns which of asked the hub no longer enforces: the replica is gone, or its
// remediationAction is not enforce. It reads, through r, only the replicas not remembered as
// released for the rollout; what it remembers for the rollout is replaced by what asked
// holds, so that it stays the size of the rollout's current batch. A nil Releases remembers
// nothing.
func (c *Releases) Released(ctx context.Context, r client.Reader, rollout ownership.Owner, asked []Enforced) (map[Enforced]bool, error) {
	key := rollout.Namespace + "/" + rollout.Name
	known := c.get(key)
	out := make(map[Enforced]bool, len(asked))
	for _, e := range asked {
		if known[e] {
			out[e] = true
			continue
		}
		released, err := releasedOn(ctx, r, e)
		if err != nil {
			return nil, err
		}
		if released {
			out[e] = true
		}
	}
	c.set(key, out)
	return out, nil
}

// Forget drops what is remembered of a rollout (gone from the hub).
func (c *Releases) Forget(rollout ownership.Owner) {
	c.set(rollout.Namespace+"/"+rollout.Name, nil)
}

func (c *Releases) get(key string) map[Enforced]bool {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.released[key]
}

func (c *Releases) set(key string, released map[Enforced]bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(released) == 0 {
		delete(c.released, key)
		return
	}
	if c.released == nil {
		c.released = map[string]map[Enforced]bool{}
	}
	c.released[key] = released
}

// releasedOn reads the replica of e (listed by the propagator's root-policy label in the
// cluster's namespace, as the operator's grants allow): released when it is gone or not
// enforcing.
func releasedOn(ctx context.Context, r client.Reader, e Enforced) (bool, error) {
	var replicas policyv1.PolicyList
	if err := r.List(ctx, &replicas, client.InNamespace(e.Cluster),
		client.MatchingLabels{preview.LabelRootPolicy: e.Namespace + "." + e.Name}); err != nil {
		return false, fmt.Errorf("reading the replica of policy %s/%s on %s: %w", e.Namespace, e.Name, e.Cluster, err)
	}
	for _, replica := range replicas.Items {
		if strings.EqualFold(string(replica.Spec.RemediationAction), string(policyv1.Enforce)) {
			return false, nil
		}
	}
	return true, nil
}
