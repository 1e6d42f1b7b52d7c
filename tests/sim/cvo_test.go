package sim

import (
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func desire(cv *configv1.ClusterVersion, version string) {
	cv.Spec.DesiredUpdate = &configv1.Update{Version: version}
}

func condition(cv *configv1.ClusterVersion, t configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
	for _, c := range cv.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return configv1.ClusterOperatorStatusCondition{}
}

func TestCVOCompletesAnUpdateAfterItsDuration(t *testing.T) {
	cv := NewClusterVersion("4.16.10", "stable-4.16", t0)
	desire(cv, "4.16.12")
	cvo := &CVO{Cluster: "c1", Behaviour: Behaviour{Duration: 10 * time.Minute}}
	steps := []struct {
		at          time.Duration
		wantAgain   time.Duration
		wantState   configv1.UpdateState
		progressing configv1.ConditionStatus
	}{
		{0, 10 * time.Minute, configv1.PartialUpdate, configv1.ConditionTrue},
		{4 * time.Minute, 6 * time.Minute, configv1.PartialUpdate, configv1.ConditionTrue},
		{10 * time.Minute, 0, configv1.CompletedUpdate, configv1.ConditionFalse},
		{time.Hour, 0, configv1.CompletedUpdate, configv1.ConditionFalse},
	}
	for _, step := range steps {
		again, err := cvo.StepClusterVersion(cv, t0.Add(step.at))
		h := cv.Status.History[0]
		if err != nil || again != step.wantAgain || h.State != step.wantState || h.Version != "4.16.12" {
			t.Fatalf("at %v: again=%v err=%v history[0]=%+v, want again=%v state=%s", step.at, again, err, h, step.wantAgain, step.wantState)
		}
		if c := condition(cv, configv1.OperatorProgressing); c.Status != step.progressing {
			t.Fatalf("at %v: Progressing = %+v, want %s", step.at, c, step.progressing)
		}
	}
	if n := len(cv.Status.History); n != 2 {
		t.Fatalf("history has %d entries, want 2: a completed update is not started again", n)
	}
	if done := cv.Status.History[0].CompletionTime; done == nil || !done.Time.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("completionTime = %v, want start + 10m", done)
	}
	if c := condition(cv, configv1.OperatorProgressing); c.Message != "Cluster version is 4.16.12" {
		t.Fatalf("Progressing message = %q", c.Message)
	}
}

func TestCVOFailureAndStall(t *testing.T) {
	cases := map[string]struct {
		b           Behaviour
		wantFailing configv1.ConditionStatus
	}{
		"fail":  {Behaviour{Duration: time.Minute, Fail: true}, configv1.ConditionTrue},
		"stall": {Behaviour{Duration: time.Minute, Stall: true}, configv1.ConditionFalse},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cv := NewClusterVersion("4.16.10", "stable-4.16", t0)
			desire(cv, "4.16.12")
			for _, at := range []time.Duration{0, time.Minute, 24 * time.Hour} {
				again, err := (&CVO{Cluster: "c1", Behaviour: tc.b}).StepClusterVersion(cv, t0.Add(at))
				if err != nil || again != 0 {
					t.Fatalf("at %v: again=%v err=%v", at, again, err)
				}
			}
			if cv.Status.History[0].State != configv1.PartialUpdate {
				t.Fatalf("state = %s, want Partial forever", cv.Status.History[0].State)
			}
			if c := condition(cv, "Failing"); c.Status != tc.wantFailing {
				t.Fatalf("Failing = %+v, want %s", c, tc.wantFailing)
			}
		})
	}
}

func TestCVOAcceptsOnlyOfferedVersions(t *testing.T) {
	offer := func(_ string, cv *configv1.ClusterVersion, _ time.Time) (Updates, error) {
		if cv.Status.Desired.Version == "4.16.10" {
			return Updates{Available: []configv1.Release{{Version: "4.16.11", Image: "img-11"}}}, nil
		}
		return Updates{}, nil
	}
	cv := NewClusterVersion("4.16.10", "stable-4.16", t0)
	cvo := &CVO{Cluster: "c1", Updates: offer}
	if _, err := cvo.StepClusterVersion(cv, t0); err != nil {
		t.Fatal(err)
	}
	if len(cv.Status.AvailableUpdates) != 1 {
		t.Fatalf("available updates = %v", cv.Status.AvailableUpdates)
	}

	desire(cv, "4.16.12")
	_, _ = cvo.StepClusterVersion(cv, t0)
	if c := condition(cv, "ReleaseAccepted"); c.Status != configv1.ConditionFalse || c.Reason != "VersionNotFound" {
		t.Fatalf("ReleaseAccepted = %+v, want False VersionNotFound", c)
	}
	if cv.Status.History[0].Version != "4.16.10" {
		t.Fatalf("an unknown version must not start an update: %+v", cv.Status.History[0])
	}

	desire(cv, "4.16.11")
	_, _ = cvo.StepClusterVersion(cv, t0)
	if h := cv.Status.History[0]; h.Version != "4.16.11" || h.Image != "img-11" {
		t.Fatalf("offered version: history[0] = %+v, want 4.16.11 with the offered image", h)
	}
}

func TestCVOAcceptsAReleasePublishedAfterItsLastFetch(t *testing.T) {
	published := false
	offer := func(string, *configv1.ClusterVersion, time.Time) (Updates, error) {
		u := Updates{Available: []configv1.Release{{Version: "4.16.11", Image: "img-11"}}}
		if published {
			u.Available = append(u.Available, configv1.Release{Version: "4.16.12", Image: "img-12"})
		}
		return u, nil
	}
	cv := NewClusterVersion("4.16.10", "stable-4.16", t0)
	cvo := &CVO{Cluster: "c1", Updates: offer, Behaviour: Behaviour{Duration: time.Hour}}
	if again, err := cvo.StepClusterVersion(cv, t0); err != nil || again != 0 {
		t.Fatalf("first fetch: again %s, error %v", again, err)
	}

	published = true
	desire(cv, "4.16.12")
	again, err := cvo.StepClusterVersion(cv, t0)
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(cv, "ReleaseAccepted"); c.Status != configv1.ConditionFalse || c.Reason != "VersionNotFound" {
		t.Fatalf("ReleaseAccepted = %+v, want False VersionNotFound: the version came out after the last fetch", c)
	}
	if again != RetryRefused {
		t.Fatalf("a refused update asks to be stepped again after %s, not %s", RetryRefused, again)
	}

	if again, err = cvo.StepClusterVersion(cv, t0.Add(again)); err != nil || again != time.Hour {
		t.Fatalf("retry: again %s (want the update's hour), error %v", again, err)
	}
	if h := cv.Status.History[0]; h.Version != "4.16.12" || h.Image != "img-12" || h.State != configv1.PartialUpdate {
		t.Fatalf("retried on the fetch since: history[0] = %+v, want 4.16.12 under way", h)
	}
	if c := condition(cv, "ReleaseAccepted"); c.Status != configv1.ConditionTrue {
		t.Fatalf("ReleaseAccepted = %+v, want True", c)
	}
}
