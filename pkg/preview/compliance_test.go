package preview_test

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/preview"
)

func rootPolicy(uid, resourceVersion string, compliance map[string]policyv1.ComplianceState) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgrade", UID: types.UID(uid), ResourceVersion: resourceVersion}}
	for _, c := range []string{"sno-1", "sno-2", "sno-3"} {
		if state, ok := compliance[c]; ok {
			p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: c, ComplianceState: state})
		}
	}
	return p
}

// same reports whether two maps are one map, not two equal ones.
func same(a, b map[string]policyv1.ComplianceState) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestComplianceCacheRebuildsOnlyWhatChanged(t *testing.T) {
	before := map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant, "sno-2": policyv1.NonCompliant}
	after := map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant, "sno-2": policyv1.Compliant, "sno-3": policyv1.Pending}
	var c preview.ComplianceCache

	first := c.Of(rootPolicy("u1", "10", before))
	if !maps.Equal(first, before) {
		t.Fatalf("first read: %v, want %v", first, before)
	}
	if again := c.Of(rootPolicy("u1", "10", before)); !same(first, again) {
		t.Errorf("the same resourceVersion read again built a new map")
	}
	changed := c.Of(rootPolicy("u1", "11", after))
	if !maps.Equal(changed, after) || same(first, changed) {
		t.Errorf("a new resourceVersion: %v, want %v in a new map", changed, after)
	}
	// A policy deleted and made again under the same name starts with the same
	// resourceVersion only by chance; its UID tells it apart.
	if other := c.Of(rootPolicy("u2", "11", before)); !maps.Equal(other, before) {
		t.Errorf("another policy's compliance: %v, want %v", other, before)
	}
	// Built rather than read, a policy has no resourceVersion: never cached, since a
	// change to it would not show.
	built := rootPolicy("", "", before)
	if a, b := c.Of(built), c.Of(built); same(a, b) {
		t.Errorf("a policy without a resourceVersion was cached")
	}
	var none *preview.ComplianceCache
	if got := none.Of(rootPolicy("u1", "11", after)); !maps.Equal(got, after) {
		t.Errorf("a nil cache: %v, want %v", got, after)
	}
}

func TestComplianceCacheStaysBounded(t *testing.T) {
	var c preview.ComplianceCache
	compliance := map[string]policyv1.ComplianceState{"sno-1": policyv1.Compliant}
	for i := range 1000 {
		if got := c.Of(rootPolicy(fmt.Sprint(i), "1", compliance)); !maps.Equal(got, compliance) {
			t.Fatalf("policy %d: %v", i, got)
		}
	}
	if n := c.Len(); n == 0 || n > 256 {
		t.Errorf("the cache holds %d policies after 1,000, want between 1 and 256", n)
	}
}
