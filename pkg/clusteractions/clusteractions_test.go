package clusteractions

import (
	"maps"
	"strings"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestApply(t *testing.T) {
	cases := map[string]struct {
		labels, annotations         map[string]string
		actions                     ranv1alpha1.ClusterActions
		wantLabels, wantAnnotations map[string]string
		changed                     bool
	}{
		"nothing to do": {
			labels: map[string]string{"a": "1"}, wantLabels: map[string]string{"a": "1"}, wantAnnotations: map[string]string{},
		},
		"add and remove labels": {
			labels:     map[string]string{"ztp-running": "", "keep": "x"},
			actions:    ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}, RemoveClusterLabels: []string{"ztp-running"}},
			wantLabels: map[string]string{"ztp-done": "", "keep": "x"}, wantAnnotations: map[string]string{}, changed: true,
		},
		"deprecated delete ignores the value": {
			labels:     map[string]string{"vendor": "OpenShift"},
			actions:    ranv1alpha1.ClusterActions{DeleteClusterLabels: map[string]string{"vendor": "auto-detect"}},
			wantLabels: map[string]string{}, wantAnnotations: map[string]string{}, changed: true,
		},
		"a removal then an addition replaces": {
			labels:     map[string]string{"stage": "old"},
			actions:    ranv1alpha1.ClusterActions{RemoveClusterLabels: []string{"stage"}, AddClusterLabels: map[string]ranv1alpha1.LabelValue{"stage": "new"}},
			wantLabels: map[string]string{"stage": "new"}, wantAnnotations: map[string]string{}, changed: true,
		},
		"already applied changes nothing": {
			labels:     map[string]string{"done": "yes"},
			actions:    ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"done": "yes"}, RemoveClusterLabels: []string{"absent"}},
			wantLabels: map[string]string{"done": "yes"}, wantAnnotations: map[string]string{},
		},
		"annotations": {
			annotations: map[string]string{"old": "1"},
			actions:     ranv1alpha1.ClusterActions{AddClusterAnnotations: map[string]string{"new": "2"}, RemoveClusterAnnotations: []string{"old"}},
			wantLabels:  map[string]string{}, wantAnnotations: map[string]string{"new": "2"}, changed: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := maps.Clone(tc.labels)
			labels, annotations, changed := Apply(tc.labels, tc.annotations, tc.actions)
			if !maps.Equal(labels, tc.wantLabels) || !maps.Equal(annotations, tc.wantAnnotations) || changed != tc.changed {
				t.Fatalf("got %v %v changed %v, want %v %v changed %v", labels, annotations, changed, tc.wantLabels, tc.wantAnnotations, tc.changed)
			}
			if !maps.Equal(before, tc.labels) {
				t.Fatalf("input labels modified: %v", tc.labels)
			}
		})
	}
}

func TestEmpty(t *testing.T) {
	if !Empty(ranv1alpha1.ClusterActions{}) || Empty(ranv1alpha1.ClusterActions{RemoveClusterAnnotations: []string{"x"}}) {
		t.Fatal("Empty is wrong")
	}
}

// Invalid names every key and value a ManagedCluster would refuse, and nothing else.
func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		actions ranv1alpha1.ClusterActions
		want    []string
	}{
		{name: "what ZTP writes", actions: ranv1alpha1.ClusterActions{
			AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": "", "example.com/wave": "2_a.b"}, RemoveClusterLabels: []string{"ztp-running"},
			AddClusterAnnotations: map[string]string{"Example.com/Note": "any text / at all"}}},
		{name: "a key with a space", actions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp done": ""}},
			want: []string{`addClusterLabels key "ztp done": name part must consist of alphanumeric characters`}},
		{name: "a value with a slash", actions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"v": "4.18/ok"}},
			want: []string{`addClusterLabels value "4.18/ok": a valid label must be`}},
		{name: "keys to delete and remove", actions: ranv1alpha1.ClusterActions{DeleteClusterLabels: map[string]string{"-a": ""},
			RemoveClusterLabels: []string{"b/c/d"}, RemoveClusterAnnotations: []string{""}},
			want: []string{`deleteClusterLabels key "-a": `, `; removeClusterLabels key "b/c/d": `, `; removeClusterAnnotations key "": name part must be non-empty`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Invalid(tc.actions)
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("Invalid = %q, want nothing", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Invalid = %q, want it to say %q", got, w)
				}
			}
		})
	}
}
