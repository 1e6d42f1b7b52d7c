// Package ibgu decides how an ImageBasedGroupUpgrade runs on the rollout engine. Each plan
// step becomes a ClusterGroupUpgrade (Step) that rolls out, on the clusters the step is for
// (Selectors), one ManifestWorkReplicaSet template per action (Template): a ManifestWork that
// moves the spoke's ImageBasedUpgrade to the action's stage and reads its conditions back as
// status feedback, so that the engine's batches, timeouts and gates run image-based upgrades
// as they run policies. It is pure: the controller reads the hub and writes what it returns.
package ibgu

import (
	"encoding/json"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
)

// LabelIBGU on the ClusterGroupUpgrades and templates of an ImageBasedGroupUpgrade names it
// (TALM's label), shortened with a hash when the name is longer than a label value may be.
const LabelIBGU = "ibgu"

// The lifecycle agent's ImageBasedUpgrade: one per cluster, cluster-scoped, named upgrade.
const (
	IBUGroup    = "lca.openshift.io"
	IBUVersion  = "v1"
	IBUKind     = "ImageBasedUpgrade"
	IBUResource = "imagebasedupgrades"
	IBUName     = "upgrade"
)

// The stages of an ImageBasedUpgrade.
const (
	StageIdle     = "Idle"
	StagePrep     = "Prep"
	StageUpgrade  = "Upgrade"
	StageRollback = "Rollback"
)

// workRole is the ClusterRole, aggregated to the work agent's, that lets the agent manage
// the ImageBasedUpgrade (TALM's name and aggregation label).
const (
	workRole         = "open-cluster-management:klusterlet-work:ibu-role"
	labelAggregation = "open-cluster-management.io/aggregate-to-work"
)

// AnnotationPullSecretDelivery on an ImageBasedGroupUpgrade says how the seed image's pull
// secret reaches the clusters. Absent (TALM's way), Prep copies the hub Secret
// ibuSpec.seedImageRef.pullSecretRef names into its ManifestWorks, where whoever may read
// ManifestWorks in the clusters' namespaces can read it. PullSecretByReference: the Secret
// is already on each cluster (in openshift-lifecycle-agent, provisioned by other means, such
// as a policy whose hub template encrypts it); Prep names it only, and the operator reads
// no Secret.
const (
	AnnotationPullSecretDelivery = "ran.openshift.io/pull-secret-delivery"
	PullSecretByReference        = "reference"
)

// PullSecretCopied tells whether Prep copies the IBGU's pull secret to the clusters.
func PullSecretCopied(g *lcmv1alpha1.ImageBasedGroupUpgrade) bool {
	return g.Spec.IBUSpec.SeedImageRef.PullSecretRef != nil && g.Annotations[AnnotationPullSecretDelivery] != PullSecretByReference
}

// annotationDisableAutoImport keeps the hub from importing a cluster again while it pivots
// to its new stateroot (TALM sets it for the steps that upgrade).
const annotationDisableAutoImport = "import.open-cluster-management.io/disable-auto-import"

// Stage is the stage an action moves the ImageBasedUpgrade to: Prep, Upgrade and Rollback
// their own; the finalizing and aborting actions Idle.
func Stage(action lcmv1alpha1.Action) string {
	switch action {
	case lcmv1alpha1.ActionPrep:
		return StagePrep
	case lcmv1alpha1.ActionUpgrade:
		return StageUpgrade
	case lcmv1alpha1.ActionRollback:
		return StageRollback
	}
	return StageIdle
}

// Feedback is what a ManifestWork reads back from the ImageBasedUpgrade: the status of the
// condition that says the stage is done, which must be True, and the messages that say how
// it goes (TALM's feedback names).
type Feedback struct {
	// Done is the name of the value that must read "True".
	Done string
	// Paths are the feedback names and their JSON paths.
	Paths []workv1.JsonPath
}

// FeedbackOf returns the feedback of an action: for Prep, Upgrade and Rollback the
// <Stage>Completed condition, for the others Idle.
func FeedbackOf(action lcmv1alpha1.Action) Feedback {
	stage := Stage(action)
	condition := func(t, field string) string {
		return fmt.Sprintf(`.status.conditions[?(@.type=="%s")].%s`, t, field)
	}
	if stage == StageIdle {
		return Feedback{Done: "isIdle", Paths: []workv1.JsonPath{
			{Name: "isIdle", Path: condition("Idle", "status")},
			{Name: "idleConditionReason", Path: condition("Idle", "reason")},
			{Name: "idleConditionMessages", Path: condition("Idle", "message")},
		}}
	}
	lower := strings.ToLower(stage)
	return Feedback{Done: "is" + stage + "Completed", Paths: []workv1.JsonPath{
		{Name: "is" + stage + "Completed", Path: condition(stage+"Completed", "status")},
		{Name: lower + "InProgressConditionMessage", Path: condition(stage+"InProgress", "message")},
		{Name: lower + "CompletedConditionMessages", Path: condition(stage+"Completed", "message")},
	}}
}

// StepName is the name of the ClusterGroupUpgrade of plan step i (TALM's: the
// ImageBasedGroupUpgrade's name, the step's actions and its index), shortened with a hash
// when longer than a name may be.
func StepName(ibguName string, actions []lcmv1alpha1.Action, i int) string {
	return names.Safe(253, ibguName, strings.ToLower(strings.Join(actions, "-")), fmt.Sprint(i))
}

// TemplateName is the name of the ManifestWorkReplicaSet template of an action (TALM's: one
// per ImageBasedGroupUpgrade and action, shared by the steps that repeat the action).
func TemplateName(ibguName string, action lcmv1alpha1.Action) string {
	return names.Safe(253, ibguName, strings.ToLower(action))
}

// Selectors are the clusters a step is for, by the first action of the step: each selector
// of the spec narrowed by the labels the earlier steps left on the clusters (Labels). Prep
// takes the selected clusters; Upgrade those whose Prep completed; Rollback and
// FinalizeUpgrade those whose Upgrade completed; FinalizeRollback those whose Rollback
// completed; Abort those that did not upgrade; AbortOnFailure those whose Prep or Upgrade
// failed.
func Selectors(selected []ranv1alpha1.ClusterLabelSelector, first lcmv1alpha1.Action) []ranv1alpha1.ClusterLabelSelector {
	with := func(s ranv1alpha1.ClusterLabelSelector, key string) ranv1alpha1.ClusterLabelSelector {
		out := *s.DeepCopy()
		if out.MatchLabels == nil {
			out.MatchLabels = map[string]string{}
		}
		out.MatchLabels[key] = ""
		return out
	}
	var out []ranv1alpha1.ClusterLabelSelector
	for _, s := range selected {
		switch first {
		case lcmv1alpha1.ActionUpgrade:
			out = append(out, with(s, Label(lcmv1alpha1.ActionPrep, Completed)))
		case lcmv1alpha1.ActionRollback, lcmv1alpha1.ActionFinalizeUpgrade:
			out = append(out, with(s, Label(lcmv1alpha1.ActionUpgrade, Completed)))
		case lcmv1alpha1.ActionFinalizeRollback:
			out = append(out, with(s, Label(lcmv1alpha1.ActionRollback, Completed)))
		case lcmv1alpha1.ActionAbort:
			s = *s.DeepCopy()
			s.MatchExpressions = append(s.MatchExpressions, ranv1alpha1.ClusterSelectorRequirement{
				Key: Label(lcmv1alpha1.ActionUpgrade, Completed), Operator: metav1.LabelSelectorOpDoesNotExist})
			out = append(out, s)
		case lcmv1alpha1.ActionAbortOnFailure:
			out = append(out, with(s, Label(lcmv1alpha1.ActionPrep, Failed)), with(s, Label(lcmv1alpha1.ActionUpgrade, Failed)))
		default:
			out = append(out, *s.DeepCopy())
		}
	}
	return out
}

// Outcome is how an action ended on a cluster.
type Outcome string

// The outcomes the cluster labels record.
const (
	Completed Outcome = "completed"
	Failed    Outcome = "failed"
)

// Label is the ManagedCluster label that records an action's outcome on the cluster
// (TALM's: lcm.openshift.io/ibgu-<action>-<outcome>, with the empty value).
func Label(action lcmv1alpha1.Action, outcome Outcome) string {
	return "lcm.openshift.io/ibgu-" + strings.ToLower(action) + "-" + string(outcome)
}

// Step is the ClusterGroupUpgrade of plan step i: the step's actions as ManifestWork
// templates, in order, on the clusters the step is for, in batches of its rollout strategy,
// with the options of spec.rollout (canaries are those of them the step selects).
// A step that upgrades keeps the hub from importing its clusters again until each completes.
func Step(ibgu *lcmv1alpha1.ImageBasedGroupUpgrade, i int, canaries []string) *ranv1alpha1.ClusterGroupUpgrade {
	item := ibgu.Spec.Plan[i]
	templates := make([]string, len(item.Actions))
	for j, a := range item.Actions {
		templates[j] = TemplateName(ibgu.Name, a)
	}
	timeout := item.RolloutStrategy.Timeout
	cgu := &ranv1alpha1.ClusterGroupUpgrade{
		TypeMeta: metav1.TypeMeta{APIVersion: ranv1alpha1.GroupVersion.String(), Kind: "ClusterGroupUpgrade"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ibgu.Namespace, Name: StepName(ibgu.Name, item.Actions, i),
			Labels: map[string]string{LabelIBGU: names.LabelValue(ibgu.Name)}},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Enable:                ptr.To(true),
			ClusterLabelSelectors: Selectors(ibgu.Spec.ClusterLabelSelectors, item.Actions[0]),
			ManifestWorkTemplates: templates,
			RemediationStrategy:   &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: item.RolloutStrategy.MaxConcurrency, Timeout: timeout},
		},
	}
	if suffix, ok := ibgu.Annotations[ranv1alpha1.AnnotationNameSuffix]; ok {
		// As TALM: the step names what it makes with the IBGU's suffix.
		cgu.Annotations = map[string]string{ranv1alpha1.AnnotationNameSuffix: suffix}
	}
	if r := ibgu.Spec.Rollout; r != nil {
		cgu.Spec.RemediationStrategy.Canaries = canaries
		cgu.Spec.MaxFailures, cgu.Spec.BatchSoak, cgu.Spec.Paused = r.MaxFailures, r.BatchSoak, r.Paused
		cgu.Spec.Approval, cgu.Spec.MaintenanceWindows = r.Approval.DeepCopy(), r.MaintenanceWindows.DeepCopy()
	}
	for _, a := range item.Actions {
		if a == lcmv1alpha1.ActionUpgrade {
			cgu.Spec.Actions.BeforeEnable = &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{
				AddClusterAnnotations: map[string]string{annotationDisableAutoImport: "true"}}}
			cgu.Spec.Actions.AfterCompletion = &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{
				RemoveClusterAnnotations: []string{annotationDisableAutoImport}}}
		}
	}
	return cgu
}

// Template is the ManifestWorkReplicaSet of an action: a ManifestWork that lets the work
// agent manage the ImageBasedUpgrade and moves it to the action's stage, with ibuSpec and the
// IBGU's lifecycle-agent annotations, reading back the conditions that say the stage is
// done (the engine's expected feedback). extra are the manifests that go first: for Prep the
// OADP ConfigMaps and the seed image's pull secret. Deleting the ManifestWork leaves what it
// applied on the cluster.
func Template(ibgu *lcmv1alpha1.ImageBasedGroupUpgrade, action lcmv1alpha1.Action, extra []runtime.Object) (*workv1alpha1.ManifestWorkReplicaSet, error) {
	fb := FeedbackOf(action)
	expected, err := json.Marshal(map[string]string{fb.Done: "True"})
	if err != nil {
		return nil, err
	}
	upgrade, err := ibu(ibgu, action)
	if err != nil {
		return nil, err
	}
	objects := append(append([]runtime.Object{}, extra...), clusterRole(), upgrade)
	manifests := make([]workv1.Manifest, len(objects))
	for i, o := range objects {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encoding manifest %d of %s: %w", i, action, err)
		}
		manifests[i] = workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
	}
	return &workv1alpha1.ManifestWorkReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1alpha1.GroupVersion.String(), Kind: "ManifestWorkReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ibgu.Namespace, Name: TemplateName(ibgu.Name, action),
			Labels: map[string]string{LabelIBGU: names.LabelValue(ibgu.Name)},
			Annotations: map[string]string{manifestwork.AnnotationExpectedFeedback: string(expected),
				// One ImageBasedUpgrade goes through the stages: each action's work gives
				// way to the next one's.
				manifestwork.AnnotationDeleteWhenDone: "true"}},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			// The engine makes the ManifestWorks itself; the placement is a placeholder, as TALM's.
			PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "dummy"}},
			ManifestWorkTemplate: workv1.ManifestWorkSpec{
				Workload:     workv1.ManifestsTemplate{Manifests: manifests},
				DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan},
				ManifestConfigs: []workv1.ManifestConfigOption{{
					ResourceIdentifier: workv1.ResourceIdentifier{Group: IBUGroup, Resource: IBUResource, Name: IBUName},
					FeedbackRules:      []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: fb.Paths}},
					ConditionRules:     []workv1.ConditionRule{failedRule(action)},
				}},
			},
		},
	}, nil
}

// failedRule sets Degraded on the ImageBasedUpgrade's manifest, and so on the ManifestWork,
// once the lifecycle agent says the action failed: the stage's Completed condition False
// with reason Failed, or, for the actions back to Idle, Idle False with FinalizeFailed or
// AbortFailed. The engine then fails the cluster at once (ManifestWorkDegraded), where
// TALM waits for the step's timeout; a work agent without condition rules leaves the
// timeout to end it, as TALM.
func failedRule(action lcmv1alpha1.Action) workv1.ConditionRule {
	stage := Stage(action)
	failed := fmt.Sprintf(`c.type == "%sCompleted" && c.status == "False" && c.reason == "Failed"`, stage)
	said := fmt.Sprintf(`c.type == "%sInProgress" || c.type == "%sCompleted"`, stage, stage)
	if stage == StageIdle {
		failed = `c.type == "Idle" && c.status == "False" && (c.reason == "FinalizeFailed" || c.reason == "AbortFailed")`
		said = `c.type == "Idle"`
	}
	return workv1.ConditionRule{
		Condition: workv1.ManifestDegraded,
		Type:      workv1.CelConditionExpressionsType,
		CelExpressions: []string{
			fmt.Sprintf(`has(object.status) && has(object.status.conditions) && object.status.conditions.exists(c, %s)`, failed),
		},
		Message:           action + " failed on the cluster",
		MessageExpression: fmt.Sprintf(`result ? object.status.conditions.filter(c, %s)[0].message : ""`, said),
	}
}

// clusterRole lets the work agent manage ImageBasedUpgrades.
func clusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: workRole, Labels: map[string]string{labelAggregation: "true"}},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{IBUGroup}, Resources: []string{IBUResource},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}},
	}
}

// ibu is the ImageBasedUpgrade an action asks for: ibuSpec at the action's stage, with the
// IBGU's annotations of the lifecycle agent (those whose key holds lca.openshift.io, such as
// the switches of its automatic rollback).
func ibu(ibgu *lcmv1alpha1.ImageBasedGroupUpgrade, action lcmv1alpha1.Action) (runtime.Object, error) {
	spec := ibgu.Spec.IBUSpec
	spec.Stage = Stage(action)
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return nil, fmt.Errorf("encoding ibuSpec: %w", err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": fields}}
	u.SetAPIVersion(IBUGroup + "/" + IBUVersion)
	u.SetKind(IBUKind)
	u.SetName(IBUName)
	annotations := map[string]string{}
	for k, v := range ibgu.Annotations {
		if strings.Contains(k, IBUGroup) {
			annotations[k] = v
		}
	}
	if len(annotations) > 0 {
		u.SetAnnotations(annotations)
	}
	return u, nil
}
