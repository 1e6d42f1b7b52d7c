package preview

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

// ComplianceCache remembers each root policy's Compliance for the resourceVersion it was read
// at. A started rollout reads its managed policies' compliance at every pass; the status of a
// policy placed on a thousand clusters changes a few times a second across a rollout's
// policies, so most passes would otherwise rebuild maps of a thousand entries unchanged.
// The maps it returns are shared: read them, never write them. The zero value is ready; a
// nil cache computes every map anew.
type ComplianceCache struct {
	mu      sync.Mutex
	entries map[types.UID]complianceEntry
}

type complianceEntry struct {
	resourceVersion string
	compliance      map[string]policyv1.ComplianceState
}

// complianceCacheSize is the most policies the cache remembers; past it, it starts afresh.
// The entries of deleted policies are never used again and go then.
const complianceCacheSize = 256

// Of returns Compliance(p), from the cache when p's resourceVersion is the one remembered. A
// policy without a UID or resourceVersion (built, not read) is never cached.
func (c *ComplianceCache) Of(p *policyv1.Policy) map[string]policyv1.ComplianceState {
	if c == nil || p.UID == "" || p.ResourceVersion == "" {
		return Compliance(p)
	}
	c.mu.Lock()
	e, ok := c.entries[p.UID]
	c.mu.Unlock()
	if ok && e.resourceVersion == p.ResourceVersion {
		return e.compliance
	}
	m := Compliance(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= complianceCacheSize {
		c.entries = map[types.UID]complianceEntry{}
	}
	c.entries[p.UID] = complianceEntry{resourceVersion: p.ResourceVersion, compliance: m}
	return m
}

// Len is how many policies the cache remembers.
func (c *ComplianceCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
