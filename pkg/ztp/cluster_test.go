package ztp

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

func TestNext(t *testing.T) {
	now := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	const settle = time.Minute
	settled := Cluster{Name: "sno-1", Available: true, AvailableSince: now.Add(-2 * time.Minute)}
	with := func(c Cluster, labels ...string) Cluster {
		c.Labels = map[string]string{}
		for _, l := range labels {
			c.Labels[l] = ""
		}
		return c
	}
	upgrade := func(state ranv1alpha1.UpgradeState, total int) *ranv1alpha1.ClusterGroupUpgrade {
		cgu := Upgrade("sno-1", []WavePolicy{{Name: "a", Wave: 1}})
		cgu.Status.State, cgu.Status.Counts.Total = state, total
		return cgu
	}
	deleting := upgrade(ranv1alpha1.StateCompleted, 1)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}

	cases := map[string]struct {
		cluster Cluster
		cgu     *ranv1alpha1.ClusterGroupUpgrade
		want    Step
		wait    time.Duration
	}{
		"settled, no upgrade":       {cluster: settled, want: Start},
		"running label, no upgrade": {cluster: with(settled, RunningLabel), want: Start},
		"just available": {cluster: Cluster{Name: "sno-1", Available: true, AvailableSince: now.Add(-20 * time.Second)},
			want: Settle, wait: 40 * time.Second},
		"available in the future (skew)": {cluster: Cluster{Name: "sno-1", Available: true, AvailableSince: now.Add(time.Hour)},
			want: Settle, wait: settle},
		"not available": {cluster: Cluster{Name: "sno-1", AvailableSince: now.Add(-time.Hour)}, want: Idle},
		"done":          {cluster: with(settled, DoneLabel), want: Idle},
		"done, completed upgrade": {cluster: with(settled, DoneLabel),
			cgu: upgrade(ranv1alpha1.StateCompleted, 1), want: Idle},
		"hub by name": {cluster: Cluster{Name: HubName, Available: true}, want: Idle},
		"hub by label": {cluster: Cluster{Name: "hub", Labels: map[string]string{HubLabel: "true"}, Available: true},
			want: Idle},
		"upgrade running":  {cluster: with(settled, RunningLabel), cgu: upgrade(ranv1alpha1.StateNotCompleted, 1), want: Idle},
		"upgrade starting": {cluster: settled, cgu: upgrade("", 0), want: Idle},
		"completed, labels not seen yet": {cluster: with(settled, RunningLabel),
			cgu: upgrade(ranv1alpha1.StateCompleted, 1), want: Idle},
		"timed out":            {cluster: with(settled, RunningLabel), cgu: upgrade(ranv1alpha1.StateTimedOut, 1), want: Idle},
		"done label removed":   {cluster: settled, cgu: upgrade(ranv1alpha1.StateCompleted, 1), want: Rerun},
		"completed without it": {cluster: settled, cgu: upgrade(ranv1alpha1.StateCompleted, 0), want: Skipped},
		"done by an upgrade that did nothing else": {cluster: with(settled, DoneLabel),
			cgu: upgrade(ranv1alpha1.StateCompleted, 0), want: Skipped},
		"upgrade being deleted": {cluster: settled, cgu: deleting, want: Idle},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			step, wait := Next(tc.cluster, tc.cgu, now, settle)
			if step != tc.want || wait != tc.wait {
				t.Fatalf("got %s after %s, want %s after %s", step, wait, tc.want, tc.wait)
			}
		})
	}
}

func TestSettleLeft(t *testing.T) {
	since := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		now  time.Time
		want time.Duration
	}{
		"at the transition": {since, time.Minute},
		"half way":          {since.Add(30 * time.Second), 30 * time.Second},
		"exactly over":      {since.Add(time.Minute), 0},
		"long over":         {since.Add(time.Hour), 0},
		"clock behind":      {since.Add(-time.Hour), time.Minute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := SettleLeft(tc.now, since, time.Minute); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
	if got := SettleLeft(since, since, 0); got != 0 {
		t.Fatalf("no settle period: got %s, want 0", got)
	}
}

func TestFromReplicated(t *testing.T) {
	replica := func(root string, action policyv1.RemediationAction) *policyv1.Policy {
		p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "sno-1", Name: root,
			Labels:      map[string]string{RootPolicyLabel: root},
			Annotations: map[string]string{WaveAnnotation: "2"}}}
		p.Spec.RemediationAction = action
		return p
	}
	cases := map[string]struct {
		in     *policyv1.Policy
		want   Policy
		wantOK bool
	}{
		"inform": {replica("ztp-common.common-config", "inform"),
			Policy{Name: "common-config", Namespace: "ztp-common", Inform: true}, true},
		"Inform, as written by hand": {replica("ztp-common.common-config", "Inform"),
			Policy{Name: "common-config", Namespace: "ztp-common", Inform: true}, true},
		"enforce":              {replica("ztp.du.v2", "enforce"), Policy{Name: "du.v2", Namespace: "ztp"}, true},
		"no root-policy label": {&policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, Policy{}, false},
		"label without a dot":  {replica("orphan", "inform"), Policy{}, false},
		"empty name":           {replica("ztp.", "inform"), Policy{}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := FromReplicated(tc.in)
			if ok != tc.wantOK || got.Name != tc.want.Name || got.Namespace != tc.want.Namespace || got.Inform != tc.want.Inform {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, tc.want, tc.wantOK)
			}
			if ok && got.Annotations[WaveAnnotation] != "2" {
				t.Fatalf("annotations %v not carried", got.Annotations)
			}
		})
	}
}

func TestIsHub(t *testing.T) {
	cases := map[string]struct {
		name   string
		labels map[string]string
		want   bool
	}{
		"named local-cluster":    {"local-cluster", nil, true},
		"labelled local-cluster": {"hub-a", map[string]string{HubLabel: "true"}, true},
		"label false":            {"sno-1", map[string]string{HubLabel: "false"}, false},
		"spoke":                  {"sno-1", map[string]string{"name": "sno-1"}, false},
	}
	for name, tc := range cases {
		if got := IsHub(tc.name, tc.labels); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
}
