package cgu

import (
	"fmt"
	"slices"
	"testing"
	"time"

	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/installplan"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// operators is a managed policy declaring the Manual Subscription ns/sriov, non-compliant on
// the clusters.
func operators(clusters ...string) *policyv1.Policy {
	p := policy("operators", nil, clusters...)
	raw := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":{"object-templates":[` +
		`{"complianceType":"musthave","objectDefinition":{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription",` +
		`"metadata":{"name":"sriov","namespace":"ns"},"spec":{"name":"sriov-network-operator","channel":"stable","installPlanApproval":"Manual"}}}]}}`
	p.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(raw)}}}
	return p
}

// answered is the rollout's view of kind ns/name on a cluster, showing the object.
func answered(cluster, what, kind, name, object string) *viewv1beta1.ManagedClusterView {
	v := operatorView(ownership.Owner{Namespace: "fleet", Name: "upgrade"}, cluster, what, kind, installplan.Ref{Namespace: "ns", Name: name})
	v.Status.Conditions = []metav1.Condition{{Type: viewv1beta1.ConditionViewProcessing, Status: metav1.ConditionTrue}}
	v.Status.Result = runtime.RawExtension{Raw: []byte(object)}
	return v
}

const (
	liveSubscription = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription","metadata":{"name":"sriov","namespace":"ns"},` +
		`"spec":{"name":"sriov-network-operator","channel":"stable","installPlanApproval":"Manual"},` +
		`"status":{"currentCSV":"sriov.v2","installedCSV":"sriov.v1","installPlanRef":{"namespace":"ns","name":"install-abcde"}}}`
	livePlan = `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"InstallPlan","metadata":{"name":"install-abcde","namespace":"ns"},` +
		`"spec":{"approval":"Manual","approved":false,"clusterServiceVersionNames":[%q]},"status":{"phase":"RequiresApproval"}}`
)

// operatorFacts: a started rollout of the operators policy, enforced on c1 and c2, with the
// views given.
func operatorFacts(t *testing.T, views ...*viewv1beta1.ManagedClusterView) Facts {
	f := fresh()
	f.Roots = []*policyv1.Policy{operators("c1", "c2", "c3")}
	in := Decide(f, Config{}, decideAt)
	f = next(t, f, in, f.Roots...)
	f.OperatorUpgrades = &OperatorUpgrades{Views: map[client.ObjectKey]*viewv1beta1.ManagedClusterView{}, Actions: map[client.ObjectKey]bool{}}
	for _, v := range views {
		f.OperatorUpgrades.Views[client.ObjectKeyFromObject(v)] = v
	}
	return f
}

func viewed(views []*viewv1beta1.ManagedClusterView) []string {
	var out []string
	for _, v := range views {
		out = append(out, v.Namespace+" "+v.Labels[LabelOperatorUpgrade]+" "+v.Spec.Scope.Name)
	}
	return out
}

func TestDecideInstallPlanApproval(t *testing.T) {
	subView := answered("c1", operatorUpgradeSubscription, "Subscription", "sriov", liveSubscription)
	planView := answered("c1", operatorUpgradeInstallPlan, "InstallPlan", "install-abcde", fmt.Sprintf(livePlan, "sriov.v2"))

	// Nothing viewed yet: a view of the Subscription on each cluster enforced.
	in := Decide(operatorFacts(t), Config{}, decideAt.Add(time.Minute))
	if got := viewed(in.Spoke.InstallPlans.Views); !slices.Equal(got, []string{"c1 subscription sriov", "c2 subscription sriov"}) {
		t.Errorf("views %v, want the Subscription's on c1 and c2", got)
	}
	// c1's Subscription names its plan: a view of the plan.
	in = Decide(operatorFacts(t, subView), Config{}, decideAt.Add(time.Minute))
	if got := viewed(in.Spoke.InstallPlans.Views); !slices.Equal(got, []string{"c1 installplan install-abcde", "c2 subscription sriov"}) {
		t.Errorf("views %v, want c1's plan and c2's Subscription", got)
	}
	// c1's plan is the one the policy asks for: approved by an action.
	f := operatorFacts(t, subView, planView)
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	a := in.Spoke.InstallPlans.Approvals
	if len(a) != 1 || a[0].Cluster != "c1" || a[0].Verdict.CSV != "sriov.v2" || a[0].Action.Namespace != "c1" {
		t.Fatalf("approvals %+v, want install-abcde on c1", a)
	}
	// Made already: not again.
	f.OperatorUpgrades.Actions[client.ObjectKeyFromObject(a[0].Action)] = true
	if in := Decide(f, Config{}, decideAt.Add(time.Minute)); len(in.Spoke.InstallPlans.Approvals) != 0 {
		t.Errorf("approved again: %+v", in.Spoke.InstallPlans.Approvals)
	}
	// A plan for another CSV is not approved, and the debug log says why.
	other := answered("c1", operatorUpgradeInstallPlan, "InstallPlan", "install-abcde", fmt.Sprintf(livePlan, "sriov.v3"))
	in = Decide(operatorFacts(t, subView, other), Config{}, decideAt.Add(time.Minute))
	if len(in.Spoke.InstallPlans.Approvals) != 0 {
		t.Errorf("approved a plan the policy does not ask for")
	}
	if !slices.ContainsFunc(in.Notes, func(n Note) bool {
		return n.Message == "The InstallPlan is not approved" && slices.Contains(n.Values, "c1")
	}) {
		t.Errorf("notes %+v, want why c1's plan is not approved", in.Notes)
	}
}

func TestDecideApprovalFromTheAnnotations(t *testing.T) {
	f := fresh()
	f.Upgrade.Annotations = map[string]string{ranv1alpha1.AnnotationApproveBatch: "2", ranv1alpha1.AnnotationApprovedBy: "alice"}
	in := Decide(f, Config{}, decideAt)
	if len(in.Approvals) != 1 || in.Approvals[0].Batch != 2 || in.Approvals[0].By != "alice" || !in.Approvals[0].At.Time.Equal(decideAt) {
		t.Errorf("approvals %+v, want batch 2 by alice at %s", in.Approvals, decideAt)
	}
	if !slices.Equal(in.Status.Approvals, in.Approvals) {
		t.Errorf("status.approvals %+v", in.Status.Approvals)
	}
}

func TestDecideFreezesAcceptedContent(t *testing.T) {
	f := fresh()
	in := Decide(f, Config{}, decideAt)
	changed := policy("upgrade", nil, "c1", "c2", "c3")
	changed.Generation = 2
	f = next(t, f, in, changed)
	in = Decide(f, Config{}, decideAt.Add(time.Minute))
	if !in.Enforcement.Frozen[0] {
		t.Errorf("frozen %v: a policy edited mid-batch keeps the content the rollout accepted", in.Enforcement.Frozen)
	}
	if ref := in.Status.ManagedPoliciesForUpgrade[0]; ref.Generation != 1 {
		t.Errorf("accepted generation %d, want 1 until a batch starts", ref.Generation)
	}
}
