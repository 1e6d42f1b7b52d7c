package cgu

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/silences"
)

func TestSilencesNeedAnAlertmanager(t *testing.T) {
	f := fresh()
	f.Upgrade.Spec.SilenceAlerts = &ranv1alpha1.SilenceAlerts{Enabled: true}
	in := Decide(f, Config{}, decideAt)
	if in.StartedNow || in.Invalid == nil || in.Invalid.Reason != ranv1alpha1.ReasonNoAlertmanager {
		t.Fatalf("started %v, invalid %+v: want it refused for want of an Alertmanager", in.StartedNow, in.Invalid)
	}
	if c := condition(in.Status, ranv1alpha1.ConditionValidated); c == nil || c.Status != metav1.ConditionFalse || c.Reason != ranv1alpha1.ReasonNoAlertmanager {
		t.Fatalf("Validated = %+v", c)
	}
	f.Upgrade.Spec.SilenceAlerts.Enabled = false
	if in := Decide(f, Config{}, decideAt); !in.StartedNow {
		t.Fatalf("a rollout with silenceAlerts off did not start: %+v", in.Invalid)
	}
}

func TestSilencesFollowTheUpgradingClusters(t *testing.T) {
	cfg := Config{Alertmanager: "http://alertmanager:9093"}
	f := fresh()
	f.Upgrade.Spec.SilenceAlerts = &ranv1alpha1.SilenceAlerts{Enabled: true, Severities: []string{"critical", "page.me"}}
	in := Decide(f, cfg, decideAt)
	if len(in.Silences.Make) != 2 || len(in.Silences.Expire) != 0 {
		t.Fatalf("silences %+v, want one made for each of c1 and c2", in.Silences)
	}
	deadline := in.Decision.BatchDeadline
	checkSilence(t, in.Silences.Make["c1"], deadline)

	// The silences made (as apply records them), c1 complies: its silence is expired, c2's kept.
	in.Status.Silences = SilencesStatus(nil, map[string]string{"c1": "id-1", "c2": "id-2"},
		map[string]time.Time{"c1": deadline, "c2": deadline}, "")
	f = next(t, f, in, policy("upgrade", []string{"c1"}, "c1", "c2", "c3"))
	in = Decide(f, cfg, decideAt.Add(time.Minute))
	if len(in.Silences.Make) != 0 || len(in.Silences.Expire) != 1 || in.Silences.Expire[0].ID != "id-1" ||
		len(in.Silences.Keep) != 1 || in.Silences.Keep[0].Cluster != "c2" {
		t.Fatalf("silences %+v, want c1's expired and c2's kept", in.Silences)
	}

	// Turned off mid-rollout: every silence goes.
	f.Upgrade.Spec.SilenceAlerts.Enabled = false
	in = Decide(f, cfg, decideAt.Add(time.Minute))
	if len(in.Silences.Expire) != 2 || len(in.Silences.Make) != 0 {
		t.Fatalf("silences %+v, want both expired", in.Silences)
	}
}

func TestSilencesStatusIsBoundedAndSorted(t *testing.T) {
	made, ends := map[string]string{}, map[string]time.Time{}
	for i := range ranv1alpha1.ClusterDetailLimit + 5 {
		c := "spoke-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		made[c], ends[c] = "id", decideAt
	}
	st := SilencesStatus(nil, made, ends, "")
	if len(st.Clusters) != ranv1alpha1.ClusterDetailLimit || st.Clusters[0].Cluster > st.Clusters[1].Cluster {
		t.Fatalf("%d clusters, first %q %q: want the limit, sorted", len(st.Clusters), st.Clusters[0].Cluster, st.Clusters[1].Cluster)
	}
	if SilencesStatus(nil, nil, nil, "") != nil {
		t.Fatal("no silence and no problem should leave no status")
	}
	if st := SilencesStatus(nil, nil, nil, "the Alertmanager answered 500"); st == nil || st.Error == "" {
		t.Fatal("a problem must be shown")
	}
}

// checkSilence checks c1's silence: its matchers, times and maker.
func checkSilence(t *testing.T, got silences.Silence, deadline time.Time) {
	t.Helper()
	want := []silences.Matcher{{Name: "cluster", Value: "c1", IsEqual: true}, {Name: "severity", Value: `critical|page\.me`, IsRegex: true, IsEqual: true}}
	if !got.EndsAt.Equal(deadline) || !got.StartsAt.Equal(decideAt) || got.CreatedBy != SilenceCreatedBy || !slices.Equal(got.Matchers, want) {
		t.Fatalf("silence of c1 = %+v, want %v until %v", got, want, deadline)
	}
}
