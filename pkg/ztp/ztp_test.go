package ztp

import (
	"fmt"
	"testing"
)

func TestWavesOrderByWaveThenName(t *testing.T) {
	policies := []Policy{
		{Name: "du-config", Namespace: "ztp", Inform: true, Annotations: map[string]string{WaveAnnotation: "10"}},
		{Name: "common-sub", Namespace: "ztp", Inform: true, Annotations: map[string]string{WaveAnnotation: "2"}},
		{Name: "common-config", Namespace: "ztp", Inform: true, Annotations: map[string]string{WaveAnnotation: "2"}},
		{Name: "no-wave", Namespace: "ztp", Inform: true},
		{Name: "enforced", Namespace: "ztp", Annotations: map[string]string{WaveAnnotation: "1"}},
		{Name: "bad-wave", Namespace: "ztp", Inform: true, Annotations: map[string]string{WaveAnnotation: "first"}},
	}
	ordered, invalid := Waves(policies)
	var got []string
	for _, w := range ordered {
		got = append(got, fmt.Sprintf("%d:%s", w.Wave, w.Name))
	}
	if fmt.Sprint(got) != "[2:common-config 2:common-sub 10:du-config]" {
		t.Fatalf("ordered %v, want wave then name, inform policies with a wave only", got)
	}
	if fmt.Sprint(invalid) != `[ztp/bad-wave (ran.openshift.io/ztp-deploy-wave: "first")]` {
		t.Fatalf("invalid %v", invalid)
	}
}

func TestUpgrade(t *testing.T) {
	if Upgrade("sno-1", nil) != nil {
		t.Fatal("a cluster without wave policies got a ClusterGroupUpgrade")
	}
	cgu := Upgrade("sno-1", []WavePolicy{{Name: "a", Wave: 1}, {Name: "b", Wave: 2}})
	s := cgu.Spec
	switch {
	case cgu.Name != "sno-1" || cgu.Namespace != Namespace:
		t.Fatalf("named %s/%s, want %s/sno-1", cgu.Namespace, cgu.Name, Namespace)
	case fmt.Sprint(s.Clusters) != "[sno-1]" || fmt.Sprint(s.ManagedPolicies) != "[a b]":
		t.Fatalf("clusters %v policies %v", s.Clusters, s.ManagedPolicies)
	case s.Enable == nil || !*s.Enable || s.RemediationStrategy.MaxConcurrency != 1:
		t.Fatalf("enable %v maxConcurrency %d, want enabled one at a time", s.Enable, s.RemediationStrategy.MaxConcurrency)
	}
	before, after := s.Actions.BeforeEnable.AddClusterLabels, s.Actions.AfterCompletion
	if _, ok := before[RunningLabel]; !ok {
		t.Fatalf("beforeEnable %v, want %s added", before, RunningLabel)
	}
	if _, ok := after.AddClusterLabels[DoneLabel]; !ok || fmt.Sprint(after.RemoveClusterLabels) != "[ztp-running]" {
		t.Fatalf("afterCompletion %+v, want %s added and %s removed", after, DoneLabel, RunningLabel)
	}
}
