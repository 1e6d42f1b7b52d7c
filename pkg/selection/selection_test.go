package selection

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var fleet = []Cluster{
	{Name: "sno-4", Labels: map[string]string{"region": "east", "group-du-sno": ""}},
	{Name: "sno-1", Labels: map[string]string{"region": "west", "group-du-sno": ""}},
	{Name: "sno-3", Labels: map[string]string{"region": "east"}},
	{Name: "sno-2", Labels: map[string]string{"region": "west", "ring": "canary"}},
	{Name: "hub", Labels: map[string]string{"local-cluster": "true"}},
}

func TestSelect(t *testing.T) {
	cases := map[string]struct {
		in              Input
		wantSelected    []string
		wantUnknown     []string
		wantUnreachable []string
	}{
		"named clusters keep their order": {
			in:           Input{Clusters: []string{"sno-3", "sno-1"}},
			wantSelected: []string{"sno-3", "sno-1"},
		},
		"unknown named clusters are reported, not selected": {
			in:           Input{Clusters: []string{"sno-1", "gone-1", "sno-2", "gone-2"}},
			wantSelected: []string{"sno-1", "sno-2"},
			wantUnknown:  []string{"gone-1", "gone-2"},
		},
		"a label selector selects by name after the named clusters": {
			in: Input{
				Clusters:       []string{"sno-3"},
				LabelSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"region": "east"}}},
			},
			wantSelected: []string{"sno-3", "sno-4"},
		},
		"label selectors are ORed, each in turn": {
			in: Input{LabelSelectors: []metav1.LabelSelector{
				{MatchLabels: map[string]string{"region": "west"}},
				{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"east"}}}},
			}},
			wantSelected: []string{"sno-1", "sno-2", "sno-3", "sno-4"},
		},
		"deprecated selectors come before label selectors": {
			in: Input{
				ClusterSelector: []string{"ring=canary"},
				LabelSelectors:  []metav1.LabelSelector{{MatchLabels: map[string]string{"region": "west"}}},
			},
			wantSelected: []string{"sno-2", "sno-1"},
		},
		"a bare key matches the empty value, as TALM reads it": {
			in:           Input{ClusterSelector: []string{"group-du-sno"}},
			wantSelected: []string{"sno-1", "sno-4"},
		},
		"key= is the same as a bare key": {
			in:           Input{ClusterSelector: []string{"group-du-sno="}},
			wantSelected: []string{"sno-1", "sno-4"},
		},
		"a bare key does not match other values": {
			in: Input{ClusterSelector: []string{"region"}},
		},
		"nothing asked, nothing selected": {
			in: Input{},
		},
		"a cluster named and matched appears once": {
			in: Input{
				Clusters:        []string{"sno-2", "sno-2"},
				ClusterSelector: []string{"region=west"},
			},
			wantSelected: []string{"sno-2", "sno-1"},
		},
		"tenancy: selectors match reachable clusters only": {
			in: Input{
				LabelSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"region": "west"}}},
				Reachable:      map[string]bool{"sno-2": true, "sno-3": true},
			},
			wantSelected: []string{"sno-2"},
		},
		"tenancy: a named cluster outside the reachable ones is reported, after unknown ones": {
			in: Input{
				Clusters:  []string{"sno-1", "gone", "sno-3", "hub"},
				Reachable: map[string]bool{"sno-3": true},
			},
			wantSelected:    []string{"sno-3"},
			wantUnknown:     []string{"gone"},
			wantUnreachable: []string{"sno-1", "hub"},
		},
		"tenancy: nothing reachable selects nothing": {
			in: Input{
				Clusters:       []string{"sno-1"},
				LabelSelectors: []metav1.LabelSelector{{}},
				Reachable:      map[string]bool{},
			},
			wantUnreachable: []string{"sno-1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Known = fleet
			got, err := Select(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Selected, tc.wantSelected) || !slices.Equal(got.Unknown, tc.wantUnknown) ||
				!slices.Equal(got.Unreachable, tc.wantUnreachable) {
				t.Fatalf("got selected %v unknown %v unreachable %v, want %v, %v and %v", got.Selected, got.Unknown,
					got.Unreachable, tc.wantSelected, tc.wantUnknown, tc.wantUnreachable)
			}
		})
	}
}

func TestSelectRejectsMalformedSelectors(t *testing.T) {
	cases := map[string]struct {
		in   Input
		want string
	}{
		"two equals signs": {Input{ClusterSelector: []string{"a=b=c"}}, `spec.clusterSelector[0] "a=b=c": more than one "="`},
		"empty key":        {Input{ClusterSelector: []string{"ok", "=x"}}, `spec.clusterSelector[1] "=x"`},
		"invalid key":      {Input{ClusterSelector: []string{"not a key"}}, `spec.clusterSelector[0] "not a key"`},
		"bad operator": {Input{LabelSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "a", Operator: "Near", Values: []string{"b"}},
		}}}}, "spec.clusterLabelSelectors[0]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.in.Known = fleet
			got, err := Select(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if len(got.Selected) != 0 {
				t.Fatalf("selected %v despite the error", got.Selected)
			}
		})
	}
}

func FuzzParseClusterSelector(f *testing.F) {
	for _, seed := range []string{"a=b", "a", "a=", "=", "a=b=c", "example.com/key=value", "", " a = b ", "a=\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseClusterSelector(text)
		if err != nil {
			return
		}
		key, value, _ := strings.Cut(text, "=")
		if !s.Matches(mapLabels{key: value}) {
			t.Fatalf("selector %q from %q does not match its own key and value", s, text)
		}
	})
}

type mapLabels map[string]string

func (m mapLabels) Has(k string) bool              { _, ok := m[k]; return ok }
func (m mapLabels) Get(k string) string            { return m[k] }
func (m mapLabels) Lookup(k string) (string, bool) { v, ok := m[k]; return v, ok }
