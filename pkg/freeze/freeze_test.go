package freeze

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
)

var t0 = time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)

func withAlerts(interval string, queries ...string) *ranv1alpha1.FleetFreeze {
	return &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: "noc", Generation: 2},
		Spec: ranv1alpha1.FleetFreezeSpec{Alerts: &ranv1alpha1.FreezeAlerts{Queries: queries, Interval: interval,
			Prometheus: ranv1alpha1.PrometheusSource{URL: "https://thanos.example"}}}}
}

func firingSample(cluster string, v float64) analysis.Sample {
	return analysis.Sample{Labels: map[string]string{"alertname": "KubeAPIDown", "cluster": cluster}, Value: v}
}

func TestDue(t *testing.T) {
	ff := withAlerts("30s", "up == 0")
	if !Due(ff, t0) {
		t.Fatal("never run: due")
	}
	at := metav1.NewTime(t0)
	ff.Status = ranv1alpha1.FleetFreezeStatus{ObservedGeneration: 2, CheckedAt: &at}
	if Due(ff, t0.Add(29*time.Second)) || !Due(ff, t0.Add(30*time.Second)) {
		t.Fatal("due only once the interval passed")
	}
	ff.Generation = 3
	if !Due(ff, t0.Add(time.Second)) {
		t.Fatal("a changed spec is due at once")
	}
	if Due(&ranv1alpha1.FleetFreeze{}, t0) {
		t.Fatal("no alert queries: never due")
	}
}

func TestDecide(t *testing.T) {
	queries := []string{`ALERTS{alertstate="firing",severity="critical"}`, `up{job="apiserver"} == 0`}
	cases := map[string]struct {
		facts       Facts
		frozen      bool
		reason      string
		message     string
		firing      int
		shownPrefix string
	}{
		"clear: no series, or a series at zero": {
			facts:  Facts{Ran: true, Answers: []Answer{{}, {Samples: []analysis.Sample{firingSample("sno-1", 0)}}}},
			reason: ranv1alpha1.ReasonAlertsClear, message: "No alert query fires",
		},
		"firing: the series named, at most five": {
			facts: Facts{Ran: true, Answers: []Answer{{Samples: []analysis.Sample{
				firingSample("sno-1", 1), firingSample("sno-2", 1), firingSample("sno-3", 1), firingSample("sno-4", 1), firingSample("sno-5", 1), firingSample("sno-6", 1),
			}}, {}}},
			frozen: true, reason: ranv1alpha1.ReasonAlertsFiring, firing: 1,
			message:     `ALERTS{alertstate="firing",severity="critical"} fires (6 series, {alertname="KubeAPIDown", cluster="sno-1"}`,
			shownPrefix: `{alertname="KubeAPIDown", cluster="sno-1"}`,
		},
		"the endpoint down: frozen, fail closed": {
			facts:  Facts{Ran: true, Answers: []Answer{{Err: "connection refused"}, {}}},
			frozen: true, reason: ranv1alpha1.ReasonQueryFailed, message: "The endpoint did not answer, so the fleet stays frozen: ",
		},
		"a query that does not parse: frozen until fixed": {
			facts:  Facts{Ran: true, Answers: []Answer{{}, {Invalid: "the query does not parse as PromQL: unexpected"}}},
			frozen: true, reason: ranv1alpha1.ReasonInvalidQuery, message: "The fleet stays frozen until the query is fixed: up{job=\"apiserver\"} == 0: the query does not parse",
		},
		"the Secret missing": {
			facts:  Facts{Ran: true, Unreachable: "Secret observability/thanos-token not found"},
			frozen: true, reason: ranv1alpha1.ReasonQueryFailed, message: "The alert queries could not run, so the fleet stays frozen: Secret observability/thanos-token not found",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.facts.Freeze, tc.facts.Now = withAlerts("", queries...), t0
			in := Decide(tc.facts)
			st := in.Status
			c := meta.FindStatusCondition(st.Conditions, ranv1alpha1.ConditionAlertsEvaluated)
			if st.AlertsFrozen != tc.frozen || c == nil || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Fatalf("frozen %v, condition %+v; want frozen %v, %s saying %q", st.AlertsFrozen, c, tc.frozen, tc.reason, tc.message)
			}
			if len(st.Firing) != tc.firing || (tc.firing > 0 && (st.Firing[0].Series != 6 || len(st.Firing[0].Shown) != 5 || st.Firing[0].Shown[0] != tc.shownPrefix)) {
				t.Fatalf("firing %+v", st.Firing)
			}
			expectRun(t, in)
			ff := tc.facts.Freeze
			ff.Status = st
			if got := Reason(ff); (got != "") != tc.frozen {
				t.Fatalf("Reason %q, frozen %v", got, tc.frozen)
			}
		})
	}
}

// expectRun checks that a pass that ran the queries dated the status and waits an interval.
func expectRun(t *testing.T, in Intents) {
	t.Helper()
	st := in.Status
	if in.Again != DefaultInterval || st.CheckedAt == nil || !st.CheckedAt.Equal(&metav1.Time{Time: t0}) || st.ObservedGeneration != 2 {
		t.Fatalf("again %v, checked %v, generation %d", in.Again, st.CheckedAt, st.ObservedGeneration)
	}
}

func TestDecideBetweenRunsKeepsTheStatus(t *testing.T) {
	ff := withAlerts("2m", "up == 0")
	at := metav1.NewTime(t0)
	ff.Status = ranv1alpha1.FleetFreezeStatus{ObservedGeneration: 2, CheckedAt: &at, AlertsFrozen: true}
	in := Decide(Facts{Freeze: ff, Now: t0.Add(30 * time.Second)})
	if !in.Status.AlertsFrozen || in.Again != 90*time.Second {
		t.Fatalf("status %+v again %v, want kept and 90s", in.Status, in.Again)
	}
	ff.Spec.Alerts = nil
	if in := Decide(Facts{Freeze: ff, Now: t0}); in.Status.AlertsFrozen || in.Status.CheckedAt != nil || in.Again != 0 {
		t.Fatalf("without alert queries: %+v, want an empty status and no run", in)
	}
}

func TestSilencedAlertsDoNotFire(t *testing.T) {
	critical := func(cluster string) analysis.Sample {
		s := firingSample(cluster, 1)
		s.Labels["severity"] = "critical"
		return s
	}
	cgus := []ranv1alpha1.ClusterGroupUpgrade{{
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{SilenceAlerts: &ranv1alpha1.SilenceAlerts{Enabled: true}},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{Silences: &ranv1alpha1.SilencesStatus{
			Clusters: []ranv1alpha1.ClusterSilence{{Cluster: "sno-1", ID: "a"}}}},
	}, {
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{SilenceAlerts: &ranv1alpha1.SilenceAlerts{Enabled: true, Severities: []string{"info"}}},
		Status: ranv1alpha1.ClusterGroupUpgradeStatus{Silences: &ranv1alpha1.SilencesStatus{
			Clusters: []ranv1alpha1.ClusterSilence{{Cluster: "sno-2", ID: "b"}}}},
	}}
	silenced := SilencedClusters(cgus)
	ff := withAlerts("30s", `ALERTS{alertstate="firing",severity="critical"}`)

	// sno-1's critical alert is silenced: clear.
	in := Decide(Facts{Freeze: ff, Now: t0, Ran: true, Answers: []Answer{{Samples: []analysis.Sample{critical("sno-1")}}}, Silenced: silenced})
	if in.Status.AlertsFrozen {
		t.Fatalf("a silenced alert froze the fleet: %+v", in.Status)
	}
	// sno-2's silence covers only info: its critical alert fires, and so does sno-3's.
	in = Decide(Facts{Freeze: ff, Now: t0, Ran: true, Answers: []Answer{{Samples: []analysis.Sample{critical("sno-1"), critical("sno-2"), critical("sno-3")}}}, Silenced: silenced})
	if !in.Status.AlertsFrozen || len(in.Status.Firing) != 1 || in.Status.Firing[0].Series != 2 ||
		!strings.Contains(strings.Join(in.Status.Firing[0].Shown, " "), `cluster="sno-2"`) {
		t.Fatalf("status %+v, want sno-2 and sno-3 firing, not sno-1", in.Status)
	}
}
