package ibgu

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	workv1 "open-cluster-management.io/api/work/v1"
	"open-cluster-management.io/ocm/pkg/work/spoke/conditions"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
)

func sample() *lcmv1alpha1.ImageBasedGroupUpgrade {
	return &lcmv1alpha1.ImageBasedGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ztp", Name: "upgrade-4.17",
			Annotations: map[string]string{"auto-rollback-on-failure.lca.openshift.io/init-monitor": "Disabled", "team": "ran"}},
		Spec: lcmv1alpha1.ImageBasedGroupUpgradeSpec{
			ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"common": "true"}}},
			IBUSpec: lcmv1alpha1.ImageBasedUpgradeSpec{Stage: "Upgrade",
				SeedImageRef: lcmv1alpha1.SeedImageRef{Image: "quay.io/seed:4.17.3", Version: "4.17.3"}},
			Plan: []lcmv1alpha1.PlanItem{
				{Actions: []string{"Prep"}, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 10, Timeout: 60}},
				{Actions: []string{"Upgrade", "FinalizeUpgrade"}, RolloutStrategy: lcmv1alpha1.RolloutStrategy{MaxConcurrency: 5, Timeout: 240}},
			},
		},
	}
}

func TestStageAndFeedback(t *testing.T) {
	for action, want := range map[string]struct{ stage, done, first string }{
		"Prep":             {StagePrep, "isPrepCompleted", `.status.conditions[?(@.type=="PrepCompleted")].status`},
		"Upgrade":          {StageUpgrade, "isUpgradeCompleted", `.status.conditions[?(@.type=="UpgradeCompleted")].status`},
		"Rollback":         {StageRollback, "isRollbackCompleted", `.status.conditions[?(@.type=="RollbackCompleted")].status`},
		"FinalizeUpgrade":  {StageIdle, "isIdle", `.status.conditions[?(@.type=="Idle")].status`},
		"FinalizeRollback": {StageIdle, "isIdle", `.status.conditions[?(@.type=="Idle")].status`},
		"Abort":            {StageIdle, "isIdle", `.status.conditions[?(@.type=="Idle")].status`},
		"AbortOnFailure":   {StageIdle, "isIdle", `.status.conditions[?(@.type=="Idle")].status`},
	} {
		fb := FeedbackOf(action)
		if Stage(action) != want.stage || fb.Done != want.done || fb.Paths[0].Name != want.done || fb.Paths[0].Path != want.first || len(fb.Paths) != 3 {
			t.Errorf("%s: stage %s feedback %+v, want %+v", action, Stage(action), fb, want)
		}
	}
}

func TestNames(t *testing.T) {
	if got := StepName("upgrade-4.17", []string{"Upgrade", "FinalizeUpgrade"}, 1); got != "upgrade-4.17-upgrade-finalizeupgrade-1" {
		t.Errorf("step name %s", got)
	}
	if got := TemplateName("upgrade-4.17", "AbortOnFailure"); got != "upgrade-4.17-abortonfailure" {
		t.Errorf("template name %s", got)
	}
	long := strings.Repeat("a", 229)
	if got := StepName(long, []string{"Prep", "Upgrade", "FinalizeUpgrade"}, 0); len(got) > 253 ||
		got == StepName(long, []string{"Prep", "Upgrade"}, 0) {
		t.Errorf("a long name %q (%d characters) must be shortened and stay distinct", got, len(got))
	}
}

func TestSelectors(t *testing.T) {
	base := []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"common": "true"}}}
	with := func(labels ...string) ranv1alpha1.ClusterLabelSelector {
		s := ranv1alpha1.ClusterLabelSelector{MatchLabels: map[string]string{"common": "true"}}
		for _, l := range labels {
			s.MatchLabels[l] = ""
		}
		return s
	}
	for action, want := range map[string][]ranv1alpha1.ClusterLabelSelector{
		"Prep":             base,
		"Upgrade":          {with("lcm.openshift.io/ibgu-prep-completed")},
		"Rollback":         {with("lcm.openshift.io/ibgu-upgrade-completed")},
		"FinalizeUpgrade":  {with("lcm.openshift.io/ibgu-upgrade-completed")},
		"FinalizeRollback": {with("lcm.openshift.io/ibgu-rollback-completed")},
		"AbortOnFailure":   {with("lcm.openshift.io/ibgu-prep-failed"), with("lcm.openshift.io/ibgu-upgrade-failed")},
		"Abort": {{MatchLabels: map[string]string{"common": "true"}, MatchExpressions: []ranv1alpha1.ClusterSelectorRequirement{
			{Key: "lcm.openshift.io/ibgu-upgrade-completed", Operator: metav1.LabelSelectorOpDoesNotExist}}}},
	} {
		if diff := cmp.Diff(want, Selectors(base, action)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", action, diff)
		}
	}
	if len(base[0].MatchLabels) != 1 {
		t.Fatalf("the spec's selectors were changed: %v", base)
	}
}

func TestStep(t *testing.T) {
	ibgu := sample()
	prep, upgrade := Step(ibgu, 0, nil), Step(ibgu, 1, nil)
	if prep.Name != "upgrade-4.17-prep-0" || prep.Labels[LabelIBGU] != "upgrade-4.17" || prep.Namespace != "ztp" {
		t.Fatalf("prep step %s/%s labels %v", prep.Namespace, prep.Name, prep.Labels)
	}
	if !cmp.Equal(prep.Spec.ManifestWorkTemplates, []string{"upgrade-4.17-prep"}) || prep.Spec.RemediationStrategy.MaxConcurrency != 10 ||
		prep.Spec.RemediationStrategy.Timeout != 60 || prep.Spec.Actions.BeforeEnable != nil || !*prep.Spec.Enable {
		t.Fatalf("prep step spec %+v", prep.Spec)
	}
	if !cmp.Equal(upgrade.Spec.ManifestWorkTemplates, []string{"upgrade-4.17-upgrade", "upgrade-4.17-finalizeupgrade"}) {
		t.Fatalf("upgrade step templates %v", upgrade.Spec.ManifestWorkTemplates)
	}
	if upgrade.Spec.Actions.BeforeEnable.AddClusterAnnotations[annotationDisableAutoImport] != "true" ||
		!cmp.Equal(upgrade.Spec.Actions.AfterCompletion.RemoveClusterAnnotations, []string{annotationDisableAutoImport}) {
		t.Fatalf("an upgrading step must keep auto-import off until each cluster completes: %+v", upgrade.Spec.Actions)
	}
	if _, ok := upgrade.Spec.ClusterLabelSelectors[0].MatchLabels["lcm.openshift.io/ibgu-prep-completed"]; !ok {
		t.Fatalf("the upgrade step is for the clusters whose Prep completed: %v", upgrade.Spec.ClusterLabelSelectors)
	}
	if len(prep.Annotations) != 0 {
		t.Fatalf("a step of an IBGU without TALM's name-suffix has annotations %v", prep.Annotations)
	}
	ibgu.Annotations = map[string]string{ranv1alpha1.AnnotationNameSuffix: "kuttl"}
	if got := Step(ibgu, 0, nil).Annotations[ranv1alpha1.AnnotationNameSuffix]; got != "kuttl" {
		t.Fatalf("the step carries name-suffix %q, want the IBGU's, as TALM passes it on", got)
	}
}

func TestTemplate(t *testing.T) {
	ibgu := sample()
	secret := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-lifecycle-agent", Name: "seed-pull"}}
	mwrs, err := Template(ibgu, "Prep", []runtime.Object{secret})
	if err != nil {
		t.Fatal(err)
	}
	if mwrs.Name != "upgrade-4.17-prep" || mwrs.Annotations[manifestwork.AnnotationExpectedFeedback] != `{"isPrepCompleted":"True"}` {
		t.Fatalf("template %s annotations %v", mwrs.Name, mwrs.Annotations)
	}
	expected, err := manifestwork.Expected(mwrs)
	if err != nil || !slices.Equal(expected, []manifestwork.Feedback{{Manifest: manifestwork.AnyManifest, Name: "isPrepCompleted", Value: "True"}}) {
		t.Fatalf("the engine reads the expected feedback %v (%v)", expected, err)
	}
	spec := mwrs.Spec.ManifestWorkTemplate
	if spec.DeleteOption.PropagationPolicy != workv1.DeletePropagationPolicyTypeOrphan {
		t.Fatalf("deleting the ManifestWork must leave the ImageBasedUpgrade: %+v", spec.DeleteOption)
	}
	kinds, stage, annotations := manifests(t, spec)
	if !cmp.Equal(kinds, []string{"Secret", "ClusterRole", IBUKind}) || stage != StagePrep {
		t.Fatalf("manifests %v, ImageBasedUpgrade stage %q: want the extra manifests, the role, then the IBU at Prep", kinds, stage)
	}
	if !cmp.Equal(annotations, map[string]string{"auto-rollback-on-failure.lca.openshift.io/init-monitor": "Disabled"}) {
		t.Fatalf("annotations %v: want the lifecycle agent's only", annotations)
	}
	rule := spec.ManifestConfigs[0]
	if rule.ResourceIdentifier.Resource != IBUResource || rule.ResourceIdentifier.Name != IBUName || rule.FeedbackRules[0].JsonPaths[0].Name != "isPrepCompleted" {
		t.Fatalf("feedback rule %+v", rule)
	}
	if ibgu.Spec.IBUSpec.Stage != "Upgrade" {
		t.Fatal("the IBGU's ibuSpec was changed")
	}
}

func TestTemplateOfAnActionBackToIdle(t *testing.T) {
	finalize, err := Template(sample(), "FinalizeUpgrade", nil)
	if err != nil || len(finalize.Spec.ManifestWorkTemplate.Workload.Manifests) != 2 || finalize.Annotations[manifestwork.AnnotationExpectedFeedback] != `{"isIdle":"True"}` {
		t.Fatalf("finalize template %+v (%v)", finalize, err)
	}
}

// manifests reads a ManifestWork's manifests: their kinds, and the ImageBasedUpgrade's stage
// and annotations.
func manifests(t *testing.T, spec workv1.ManifestWorkSpec) (kinds []string, stage string, annotations map[string]string) {
	t.Helper()
	for _, m := range spec.Workload.Manifests {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				Stage string `json:"stage"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(m.Raw, &obj); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, obj.Kind)
		if obj.Kind == IBUKind {
			stage, annotations = obj.Spec.Stage, obj.Metadata.Annotations
		}
	}
	return kinds, stage, annotations
}

// TestFailedRule evaluates each action's condition rule with the work agent's own
// evaluator on ImageBasedUpgrades as the lifecycle agent writes them.
func TestFailedRule(t *testing.T) {
	reader, err := conditions.NewConditionReader()
	if err != nil {
		t.Fatal(err)
	}
	upgrade := func(conds ...metav1.Condition) *unstructured.Unstructured {
		list := make([]any, len(conds))
		for i, c := range conds {
			list[i] = map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message}
		}
		u := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": list}}}
		u.SetAPIVersion(IBUGroup + "/" + IBUVersion)
		u.SetKind(IBUKind)
		u.SetName(IBUName)
		return u
	}
	cond := func(t, s, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionStatus(s), Reason: reason, Message: msg}
	}
	for name, tc := range map[string]struct {
		action   lcmv1alpha1.Action
		object   *unstructured.Unstructured
		degraded bool
		message  string
	}{
		"Prep running": {action: "Prep", object: upgrade(cond("Idle", "False", "InProgress", "In progress"),
			cond("PrepInProgress", "True", "InProgress", "Pulling the seed image"))},
		"Prep failed": {action: "Prep", degraded: true, message: "failed to pull the seed image",
			object: upgrade(cond("PrepInProgress", "False", "Failed", "failed to pull the seed image"), cond("PrepCompleted", "False", "Failed", "Prep failed"))},
		"Prep completed": {action: "Prep", object: upgrade(cond("PrepInProgress", "False", "Completed", "done"), cond("PrepCompleted", "True", "Completed", "done"))},
		"no status yet":  {action: "Upgrade", object: upgrade()},
		"Upgrade failed": {action: "Upgrade", degraded: true, message: "the cluster did not come back",
			object: upgrade(cond("UpgradeInProgress", "False", "Failed", "the cluster did not come back"), cond("UpgradeCompleted", "False", "Failed", "Upgrade failed"))},
		"a Prep failure is no Upgrade failure": {action: "Upgrade", object: upgrade(cond("PrepCompleted", "False", "Failed", "x"))},
		"finalizing":                           {action: "FinalizeUpgrade", object: upgrade(cond("Idle", "False", "Finalizing", "Finalizing"))},
		"finalize failed": {action: "FinalizeUpgrade", degraded: true, message: "clean up by hand",
			object: upgrade(cond("Idle", "False", "FinalizeFailed", "clean up by hand"))},
		"abort failed": {action: "AbortOnFailure", degraded: true, message: "abort: clean up by hand",
			object: upgrade(cond("Idle", "False", "AbortFailed", "abort: clean up by hand"))},
	} {
		got := reader.EvaluateConditions(context.Background(), tc.object, []workv1.ConditionRule{failedRule(tc.action)})
		if len(got) != 1 || got[0].Type != workv1.ManifestDegraded {
			t.Fatalf("%s: conditions %+v, want one Degraded", name, got)
		}
		if degraded := got[0].Status == metav1.ConditionTrue; degraded != tc.degraded || (tc.degraded && got[0].Message != tc.message) {
			t.Errorf("%s: Degraded %s %q, want degraded %v with %q", name, got[0].Status, got[0].Message, tc.degraded, tc.message)
		}
	}
}

func TestStepTakesTheRolloutOptions(t *testing.T) {
	ibgu := sample()
	if cgu := Step(ibgu, 0, nil); cgu.Spec.Paused || cgu.Spec.MaxFailures != nil || cgu.Spec.Approval != nil {
		t.Fatalf("no options, none set: %+v", cgu.Spec)
	}
	budget := intstr.FromString("10%")
	ibgu.Spec.Rollout = &lcmv1alpha1.StepRollout{Canaries: []string{"sno-9", "sno-1"}, MaxFailures: &budget, Paused: true,
		BatchSoak: &metav1.Duration{Duration: 10 * time.Minute}, Approval: &ranv1alpha1.ApprovalGates{}}
	cgu := Step(ibgu, 1, []string{"sno-1"})
	if !cgu.Spec.Paused || cgu.Spec.MaxFailures.String() != "10%" || cgu.Spec.BatchSoak.Duration != 10*time.Minute || cgu.Spec.Approval == nil ||
		!slices.Equal(cgu.Spec.RemediationStrategy.Canaries, []string{"sno-1"}) || cgu.Spec.RemediationStrategy.MaxConcurrency != 5 {
		t.Fatalf("step %+v", cgu.Spec)
	}
	cgu.Spec.Approval.EveryBatch = true
	if ibgu.Spec.Rollout.Approval.EveryBatch {
		t.Fatal("the step shares the IBGU's approval")
	}
}

// TestLongNames: an ImageBasedGroupUpgrade may be named with up to 229 characters; its steps,
// templates and their labels must still be valid.
func TestLongNames(t *testing.T) {
	ibgu := sample()
	ibgu.Name = strings.Repeat("n", 229)
	for i := range ibgu.Spec.Plan {
		cgu := Step(ibgu, i, nil)
		if len(cgu.Name) > 253 || len(validation.IsValidLabelValue(cgu.Labels[LabelIBGU])) > 0 {
			t.Errorf("step %d: name of %d characters, label %q", i, len(cgu.Name), cgu.Labels[LabelIBGU])
		}
	}
	tpl, err := Template(ibgu, "FinalizeUpgrade", nil)
	if err != nil || len(tpl.Name) > 253 || len(validation.IsValidLabelValue(tpl.Labels[LabelIBGU])) > 0 {
		t.Errorf("template %q (%v), label %q", tpl.Name, err, tpl.Labels[LabelIBGU])
	}
}
