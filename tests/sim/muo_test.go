package sim

import (
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// muoSpoke is a spoke's store with its cluster-version operator, cluster operators and
// managed-upgrade-operator, stepped in a spoke's order.
type muoSpoke struct {
	store  *configpolicy.MapStore
	firing *alerts
	cvo    *CVO
	cos    *ClusterOperators
	muo    *ManagedUpgradeOperator
}

func newMUOSpoke(t *testing.T, cvo Behaviour, muo ManagedUpgradeBehaviour) *muoSpoke {
	t.Helper()
	s := &muoSpoke{store: newSpokeStore(t, "4.16.10"), firing: &alerts{}, cvo: &CVO{Cluster: "c1", Behaviour: cvo}}
	s.cos = NewClusterOperators(SpokeSpec{Behaviour: cvo})
	s.muo = newManagedUpgradeOperator(muo, s.firing)
	s.round(t, opsT0)
	return s
}

func (s *muoSpoke) round(t *testing.T, now time.Time) time.Duration {
	t.Helper()
	return round(t, s.store, now, s.cvo, s.firing, s.cos, s.muo)
}

func (s *muoSpoke) createUpgradeConfig(t *testing.T, desired UpgradeDesired, at time.Time) {
	t.Helper()
	if err := s.store.Create(NewUpgradeConfig(desired, at)); err != nil {
		t.Fatal(err)
	}
}

func (s *muoSpoke) history(t *testing.T) UpgradeHistory {
	t.Helper()
	obj, err := s.store.Get(UpgradeConfigGVK, ManagedUpgradeNamespace, UpgradeConfigName)
	if err != nil {
		t.Fatal(err)
	}
	var status UpgradeConfigStatus
	if err := decodeField(obj, "status", &status); err != nil {
		t.Fatal(err)
	}
	if len(status.History) == 0 {
		t.Fatal("no history")
	}
	return status.History[0]
}

func upgradeCondition(h UpgradeHistory, typ string) UpgradeCondition {
	for _, c := range h.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return UpgradeCondition{}
}

func TestManagedUpgradeGoesThroughItsPhases(t *testing.T) {
	s := newMUOSpoke(t, Behaviour{Duration: 30 * time.Minute}, ManagedUpgradeBehaviour{})
	at := opsT0.Add(time.Hour)
	s.createUpgradeConfig(t, UpgradeDesired{Version: "4.16.12", Channel: "fast-4.16"}, at)

	if again := s.round(t, opsT0); again != time.Hour || s.history(t).Phase != UpgradePhasePending {
		t.Fatalf("before upgradeAt: again=%v phase=%s, want 1h Pending", again, s.history(t).Phase)
	}
	if cv := storedClusterVersion(t, s.store); cv.Spec.DesiredUpdate != nil {
		t.Fatalf("Pending must not touch the ClusterVersion: %+v", cv.Spec.DesiredUpdate)
	}

	if again := s.round(t, at); again != reactDelay {
		t.Fatalf("commencing: again=%v, want the react delay", again)
	}
	expectCommenced(t, s, at)

	s.round(t, at) // the cluster-version operator starts the update
	if again := s.round(t, at.Add(10*time.Minute)); s.history(t).Phase != UpgradePhaseUpgrading || again <= 0 {
		t.Fatalf("during the update: phase=%s again=%v", s.history(t).Phase, again)
	}

	done := at.Add(30 * time.Minute)
	s.round(t, done)
	expectUpgraded(t, s.history(t), done)
	if again := s.round(t, done.Add(time.Hour)); again != 0 || s.history(t).Phase != UpgradePhaseUpgraded {
		t.Fatalf("Upgraded is terminal: again=%v phase=%s", again, s.history(t).Phase)
	}
}

// expectCommenced checks an upgrade that commenced at: Upgrading, the ClusterVersion asking
// for the release, the steps up to UpgradeCommenced done, the control plane in progress.
func expectCommenced(t *testing.T, s *muoSpoke, at time.Time) {
	t.Helper()
	h := s.history(t)
	if h.Phase != UpgradePhaseUpgrading || !h.StartTime.Time.Equal(at) || h.PrecedingVersion != "4.16.10" {
		t.Fatalf("at upgradeAt: %+v", h)
	}
	cv := storedClusterVersion(t, s.store)
	if cv.Spec.DesiredUpdate == nil || cv.Spec.DesiredUpdate.Version != "4.16.12" || cv.Spec.Channel != "fast-4.16" {
		t.Fatalf("ClusterVersion spec = %+v, want desiredUpdate 4.16.12 on fast-4.16", cv.Spec)
	}
	if c := h.Conditions[0]; c.Type != controlPlaneUpgradedStep || c.Status != corev1.ConditionFalse ||
		c.Message != "ControlPlaneUpgraded still in progress" {
		t.Fatalf("newest condition = %+v, want ControlPlaneUpgraded still in progress", c)
	}
	if c := upgradeCondition(h, commenceStep); c.Status != corev1.ConditionTrue || c.Reason != "UpgradeCommenced done" ||
		c.Message != "UpgradeCommenced is completed" || c.CompleteTime == nil {
		t.Fatalf("UpgradeCommenced = %+v", c)
	}
}

// expectUpgraded checks an upgrade completed at done, every step recorded.
func expectUpgraded(t *testing.T, h UpgradeHistory, done time.Time) {
	t.Helper()
	if h.Phase != UpgradePhaseUpgraded || !h.CompleteTime.Time.Equal(done) || h.WorkerCompleteTime == nil {
		t.Fatalf("after the update: %+v", h)
	}
	if c := h.Conditions[0]; c.Type != completedNotificationStep || c.Status != corev1.ConditionTrue {
		t.Fatalf("newest condition = %+v, want CompletedNotificationSent True", c)
	}
	if len(h.Conditions) != len(osdSteps) {
		t.Fatalf("%d conditions, want one per step (%d)", len(h.Conditions), len(osdSteps))
	}
}

func TestManagedUpgradeStaysNewWhenInvalidOrUnavailable(t *testing.T) {
	now := opsT0.Format(time.RFC3339)
	cases := map[string]struct {
		desired   UpgradeDesired
		upgradeAt string
		offers    []string
	}{
		"upgradeAt not RFC 3339":      {UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, "tomorrow", nil},
		"no channel":                  {UpgradeDesired{Version: "4.16.12"}, now, nil},
		"image and channel":           {UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16", Image: "quay.io/x@sha256:1"}, now, nil},
		"the current version":         {UpgradeDesired{Version: "4.16.10", Channel: "stable-4.16"}, now, nil},
		"a downgrade":                 {UpgradeDesired{Version: "4.15.30", Channel: "stable-4.16"}, now, nil},
		"not among available updates": {UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, now, []string{"4.16.11"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newMUOSpoke(t, Behaviour{}, ManagedUpgradeBehaviour{})
			if tc.offers != nil {
				s.cvo.Updates = func(string, *configv1.ClusterVersion, time.Time) (Updates, error) {
					var u Updates
					for _, v := range tc.offers {
						u.Available = append(u.Available, configv1.Release{Version: v, Image: Image(v)})
					}
					return u, nil
				}
				s.round(t, opsT0)
			}
			uc := NewUpgradeConfig(tc.desired, opsT0)
			if err := unstructured.SetNestedField(uc.Object, tc.upgradeAt, "spec", "upgradeAt"); err != nil {
				t.Fatal(err)
			}
			if err := s.store.Create(uc); err != nil {
				t.Fatal(err)
			}
			for _, at := range []time.Duration{0, time.Hour} {
				if again := s.round(t, opsT0.Add(at)); again != 0 {
					t.Fatalf("again = %v, want 0", again)
				}
			}
			if h := s.history(t); h.Phase != UpgradePhaseNew || h.Version != tc.desired.Version {
				t.Fatalf("history[0] = %+v, want New for %s", h, tc.desired.Version)
			}
			if cv := storedClusterVersion(t, s.store); cv.Spec.DesiredUpdate != nil {
				t.Fatalf("the ClusterVersion was touched: %+v", cv.Spec.DesiredUpdate)
			}
		})
	}
}

func TestManagedUpgradeWaitsForAHealthyCluster(t *testing.T) {
	cases := map[string]struct {
		sick func(*muoSpoke)
		heal func(*muoSpoke)
	}{
		"a critical alert": {
			func(s *muoSpoke) {
				s.firing.firing = []Alert{{Name: "KubeAPIDown", Severity: SeverityCritical, Since: opsT0}}
			},
			func(s *muoSpoke) { s.firing.firing = []Alert{{Name: "Watchdog", Severity: "none"}} },
		},
		"a degraded cluster operator": {
			func(s *muoSpoke) {
				s.cos.impose(ClusterOperatorCondition{Operator: "dns", Type: configv1.OperatorDegraded, Status: configv1.ConditionTrue})
			},
			func(s *muoSpoke) { delete(s.cos.imposed, "dns") },
		},
		"an unavailable cluster operator": {
			func(s *muoSpoke) {
				s.cos.impose(ClusterOperatorCondition{Operator: "etcd", Type: configv1.OperatorAvailable, Status: configv1.ConditionFalse})
			},
			func(s *muoSpoke) { delete(s.cos.imposed, "etcd") },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newMUOSpoke(t, Behaviour{}, ManagedUpgradeBehaviour{})
			tc.sick(s)
			s.createUpgradeConfig(t, UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, opsT0)
			s.round(t, opsT0)
			h := s.history(t)
			if c := h.Conditions[0]; h.Phase != UpgradePhaseUpgrading || c.Type != preHealthCheckStep || c.Status != corev1.ConditionFalse {
				t.Fatalf("sick cluster: phase=%s newest condition=%+v", h.Phase, c)
			}
			if storedClusterVersion(t, s.store).Spec.DesiredUpdate != nil {
				t.Fatal("a sick cluster must not be upgraded")
			}
			tc.heal(s)
			s.round(t, opsT0.Add(time.Minute))
			s.round(t, opsT0.Add(time.Minute))
			if h := s.history(t); h.Phase != UpgradePhaseUpgraded {
				t.Fatalf("healed cluster: %+v", h)
			}
		})
	}
}

func TestManagedUpgradeFailsAndStalls(t *testing.T) {
	cases := map[string]struct {
		cvo           Behaviour
		muo           ManagedUpgradeBehaviour
		wantPhase     UpgradePhase
		wantCommenced bool
		wantCondition string
		wantMessage   string
	}{
		"the behaviour fails it": {Behaviour{}, ManagedUpgradeBehaviour{Fail: true}, UpgradePhaseFailed, false,
			conditionFailedUpgrade, messageFailedUpgradeNotice},
		"the cluster-version operator fails": {Behaviour{Fail: true}, ManagedUpgradeBehaviour{}, UpgradePhaseFailed, true,
			conditionFailedUpgrade, messageFailedUpgradeNotice},
		"the behaviour stalls it": {Behaviour{}, ManagedUpgradeBehaviour{Stall: true}, UpgradePhaseUpgrading, false,
			preHealthCheckStep, "ClusterHealthyBeforeUpgrade still in progress"},
		"the cluster-version operator stalls": {Behaviour{Stall: true}, ManagedUpgradeBehaviour{}, UpgradePhaseUpgrading, true,
			controlPlaneUpgradedStep, "ControlPlaneUpgraded still in progress"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newMUOSpoke(t, tc.cvo, tc.muo)
			s.createUpgradeConfig(t, UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, opsT0)
			for _, at := range []time.Duration{0, 0, time.Hour, 24 * time.Hour} {
				s.round(t, opsT0.Add(at))
			}
			h := s.history(t)
			if c := h.Conditions[0]; h.Phase != tc.wantPhase || c.Type != tc.wantCondition || c.Message != tc.wantMessage {
				t.Fatalf("phase=%s newest condition=%+v, want %s with %s %q", h.Phase, c, tc.wantPhase, tc.wantCondition, tc.wantMessage)
			}
			if du := storedClusterVersion(t, s.store).Spec.DesiredUpdate; (du != nil) != tc.wantCommenced {
				t.Fatalf("desiredUpdate = %+v, want commenced %v", du, tc.wantCommenced)
			}
			if tc.cvo.Fail {
				if c := upgradeCondition(h, controlPlaneUpgradedStep); c.Message != "Cluster operator machine-config is degraded" {
					t.Fatalf("ControlPlaneUpgraded = %+v, want the Failing message", c)
				}
			}
		})
	}
}

func TestManagedUpgradeWindow(t *testing.T) {
	s := newMUOSpoke(t, Behaviour{}, ManagedUpgradeBehaviour{UpgradeWindow: time.Hour})
	s.createUpgradeConfig(t, UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, opsT0.Add(-2*time.Hour))
	s.round(t, opsT0)
	if h := s.history(t); h.Phase != UpgradePhasePending {
		t.Fatalf("past its window an upgrade does not start: %+v", h)
	}

	s = newMUOSpoke(t, Behaviour{}, ManagedUpgradeBehaviour{UpgradeWindow: time.Hour})
	s.firing.firing = []Alert{{Name: "KubeAPIDown", Severity: SeverityCritical}}
	s.createUpgradeConfig(t, UpgradeDesired{Version: "4.16.12", Channel: "stable-4.16"}, opsT0)
	if again := s.round(t, opsT0.Add(10*time.Minute)); again != time.Hour {
		t.Fatalf("waiting on health: again=%v, want the end of the window from the start of Upgrading", again)
	}
	s.round(t, opsT0.Add(70*time.Minute))
	if h := s.history(t); h.Phase != UpgradePhaseFailed {
		t.Fatalf("an upgrade that did not commence in its window fails: %+v", h)
	}
}

func TestManagedUpgradeRefusesAMinorUpgradeWhenNotUpgradeable(t *testing.T) {
	cases := map[string]struct {
		version string
		blocked bool
	}{
		"minor": {"4.17.2", true},
		"patch": {"4.16.12", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newMUOSpoke(t, Behaviour{}, ManagedUpgradeBehaviour{})
			s.cos.impose(ClusterOperatorCondition{Operator: "network", Type: configv1.OperatorUpgradeable,
				Status: configv1.ConditionFalse, Reason: "OpenShiftSDNConfigured", Message: "migrate to OVN-Kubernetes"})
			s.createUpgradeConfig(t, UpgradeDesired{Version: tc.version, Channel: "stable-4.17"}, opsT0)
			s.round(t, opsT0)
			h := s.history(t)
			c := upgradeCondition(h, upgradeableStep)
			if tc.blocked != (c.Status == corev1.ConditionFalse) {
				t.Fatalf("IsClusterUpgradable = %+v, want blocked %v", c, tc.blocked)
			}
			if tc.blocked && !strings.HasPrefix(c.Message, "cluster upgrade to version 4.17.2 on ") ||
				tc.blocked && !strings.HasSuffix(c.Message, "has been cancelled: OpenShiftSDNConfigured: "+
					"Cluster operator network should not be upgraded between minor versions: migrate to OVN-Kubernetes") {
				t.Fatalf("IsClusterUpgradable message = %q", c.Message)
			}
		})
	}
}
