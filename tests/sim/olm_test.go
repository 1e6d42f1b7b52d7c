package sim

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

const (
	sriovNS  = "openshift-sriov-network-operator"
	sriovPkg = "sriov-network-operator"
	sriov0   = "sriov-network-operator.v4.16.0"
	sriov1   = "sriov-network-operator.v4.16.1"
	sriov2   = "sriov-network-operator.v4.16.2"
)

func sriovOperator(approval string, available ...string) InstalledOperator {
	return InstalledOperator{Package: sriovPkg, Namespace: sriovNS, Channel: "stable", InstalledCSV: sriov0,
		Available: available, Approval: approval}
}

func newOLMSpoke(t *testing.T, spec SpokeSpec) (*configpolicy.MapStore, *OLM) {
	t.Helper()
	store := newSpokeStore(t, "4.16.10")
	return store, NewOLM(spec)
}

func storedObject(t *testing.T, store configpolicy.Store, gvk schema.GroupVersionKind, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := store.Get(gvk, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func csvPhase(t *testing.T, store configpolicy.Store, namespace, name string) string {
	t.Helper()
	obj, err := store.Get(ClusterServiceVersionGVK, namespace, name)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return "deleted"
	}
	if err != nil {
		t.Fatal(err)
	}
	return nested(t, obj, "status", "phase")
}

// subscriptionSays returns a Subscription's state, installed and current CSVs, and its
// InstallPlan's name.
func subscriptionSays(t *testing.T, store configpolicy.Store, namespace, name string) (state, installed, current, plan string) {
	t.Helper()
	sub := storedObject(t, store, SubscriptionGVK, namespace, name)
	return nested(t, sub, "status", "state"), nested(t, sub, "status", "installedCSV"),
		nested(t, sub, "status", "currentCSV"), nested(t, sub, "status", "installPlanRef", "name")
}

func approve(t *testing.T, store configpolicy.Store, namespace, plan string) {
	t.Helper()
	mutate(t, store, InstallPlanGVK, namespace, plan, func(obj *unstructured.Unstructured) {
		if err := unstructured.SetNestedField(obj.Object, true, "spec", "approved"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestOLMInstallsTheSpokesOperators(t *testing.T) {
	store, olm := newOLMSpoke(t, SpokeSpec{Operators: []InstalledOperator{sriovOperator("")}})
	if again := round(t, store, opsT0, olm); again != 0 {
		t.Fatalf("again = %v, want 0", again)
	}
	state, installed, current, plan := subscriptionSays(t, store, sriovNS, sriovPkg)
	if state != SubscriptionStateAtLatest || installed != sriov0 || current != sriov0 || plan != "" {
		t.Fatalf("Subscription: state=%s installed=%s current=%s plan=%q", state, installed, current, plan)
	}
	if p := csvPhase(t, store, sriovNS, sriov0); p != CSVPhaseSucceeded {
		t.Fatalf("CSV phase = %s", p)
	}
	for _, obj := range []struct {
		gvk             schema.GroupVersionKind
		namespace, name string
	}{
		{catalogSourceGVK, MarketplaceNamespace, DefaultCatalogSource},
		{operatorGroupGVK, GlobalOperatorsNamespace, "global-operators"},
		{operatorGroupGVK, sriovNS, sriovNS},
	} {
		storedObject(t, store, obj.gvk, obj.namespace, obj.name)
	}
	plans, _ := store.List(InstallPlanGVK, "")
	if len(plans) != 0 {
		t.Fatalf("%d InstallPlans for an operator at its channel's head", len(plans))
	}
}

func TestOLMManualApprovalInstallsOnceApproved(t *testing.T) {
	store, olm := newOLMSpoke(t, SpokeSpec{Operators: []InstalledOperator{sriovOperator(ApprovalManual, sriov1)},
		OLM: OLMBehaviour{InstallDuration: 5 * time.Minute}})
	round(t, store, opsT0, olm)
	plan := expectSubscription(t, store, SubscriptionStateUpgradePending, sriov0, sriov1)
	ip := storedObject(t, store, InstallPlanGVK, sriovNS, plan)
	approved, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved")
	names, _, _ := unstructured.NestedStringSlice(ip.Object, "spec", "clusterServiceVersionNames")
	if approved || nested(t, ip, "spec", "approval") != ApprovalManual || len(names) != 1 || names[0] != sriov1 {
		t.Fatalf("InstallPlan = %v", ip.Object)
	}
	expectInstall(t, store, plan, InstallPlanPhaseRequiresApproval, "deleted", CSVPhaseSucceeded)
	if again := round(t, store, opsT0.Add(time.Hour), olm); again != 0 {
		t.Fatalf("unapproved: again=%v", again)
	}
	expectInstall(t, store, plan, InstallPlanPhaseRequiresApproval, "deleted", CSVPhaseSucceeded)

	approve(t, store, sriovNS, plan)
	start := opsT0.Add(2 * time.Hour)
	if again := round(t, store, start, olm); again != 5*time.Minute {
		t.Fatalf("installing: again=%v, want the install duration", again)
	}
	expectInstall(t, store, plan, InstallPlanPhaseInstalling, CSVPhaseInstalling, CSVPhaseReplacing)

	round(t, store, start.Add(5*time.Minute), olm)
	expectInstall(t, store, plan, InstallPlanPhaseComplete, CSVPhaseSucceeded, "deleted")
	expectSubscription(t, store, SubscriptionStateAtLatest, sriov1, sriov1)
}

// expectSubscription checks the sriov Subscription's state and CSVs and returns its plan.
func expectSubscription(t *testing.T, store configpolicy.Store, state, installed, current string) string {
	t.Helper()
	gotState, gotInstalled, gotCurrent, plan := subscriptionSays(t, store, sriovNS, sriovPkg)
	if gotState != state || gotInstalled != installed || gotCurrent != current || plan == "" {
		t.Fatalf("Subscription: state=%s installed=%s current=%s plan=%q, want %s %s %s", gotState, gotInstalled, gotCurrent,
			plan, state, installed, current)
	}
	return plan
}

// expectInstall checks the phases of the sriov InstallPlan, its new CSV and the old one.
func expectInstall(t *testing.T, store configpolicy.Store, plan, planPhase, newPhase, oldPhase string) {
	t.Helper()
	got := nested(t, storedObject(t, store, InstallPlanGVK, sriovNS, plan), "status", "phase")
	gotNew, gotOld := csvPhase(t, store, sriovNS, sriov1), csvPhase(t, store, sriovNS, sriov0)
	if got != planPhase || gotNew != newPhase || gotOld != oldPhase {
		t.Fatalf("plan %s, new CSV %s, old CSV %s; want %s %s %s", got, gotNew, gotOld, planPhase, newPhase, oldPhase)
	}
}

func TestOLMFollowsTheChannelOneCSVAtATime(t *testing.T) {
	cases := map[string]struct {
		approval      string
		wantState     string
		wantInstalled string
		wantPlans     int
	}{
		"Automatic installs up to the head": {ApprovalAutomatic, SubscriptionStateAtLatest, sriov2, 2},
		"Manual waits for each approval":    {ApprovalManual, SubscriptionStateUpgradePending, sriov1, 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store, olm := newOLMSpoke(t, SpokeSpec{Operators: []InstalledOperator{sriovOperator(tc.approval, sriov1, sriov2)}})
			round(t, store, opsT0, olm)
			if tc.approval == ApprovalManual {
				_, _, _, plan := subscriptionSays(t, store, sriovNS, sriovPkg)
				approve(t, store, sriovNS, plan)
				round(t, store, opsT0.Add(time.Minute), olm)
			}
			state, installed, _, _ := subscriptionSays(t, store, sriovNS, sriovPkg)
			plans, _ := store.List(InstallPlanGVK, sriovNS)
			if state != tc.wantState || installed != tc.wantInstalled || len(plans) != tc.wantPlans {
				t.Fatalf("state=%s installed=%s plans=%d, want %s %s %d", state, installed, len(plans),
					tc.wantState, tc.wantInstalled, tc.wantPlans)
			}
			generations := map[int64]bool{}
			for _, p := range plans {
				g, _, _ := unstructured.NestedInt64(p.Object, "spec", "generation")
				generations[g] = true
			}
			if !generations[1] || !generations[2] {
				t.Fatalf("plan generations = %v, want 1 and 2", generations)
			}
		})
	}
}

func TestOLMResolvesNewSubscriptions(t *testing.T) {
	catalog := []CatalogChannel{{Package: "ptp-operator", Channel: "stable", CSVs: []string{"ptp-operator.v4.16.0", "ptp-operator.v4.16.3"}}}
	cases := map[string]struct {
		spec          map[string]any
		wantInstalled string
		wantCondition string
	}{
		"the channel head": {map[string]any{"name": "ptp-operator", "channel": "stable", "source": DefaultCatalogSource,
			"sourceNamespace": MarketplaceNamespace}, "ptp-operator.v4.16.3", ""},
		"the starting CSV, then on": {map[string]any{"name": "ptp-operator", "channel": "stable", "startingCSV": "ptp-operator.v4.16.0"},
			"ptp-operator.v4.16.3", ""},
		"an unknown channel": {map[string]any{"name": "ptp-operator", "channel": "alpha"}, "", conditionResolutionFailed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			store, olm := newOLMSpoke(t, SpokeSpec{Catalog: catalog})
			round(t, store, opsT0, olm)
			sub := &unstructured.Unstructured{Object: map[string]any{"spec": tc.spec}}
			sub.SetGroupVersionKind(SubscriptionGVK)
			sub.SetNamespace(GlobalOperatorsNamespace)
			sub.SetName("ptp")
			if err := store.Create(sub); err != nil {
				t.Fatal(err)
			}
			round(t, store, opsT0, olm)
			_, installed, _, _ := subscriptionSays(t, store, GlobalOperatorsNamespace, "ptp")
			if installed != tc.wantInstalled {
				t.Fatalf("installed = %q, want %q", installed, tc.wantInstalled)
			}
			if tc.wantInstalled != "" && csvPhase(t, store, GlobalOperatorsNamespace, tc.wantInstalled) != CSVPhaseSucceeded {
				t.Fatalf("CSV %s not Succeeded", tc.wantInstalled)
			}
			conditions, _, _ := unstructured.NestedSlice(storedObject(t, store, SubscriptionGVK, GlobalOperatorsNamespace, "ptp").Object,
				"status", "conditions")
			found := false
			for _, c := range conditions {
				found = found || c.(map[string]any)["type"] == tc.wantCondition
			}
			if tc.wantCondition != "" && !found {
				t.Fatalf("conditions = %v, want %s", conditions, tc.wantCondition)
			}
		})
	}
}

func TestOLMFailedInstall(t *testing.T) {
	store, olm := newOLMSpoke(t, SpokeSpec{Operators: []InstalledOperator{sriovOperator(ApprovalAutomatic, sriov1)},
		OLM: OLMBehaviour{Fail: true}})
	round(t, store, opsT0, olm)
	state, installed, _, plan := subscriptionSays(t, store, sriovNS, sriovPkg)
	ip := storedObject(t, store, InstallPlanGVK, sriovNS, plan)
	if state != SubscriptionStateUpgradePending || installed != sriov0 || nested(t, ip, "status", "phase") != InstallPlanPhaseFailed {
		t.Fatalf("state=%s installed=%s plan phase=%s", state, installed, nested(t, ip, "status", "phase"))
	}
	if csvPhase(t, store, sriovNS, sriov1) != CSVPhaseFailed {
		t.Fatalf("new CSV phase = %s, want Failed", csvPhase(t, store, sriovNS, sriov1))
	}
	conditions, _, _ := unstructured.NestedSlice(storedObject(t, store, SubscriptionGVK, sriovNS, sriovPkg).Object, "status", "conditions")
	found := false
	for _, c := range conditions {
		m := c.(map[string]any)
		found = found || (m["type"] == conditionInstallPlanFailed && m["reason"] == "InstallComponentFailed")
	}
	if !found {
		t.Fatalf("conditions = %v, want InstallPlanFailed", conditions)
	}
}
