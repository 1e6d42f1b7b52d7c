// Package manifestwork makes the ManifestWorks a ClusterGroupUpgrade rolls out from
// ManifestWorkReplicaSet templates (spec.manifestWorkTemplates, spec.preUpgradeActions,
// spec.postUpgradeActions) and judges, from the status the work agent writes, whether one
// is done, still going, or degraded. It is pure: the controller reads and writes.
package manifestwork

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"

	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// Role says what a ManifestWork is for.
type Role string

// The roles, also the value of LabelRole.
const (
	// RoleStep is a step of the rollout: a template of spec.manifestWorkTemplates.
	RoleStep Role = "step"
	// RolePre is an action of spec.preUpgradeActions.
	RolePre Role = "pre"
	// RolePost is an action of spec.postUpgradeActions.
	RolePost Role = "post"
)

const (
	// LabelRole on a ManifestWork the operator made holds its Role.
	LabelRole = "ran.openshift.io/cgu-work-role"
	// AnnotationTemplate on a ManifestWork names the template it was made from.
	AnnotationTemplate = "ran.openshift.io/cgu-work-template"
	// AnnotationExpectedFeedback on a template is a JSON object of status feedback values
	// the work must report, by feedback name, before it counts as done; for example
	// {"succeeded": "1"}. Values compare as text: integers in decimal, booleans as
	// true or false.
	AnnotationExpectedFeedback = "ran.openshift.io/expected-feedback"
	// AnnotationExpectedValues on a template is TALM's form of the same: a JSON list of
	// {"manifestIndex": N, "name": ..., "value": ...}, each a value the manifest of that
	// index must report. A TALM user's templates carry it.
	AnnotationExpectedValues = "openshift-cluster-group-upgrades/expectedValues"
	// AnnotationDeleteWhenDone set to "true" on a step's template says that what its
	// ManifestWork applies belongs, once done, to what comes next (TALM's way with every
	// template): the operator deletes a cluster's ManifestWork of the step once the
	// cluster is past it, and makes the cluster's next ManifestWork only after that; the
	// step stays done for a cluster that passed it. Set it on templates that move one
	// object through stages, such as the ImageBasedUpgrade, with deleteOption Orphan.
	AnnotationDeleteWhenDone = "ran.openshift.io/delete-work-when-done"
)

// DeleteWhenDone reports whether a template carries AnnotationDeleteWhenDone "true".
func DeleteWhenDone(template *workv1alpha1.ManifestWorkReplicaSet) bool {
	return template != nil && template.Annotations[AnnotationDeleteWhenDone] == "true"
}

// Feedback is a status feedback value a ManifestWork must report before it counts as done.
type Feedback struct {
	// Manifest is the index of the manifest that must report it, or AnyManifest: then
	// every manifest that reports Name must report Value, and one must.
	Manifest int
	Name     string
	Value    string
}

// AnyManifest is the Manifest of a Feedback any manifest may report.
const AnyManifest = -1

// Reasons a cluster waits, is held or fails because of a ManifestWork.
const (
	// ReasonPreUpgradeActionPending: a pre-upgrade action is not done yet; the cluster waits.
	ReasonPreUpgradeActionPending = "PreUpgradeActionPending"
	// ReasonPreUpgradeActionDegraded: a pre-upgrade action is degraded; the cluster is held.
	ReasonPreUpgradeActionDegraded = "PreUpgradeActionDegraded"
	// ReasonPostUpgradeActionDegraded: a post-upgrade action is degraded; the cluster failed.
	ReasonPostUpgradeActionDegraded = "PostUpgradeActionDegraded"
	// ReasonManifestWorkDegraded: a ManifestWork of the rollout is degraded; the cluster failed.
	ReasonManifestWorkDegraded = "ManifestWorkDegraded"
)

// Name is the name of the ManifestWork owner's ClusterGroupUpgrade makes from a template for
// a role, in a cluster's namespace. Every ClusterGroupUpgrade writes there, so the name holds
// its namespace; a step keeps the template's name last, an action says pre or post. With a
// name suffix, a step is named as TALM names it: "<namespace>.<template>-<suffix>".
func Name(owner ownership.Owner, role Role, template string) string {
	if role == RoleStep {
		if owner.NameSuffix != "" {
			return names.WithSuffix(253, owner.Namespace+"."+template, owner.NameSuffix)
		}
		return names.Safe(253, owner.Namespace, owner.Name, template)
	}
	return names.Safe(253, owner.Namespace, owner.Name, string(role), template)
}

// New returns the ManifestWork made from template for cluster: the template's
// manifestWorkTemplate as spec, with the owner's labels and the role.
func New(template *workv1alpha1.ManifestWorkReplicaSet, role Role, cluster string, owner ownership.Owner) *workv1.ManifestWork {
	labels := owner.ObjectLabels()
	labels[LabelRole] = string(role)
	return &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        Name(owner, role, template.Name),
			Namespace:   cluster,
			Labels:      labels,
			Annotations: map[string]string{AnnotationTemplate: template.Name},
		},
		Spec: *template.Spec.ManifestWorkTemplate.DeepCopy(),
	}
}

// State is where a ManifestWork stands.
type State int

// The states of a ManifestWork.
const (
	// Missing: not made yet, or not seen by the cache yet.
	Missing State = iota
	// Progressing: made, not done.
	Progressing
	// Done: applied, available, complete when its condition rules say so, and reporting
	// the expected feedback.
	Done
	// Degraded: a condition rule of the template set Degraded.
	Degraded
)

// Observation is what the work agent's status says of a ManifestWork.
type Observation struct {
	State State
	// Message says what it waits for, or why it is degraded.
	Message string
}

// Expected reads a template's expected feedback (AnnotationExpectedFeedback, and TALM's
// AnnotationExpectedValues), sorted; nil when it sets none.
func Expected(template *workv1alpha1.ManifestWorkReplicaSet) ([]Feedback, error) {
	ours, err := expectedFeedback(template)
	if err != nil {
		return nil, err
	}
	talms, err := expectedValues(template)
	if err != nil {
		return nil, err
	}
	out := append(ours, talms...)
	slices.SortFunc(out, func(a, b Feedback) int {
		return strings.Compare(fmt.Sprintf("%s/%d", a.Name, a.Manifest), fmt.Sprintf("%s/%d", b.Name, b.Manifest))
	})
	return out, nil
}

// expectedFeedback reads AnnotationExpectedFeedback: values any manifest may report.
func expectedFeedback(template *workv1alpha1.ManifestWorkReplicaSet) ([]Feedback, error) {
	raw, ok := template.Annotations[AnnotationExpectedFeedback]
	if !ok {
		return nil, nil
	}
	var values map[string]any
	if err := json.Unmarshal([]byte(raw), &values); err != nil {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: annotation %s is not a JSON object: %w",
			template.Namespace, template.Name, AnnotationExpectedFeedback, err)
	}
	out := make([]Feedback, 0, len(values))
	for k, v := range values {
		text, ok := scalar(v)
		if !ok {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: annotation %s: %q must be a string, number or boolean",
				template.Namespace, template.Name, AnnotationExpectedFeedback, k)
		}
		out = append(out, Feedback{Manifest: AnyManifest, Name: k, Value: text})
	}
	return out, nil
}

// expectedValues reads TALM's AnnotationExpectedValues: values of the manifest of an index.
func expectedValues(template *workv1alpha1.ManifestWorkReplicaSet) ([]Feedback, error) {
	raw, ok := template.Annotations[AnnotationExpectedValues]
	if !ok {
		return nil, nil
	}
	var values []struct {
		ManifestIndex *int   `json:"manifestIndex"`
		Name          string `json:"name"`
		Value         any    `json:"value"`
	}
	if err := json.Unmarshal([]byte(raw), &values); err != nil {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: annotation %s is not a JSON list: %w",
			template.Namespace, template.Name, AnnotationExpectedValues, err)
	}
	out := make([]Feedback, 0, len(values))
	for i, v := range values {
		text, ok := scalar(v.Value)
		if v.ManifestIndex == nil || *v.ManifestIndex < 0 || v.Name == "" || !ok {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s: annotation %s: entry %d needs a manifestIndex of at least 0, a name and a string, number or boolean value",
				template.Namespace, template.Name, AnnotationExpectedValues, i)
		}
		out = append(out, Feedback{Manifest: *v.ManifestIndex, Name: v.Name, Value: text})
	}
	return out, nil
}

// scalar writes a decoded JSON string, number or boolean as text, as feedback values compare.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	}
	return "", false
}

// Observe judges a ManifestWork from its status; w nil is Missing. A status written for an
// older generation of the work is still Progressing.
func Observe(w *workv1.ManifestWork, expected []Feedback) Observation {
	if w == nil {
		return Observation{State: Missing, Message: "not made yet"}
	}
	if !w.DeletionTimestamp.IsZero() {
		return Observation{State: Progressing, Message: fmt.Sprintf("ManifestWork %s/%s is being deleted", w.Namespace, w.Name)}
	}
	conds := w.Status.Conditions
	if c := meta.FindStatusCondition(conds, workv1.WorkDegraded); c != nil && c.Status == metav1.ConditionTrue && current(c, w) {
		return Observation{State: Degraded, Message: fmt.Sprintf("ManifestWork %s/%s is degraded: %s", w.Namespace, w.Name, text(c))}
	}
	if failed := failedManifests(w); failed != "" {
		// The agent retries: a namespace may yet be made, a CRD installed.
		return Observation{State: Progressing, Message: fmt.Sprintf("ManifestWork %s/%s cannot apply %s yet", w.Namespace, w.Name, failed)}
	}
	for _, t := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
		c := meta.FindStatusCondition(conds, t)
		if c == nil || c.Status != metav1.ConditionTrue || !current(c, w) {
			return Observation{State: Progressing, Message: fmt.Sprintf("ManifestWork %s/%s is not %s yet", w.Namespace, w.Name, t)}
		}
	}
	if c := meta.FindStatusCondition(conds, workv1.WorkComplete); c != nil && (c.Status != metav1.ConditionTrue || !current(c, w)) {
		return Observation{State: Progressing, Message: fmt.Sprintf("ManifestWork %s/%s is not Complete yet: %s", w.Namespace, w.Name, text(c))}
	}
	if missing := unmet(w, expected); missing != "" {
		return Observation{State: Progressing, Message: fmt.Sprintf("ManifestWork %s/%s waits for feedback %s", w.Namespace, w.Name, missing)}
	}
	return Observation{State: Done, Message: fmt.Sprintf("ManifestWork %s/%s is done", w.Namespace, w.Name)}
}

// current reports whether the agent wrote c for the work's current generation (a condition
// without an observed generation counts as current).
func current(c *metav1.Condition, w *workv1.ManifestWork) bool {
	return c.ObservedGeneration == 0 || c.ObservedGeneration == w.Generation
}

func text(c *metav1.Condition) string {
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}

// failedManifests names the manifests whose Applied condition is False, "" when none is.
func failedManifests(w *workv1.ManifestWork) string {
	var out []string
	for _, m := range w.Status.ResourceStatus.Manifests {
		c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied)
		if c != nil && c.Status == metav1.ConditionFalse {
			r := m.ResourceMeta
			out = append(out, fmt.Sprintf("%s %s (%s)", r.Kind, strings.TrimPrefix(r.Namespace+"/"+r.Name, "/"), text(c)))
		}
	}
	return strings.Join(out, ", ")
}

// unmet names the expected feedback values the work does not report, "" when all are met:
// a value of any manifest must be reported, with the value, by every manifest that reports
// its name; a value of one manifest by that manifest.
func unmet(w *workv1.ManifestWork, expected []Feedback) string {
	var out []string
	for _, f := range expected {
		var got []string
		for _, m := range w.Status.ResourceStatus.Manifests {
			if f.Manifest != AnyManifest && int(m.ResourceMeta.Ordinal) != f.Manifest {
				continue
			}
			for _, v := range m.StatusFeedbacks.Values {
				if v.Name == f.Name {
					got = append(got, value(v.Value))
				}
			}
		}
		if len(got) == 0 || slices.ContainsFunc(got, func(v string) bool { return v != f.Value }) {
			where := ""
			if f.Manifest != AnyManifest {
				where = fmt.Sprintf(" of manifest %d", f.Manifest)
			}
			out = append(out, fmt.Sprintf("%s=%s%s (reported %v)", f.Name, f.Value, where, got))
		}
	}
	return strings.Join(out, ", ")
}

// value renders a feedback value as text.
func value(v workv1.FieldValue) string {
	switch {
	case v.Integer != nil:
		return strconv.FormatInt(*v.Integer, 10)
	case v.Boolean != nil:
		return strconv.FormatBool(*v.Boolean)
	case v.String != nil:
		return *v.String
	case v.JsonRaw != nil:
		return *v.JsonRaw
	}
	return ""
}
