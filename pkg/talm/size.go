package talm

import (
	"encoding/json"
	"strconv"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// sizeBound is at least Size(st), found without encoding the fleet-sized fields that make
// most of a large status: the status is encoded without them, and each of their entries is
// counted by the most its JSON can take. A rollout writes its status on many passes, most
// of them far enough within the budget that this bound settles it, without encoding every
// cluster's entries again each time.
func sizeBound(st *ranv1alpha1.ClusterGroupUpgradeStatus) int {
	rest := *st
	rest.RemediationPlan, rest.Clusters = nil, nil
	rest.Status.CurrentBatchRemediationProgress = nil
	n := 0
	if p := st.Precaching; p != nil {
		c := *p
		c.Status, c.Clusters = nil, nil
		rest.Precaching = &c
		n += statesBound("status", p.Status) + namesBound("clusters", p.Clusters)
	}
	if b := st.Backup; b != nil {
		c := *b
		c.Status, c.Clusters = nil, nil
		rest.Backup = &c
		n += statesBound("status", b.Status) + namesBound("clusters", b.Clusters)
	}
	n += Size(&rest)
	if len(st.RemediationPlan) > 0 {
		n += fieldBound("remediationPlan") + 2
		for _, batch := range st.RemediationPlan {
			n += max(namesBound("", batch), len("null")) + 1 // an empty batch is [], a nil one null
		}
	}
	n += clustersBound(st.Clusters) + progressBound(st.Status.CurrentBatchRemediationProgress)
	return n
}

// fieldBound is the most a field's name takes in an object, with its quotes, its colon and
// the comma before it.
func fieldBound(name string) int { return stringBound(name) + 2 }

// stringBound is the most a string takes in JSON: its bytes and quotes when none needs an
// escape (cluster names, states), six bytes a byte otherwise.
func stringBound(s string) int {
	for i := 0; i < len(s); i++ {
		if escaped[s[i]] {
			return 6*len(s) + 2
		}
	}
	return len(s) + 2
}

// escaped holds the bytes encoding/json may write otherwise than as themselves: control
// bytes, quotes, backslashes, <, > and & (HTML-safe), and every byte of a multi-byte
// character (U+2028 and U+2029 are escaped, invalid UTF-8 replaced).
var escaped = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&'
	}
	return t
}()

// namesBound bounds a field holding a list of strings (field empty: the list alone).
func namesBound(field string, names []string) int {
	if len(names) == 0 {
		return 0
	}
	n := 2
	if field != "" {
		n += fieldBound(field)
	}
	for _, s := range names {
		n += stringBound(s) + 1
	}
	return n
}

// statesBound bounds a field holding a map of strings.
func statesBound(field string, states map[string]string) int {
	if len(states) == 0 {
		return 0
	}
	n := fieldBound(field) + 2
	for k, v := range states {
		n += stringBound(k) + 1 + stringBound(v) + 1
	}
	return n
}

// clustersBound bounds status.clusters. An entry with a copy of a ManifestWork's status (at
// most ManifestWorkStatusLimit of them) is encoded.
func clustersBound(clusters []ranv1alpha1.ClusterFinalState) int {
	if len(clusters) == 0 {
		return 0
	}
	n := fieldBound("clusters") + 2
	for i := range clusters {
		c := &clusters[i]
		if w := c.CurrentManifestWork; w != nil && w.Status != nil {
			raw, err := json.Marshal(c)
			if err != nil {
				return 1 << 40 // not encodable: Size settles it
			}
			n += len(raw) + 1
			continue
		}
		n += 2 + fieldBound("name") + stringBound(c.Name) + fieldBound("state") + stringBound(c.State) + 1
		if p := c.CurrentPolicy; p != nil {
			n += fieldBound("currentPolicy") + 2 + fieldBound("name") + stringBound(p.Name) + fieldBound("status") + stringBound(p.Status)
		}
		if w := c.CurrentManifestWork; w != nil {
			n += fieldBound("currentManifestWork") + 2 + fieldBound("name") + stringBound(w.Name)
		}
	}
	return n
}

// progressBound bounds status.status.currentBatchRemediationProgress.
func progressBound(progress map[string]*ranv1alpha1.ClusterRemediationProgress) int {
	if len(progress) == 0 {
		return 0
	}
	n := fieldBound("currentBatchRemediationProgress") + 2
	for cluster, p := range progress {
		n += stringBound(cluster) + 1
		if p == nil {
			n += len("null") + 1
			continue
		}
		n += 2 + fieldBound("state") + stringBound(p.State) + 1
		if p.PolicyIndex != nil {
			n += fieldBound("policyIndex") + len(strconv.Itoa(*p.PolicyIndex))
		}
		if p.ManifestWorkIndex != nil {
			n += fieldBound("manifestWorkIndex") + len(strconv.Itoa(*p.ManifestWorkIndex))
		}
		if p.FirstCompliantAt != nil {
			n += fieldBound("firstCompliantAt") + len(`"2006-01-02T15:04:05Z"`) + 16 // RFC 3339, with room for an offset
		}
	}
	return n
}
