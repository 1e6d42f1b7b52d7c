package ztp

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzWaves reads arbitrary wave annotations: a policy is ordered exactly when its wave is
// an integer, reported apart otherwise, and the order is by wave, then name.
func FuzzWaves(f *testing.F) {
	for _, s := range []string{"10", "-1", "+3", " 5", "1e3", "0x10", "9223372036854775808", "", "ten", "١٢"} {
		f.Add(s, "100")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		policies := []Policy{
			{Name: "p-a", Namespace: "ztp", Inform: true, Annotations: map[string]string{WaveAnnotation: a}},
			{Name: "p-b", Namespace: "ztp", Inform: true, Annotations: map[string]string{WaveAnnotation: b}},
			{Name: "enforced", Namespace: "ztp", Annotations: map[string]string{WaveAnnotation: a}},
			{Name: "no-wave", Namespace: "ztp", Inform: true},
		}
		ordered, invalid := Waves(policies)
		if len(ordered)+len(invalid) != 2 {
			t.Fatalf("Waves(%q, %q) = %v, %v", a, b, ordered, invalid)
		}
		for _, p := range policies[:2] {
			_, err := strconv.Atoi(p.Annotations[WaveAnnotation])
			in := slices.ContainsFunc(ordered, func(w WavePolicy) bool { return w.Name == p.Name })
			if in != (err == nil) {
				t.Fatalf("wave %q of %s: ordered %v, invalid %v", p.Annotations[WaveAnnotation], p.Name, ordered, invalid)
			}
		}
		if !slices.IsSortedFunc(ordered, func(x, y WavePolicy) int { return cmp.Or(cmp.Compare(x.Wave, y.Wave), cmp.Compare(x.Name, y.Name)) }) {
			t.Fatalf("not in wave order: %v", ordered)
		}
		if u := Upgrade("sno-1", ordered); (u == nil) != (len(ordered) == 0) || u != nil && len(u.Spec.ManagedPolicies) != len(ordered) {
			t.Fatalf("Upgrade for %v: %+v", ordered, u)
		}
	})
}

// FuzzRootPolicy splits arbitrary root-policy labels: what it accepts joins back into the
// label, with a namespace that holds no dot and a name.
func FuzzRootPolicy(f *testing.F) {
	for _, s := range []string{"ztp-common.common-config", "a.b.c", ".b", "a.", "", "nodot"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, label string) {
		namespace, name, ok := RootPolicy(label)
		if !ok {
			return
		}
		if namespace+"."+name != label || namespace == "" || name == "" || strings.Contains(namespace, ".") {
			t.Fatalf("RootPolicy(%q) = %q, %q", label, namespace, name)
		}
	})
}
