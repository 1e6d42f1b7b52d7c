package installplan

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Outcome is what to do about a Subscription's InstallPlan on a cluster.
type Outcome string

const (
	// Wait means nothing to approve yet (the Subscription or its plan not viewed yet, no plan
	// referenced, the Subscription not following the policy yet, the plan still planning).
	Wait Outcome = "Wait"
	// Approve means the plan is the one for the upgrade the policy asked for; approve it.
	Approve Outcome = "Approve"
	// Approved means the plan is approved already; nothing to do.
	Approved Outcome = "Approved"
	// Mismatch means the plan is not one the operator approves; Message says why.
	Mismatch Outcome = "Mismatch"
)

// Ref names an object in a namespace.
type Ref struct {
	Namespace, Name string
}

// Verdict is the decision on one Subscription of one cluster.
type Verdict struct {
	Outcome Outcome
	// Plan is the InstallPlan the Subscription refers to, zero when it refers to none.
	Plan Ref
	// CSV is the ClusterServiceVersion the approval is for, with Approve.
	CSV     string
	Message string
}

// PlanOf returns the InstallPlan an observed Subscription refers to (status.installPlanRef),
// false when it refers to none.
func PlanOf(sub *unstructured.Unstructured) (Ref, bool) {
	if sub == nil {
		return Ref{}, false
	}
	ref, _, _ := unstructured.NestedStringMap(sub.Object, "status", "installPlanRef")
	if ref["name"] == "" {
		return Ref{}, false
	}
	return Ref{Namespace: ref["namespace"], Name: ref["name"]}, true
}

// Decide judges the InstallPlan of the Subscription want on one cluster from the Subscription
// and the InstallPlan as their views show them (nil while not shown). It approves only a plan
//
//   - of the Subscription's own namespace, that its status.installPlanRef names;
//   - of a Subscription whose spec already states what the policy states (package, channel,
//     source, startingCSV): a plan resolved before the policy's change took effect could be
//     for a version the policy does not ask for;
//   - with Manual approval, not approved, in phase RequiresApproval;
//   - whose clusterServiceVersionNames contain the Subscription's status.currentCSV (the CSV
//     OLM resolved for the Subscription in the channel the policy sets) or the startingCSV the
//     policy pins, and name no other CSV than those and the ones in also (the CSVs other
//     chosen Subscriptions of the namespace are moving to): approving a plan installs all its
//     CSVs, and one of a Subscription the rollout does not choose must not ride along;
//   - when the policy pins a startingCSV, only while the installed CSV is not that one yet:
//     past the pinned version nothing more is approved, so that a rollout that pins a version
//     never takes the operator beyond it.
func Decide(want Subscription, sub, plan *unstructured.Unstructured, also []string) Verdict {
	if sub == nil {
		return Verdict{Outcome: Wait, Message: fmt.Sprintf("Subscription %s has not been read yet", want.Key())}
	}
	if diff := differs(want, sub); diff != "" {
		return Verdict{Outcome: Wait, Message: fmt.Sprintf("Subscription %s does not follow the policy yet: %s", want.Key(), diff)}
	}
	ref, ok := PlanOf(sub)
	if !ok {
		return Verdict{Outcome: Wait, Message: fmt.Sprintf("Subscription %s refers to no InstallPlan", want.Key())}
	}
	v := Verdict{Plan: ref}
	if ref.Namespace != want.Namespace {
		return v.with(Mismatch, "InstallPlan %s/%s is not in the namespace of Subscription %s", ref.Namespace, ref.Name, want.Key())
	}
	if plan == nil || plan.GetName() != ref.Name || plan.GetNamespace() != ref.Namespace {
		return v.with(Wait, "InstallPlan %s/%s has not been read yet", ref.Namespace, ref.Name)
	}
	return judgePlan(want, sub, plan, also, v)
}

// judgePlan judges the plan the Subscription refers to.
func judgePlan(want Subscription, sub, plan *unstructured.Unstructured, also []string, v Verdict) Verdict {
	approval, _, _ := unstructured.NestedString(plan.Object, "spec", "approval")
	approved, _, _ := unstructured.NestedBool(plan.Object, "spec", "approved")
	phase, _, _ := unstructured.NestedString(plan.Object, "status", "phase")
	csvs, _, _ := unstructured.NestedStringSlice(plan.Object, "spec", "clusterServiceVersionNames")
	current, _, _ := unstructured.NestedString(sub.Object, "status", "currentCSV")
	installed, _, _ := unstructured.NestedString(sub.Object, "status", "installedCSV")
	name := v.Plan.Namespace + "/" + v.Plan.Name
	switch {
	case approved:
		return v.with(Approved, "InstallPlan %s is approved", name)
	case approval != string(operatorsv1alpha1.ApprovalManual):
		return v.with(Mismatch, "InstallPlan %s has approval %q, not Manual", name, approval)
	case phase == string(operatorsv1alpha1.InstallPlanPhaseNone) || phase == string(operatorsv1alpha1.InstallPlanPhasePlanning):
		return v.with(Wait, "InstallPlan %s is still planning", name)
	case phase != string(operatorsv1alpha1.InstallPlanPhaseRequiresApproval):
		return v.with(Mismatch, "InstallPlan %s is %s, not RequiresApproval", name, phase)
	case want.StartingCSV != "" && installed == want.StartingCSV:
		return v.with(Mismatch, "Subscription %s runs %s, the startingCSV the policy pins; InstallPlan %s would go past it",
			want.Key(), installed, name)
	}
	target := ""
	switch {
	case want.StartingCSV != "" && slices.Contains(csvs, want.StartingCSV):
		target = want.StartingCSV
	case current != "" && slices.Contains(csvs, current):
		target = current
	case current == "":
		return v.with(Wait, "Subscription %s names no currentCSV yet", want.Key())
	default:
		return v.with(Mismatch, "InstallPlan %s installs %s, not %s, the currentCSV of Subscription %s",
			name, strings.Join(csvs, ", "), current, want.Key())
	}
	accepted := append([]string{target, current, want.StartingCSV}, also...)
	if other := slices.DeleteFunc(slices.Clone(csvs), func(c string) bool { return slices.Contains(accepted, c) }); len(other) > 0 {
		return v.with(Mismatch, "InstallPlan %s also installs %s, which no chosen Subscription asks for", name, strings.Join(other, ", "))
	}
	v.CSV = target
	return v.with(Approve, "InstallPlan %s installs %s for Subscription %s", name, target, want.Key())
}

func (v Verdict) with(o Outcome, format string, args ...any) Verdict {
	v.Outcome, v.Message = o, fmt.Sprintf(format, args...)
	return v
}

// differs names the first spec field the policy states that the observed Subscription does
// not have yet, "" when it follows the policy.
func differs(want Subscription, sub *unstructured.Unstructured) string {
	fields := []struct{ field, want string }{
		{"name", want.Package}, {"channel", want.Channel}, {"source", want.Source},
		{"sourceNamespace", want.SourceNamespace}, {"startingCSV", want.StartingCSV},
		{"installPlanApproval", string(operatorsv1alpha1.ApprovalManual)},
	}
	for _, f := range fields {
		got, _, _ := unstructured.NestedString(sub.Object, "spec", f.field)
		if f.want != "" && got != f.want {
			return fmt.Sprintf("spec.%s is %q, the policy asks for %q", f.field, got, f.want)
		}
	}
	return ""
}

// Progressing returns the CSVs an observed Subscription may install next: its currentCSV
// and the startingCSV the policy pins; what Decide accepts in a shared plan for the other
// chosen Subscriptions of a namespace.
func Progressing(want Subscription, sub *unstructured.Unstructured) []string {
	var out []string
	if sub == nil {
		return nil
	}
	if current, _, _ := unstructured.NestedString(sub.Object, "status", "currentCSV"); current != "" {
		out = append(out, current)
	}
	if want.StartingCSV != "" {
		out = append(out, want.StartingCSV)
	}
	return out
}

// FromView returns the object a ManagedClusterView shows, nil when it shows none (not
// answered, the object missing or unreadable on the cluster, or a result that cannot be
// decoded).
func FromView(view *viewv1beta1.ManagedClusterView) *unstructured.Unstructured {
	if view == nil || !meta.IsStatusConditionTrue(view.Status.Conditions, viewv1beta1.ConditionViewProcessing) ||
		len(view.Status.Result.Raw) == 0 {
		return nil
	}
	obj := &unstructured.Unstructured{}
	if err := json.Unmarshal(view.Status.Result.Raw, &obj.Object); err != nil || obj.GetName() == "" {
		return nil
	}
	return obj
}

// ApprovalTemplate returns the object of the ManagedClusterAction that approves the plan: the
// plan as viewed with spec.approved true, without status and the metadata the API server
// sets. The action agent makes the live object this template, so it keeps the spec,
// labels, annotations and owner references the plan has.
func ApprovalTemplate(plan *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": operatorsv1alpha1.InstallPlanAPIVersion, "kind": operatorsv1alpha1.InstallPlanKind,
	}}
	if spec, ok := plan.Object["spec"].(map[string]any); ok {
		out.Object["spec"] = runtime.DeepCopyJSONValue(spec)
	}
	_ = unstructured.SetNestedField(out.Object, true, "spec", "approved")
	out.SetNamespace(plan.GetNamespace())
	out.SetName(plan.GetName())
	out.SetLabels(plan.GetLabels())
	out.SetAnnotations(plan.GetAnnotations())
	out.SetOwnerReferences(plan.GetOwnerReferences())
	out.SetFinalizers(plan.GetFinalizers())
	return out
}
