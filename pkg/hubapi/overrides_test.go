package hubapi

import "testing"

func TestHasBindingOverrides(t *testing.T) {
	cases := map[string]struct {
		doc  string
		want bool
	}{
		"ACM 2.9 and later": {doc: `{"components":{"schemas":{"io.open-cluster-management.policy.v1.PlacementBinding":
			{"properties":{"bindingOverrides":{"type":"object"},"subFilter":{"type":"string"},"placementRef":{}}}}}}`, want: true},
		"older, without overrides": {doc: `{"components":{"schemas":{"io.open-cluster-management.policy.v1.PlacementBinding":
			{"properties":{"placementRef":{},"subjects":{}}}}}}`},
		"overrides without subFilter": {doc: `{"components":{"schemas":{"io.open-cluster-management.policy.v1.PlacementBinding":
			{"properties":{"bindingOverrides":{}}}}}}`},
		"no PlacementBinding schema": {doc: `{"components":{"schemas":{}}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := hasBindingOverrides([]byte(tc.doc))
			if err != nil || got != tc.want {
				t.Fatalf("hasBindingOverrides = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	if _, err := hasBindingOverrides([]byte("not json")); err == nil {
		t.Fatal("a document that is not JSON is an error")
	}
}
