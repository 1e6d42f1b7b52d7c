package manifestwork

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// cond is a condition the agent wrote for generation 1.
func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: "R", Message: t + " says " + string(s), ObservedGeneration: 1}
}

func work(gen int64, conds ...metav1.Condition) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "sno-1", Generation: gen}}
	w.Status.Conditions = conds
	return w
}

func withFeedback(w *workv1.ManifestWork, values ...workv1.FeedbackValue) *workv1.ManifestWork {
	w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
		ResourceMeta:    workv1.ManifestResourceMeta{Ordinal: int32(len(w.Status.ResourceStatus.Manifests)), Kind: "Job", Name: "backup", Namespace: "ops"},
		StatusFeedbacks: workv1.StatusFeedbackResult{Values: values},
	})
	return w
}

func TestObserve(t *testing.T) {
	applied, available := cond(workv1.WorkApplied, metav1.ConditionTrue), cond(workv1.WorkAvailable, metav1.ConditionTrue)
	succeeded := workv1.FeedbackValue{Name: "succeeded", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}}
	zero := workv1.FeedbackValue{Name: "succeeded", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](0)}}
	failedApply := work(1, applied, available)
	failedApply.Status.ResourceStatus.Manifests = []workv1.ManifestCondition{{
		ResourceMeta: workv1.ManifestResourceMeta{Kind: "Widget", Name: "x"},
		Conditions:   []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Reason: "AppliedManifestFailed", Message: "no such kind"}},
	}}
	deleting := work(1, applied, available)
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	any1 := []Feedback{{Manifest: AnyManifest, Name: "succeeded", Value: "1"}}
	second1 := []Feedback{{Manifest: 1, Name: "succeeded", Value: "1"}}
	cases := map[string]struct {
		w        *workv1.ManifestWork
		expected []Feedback
		want     State
		says     string
	}{
		"missing":                  {w: nil, want: Missing},
		"no status yet":            {w: work(1), want: Progressing, says: "not Applied yet"},
		"applied, not available":   {w: work(1, applied, cond(workv1.WorkAvailable, metav1.ConditionFalse)), want: Progressing, says: "not Available"},
		"status of an older spec":  {w: work(2, applied, available), want: Progressing, says: "not Applied yet"},
		"available":                {w: work(1, applied, available), want: Done},
		"complete rule not done":   {w: work(1, applied, available, cond(workv1.WorkComplete, metav1.ConditionFalse)), want: Progressing, says: "not Complete"},
		"complete rule done":       {w: work(1, applied, available, cond(workv1.WorkComplete, metav1.ConditionTrue)), want: Done},
		"degraded wins":            {w: work(1, applied, available, cond(workv1.WorkDegraded, metav1.ConditionTrue)), want: Degraded, says: "Degraded says True"},
		"degraded false":           {w: work(1, applied, available, cond(workv1.WorkDegraded, metav1.ConditionFalse)), want: Done},
		"degraded of an older gen": {w: work(2, cond(workv1.WorkDegraded, metav1.ConditionTrue)), want: Progressing},
		"manifest not applied":     {w: failedApply, want: Progressing, says: "cannot apply Widget x (no such kind) yet"},
		"being deleted":            {w: deleting, want: Progressing, says: "being deleted"},
		"feedback met":             {w: withFeedback(work(1, applied, available), succeeded), expected: any1, want: Done},
		"feedback not reported":    {w: work(1, applied, available), expected: any1, want: Progressing, says: "succeeded=1 (reported [])"},
		"feedback other value":     {w: withFeedback(work(1, applied, available), zero), expected: any1, want: Progressing, says: "reported [0]"},
		"feedback on two manifests": {w: withFeedback(withFeedback(work(1, applied, available), succeeded), zero),
			expected: any1, want: Progressing},
		"TALM's form: the second manifest's value": {w: withFeedback(withFeedback(work(1, applied, available), zero), succeeded),
			expected: second1, want: Done},
		"TALM's form: the value on another manifest": {w: withFeedback(withFeedback(work(1, applied, available), succeeded), zero),
			expected: second1, want: Progressing, says: "succeeded=1 of manifest 1 (reported [0])"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Observe(tc.w, tc.expected)
			if got.State != tc.want || !strings.Contains(got.Message, tc.says) {
				t.Fatalf("Observe = %+v, want state %d saying %q", got, tc.want, tc.says)
			}
		})
	}
}

func TestExpected(t *testing.T) {
	tmpl := func(annotation string) *workv1alpha1.ManifestWorkReplicaSet {
		m := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"}}
		if annotation != "" {
			m.Annotations = map[string]string{AnnotationExpectedFeedback: annotation}
		}
		return m
	}
	if got, err := Expected(tmpl("")); got != nil || err != nil {
		t.Fatalf("no annotation: %v %v", got, err)
	}
	got, err := Expected(tmpl(`{"succeeded": 1, "phase": "Done", "ready": true}`))
	want := []Feedback{{AnyManifest, "phase", "Done"}, {AnyManifest, "ready", "true"}, {AnyManifest, "succeeded", "1"}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Expected = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{`[1]`, `{"a": {"b": 1}}`, `not json`} {
		if _, err := Expected(tmpl(bad)); err == nil || !strings.Contains(err.Error(), "ns/t") {
			t.Fatalf("%s: err %v, want one naming the template", bad, err)
		}
	}

	talm := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns", Annotations: map[string]string{
		AnnotationExpectedValues: `[{"manifestIndex": 2, "name": "isPrepCompleted", "value": "True"}, {"manifestIndex": 0, "name": "ready", "value": true}]`}}}
	got, err = Expected(talm)
	want = []Feedback{{2, "isPrepCompleted", "True"}, {0, "ready", "true"}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("TALM's annotation: Expected = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{`{"a": 1}`, `[{"name": "x", "value": "1"}]`, `[{"manifestIndex": -1, "name": "x", "value": "1"}]`, `[{"manifestIndex": 0, "value": "1"}]`} {
		talm.Annotations[AnnotationExpectedValues] = bad
		if _, err := Expected(talm); err == nil || !strings.Contains(err.Error(), "ns/t") {
			t.Fatalf("TALM's annotation %s: err %v, want one naming the template", bad, err)
		}
	}
}

func TestNewAndName(t *testing.T) {
	tmpl := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "ops"}}
	tmpl.Spec.ManifestWorkTemplate.Workload.Manifests = []workv1.Manifest{{}}
	w := New(tmpl, RolePre, "sno-1", ownership.Owner{Namespace: "ops", Name: "upgrade"})
	if w.Name != "ops-upgrade-pre-backup" || w.Namespace != "sno-1" || w.Labels[LabelRole] != "pre" ||
		w.Labels[labelUpgradeNamespace()] != "ops" || len(w.Spec.Workload.Manifests) != 1 {
		t.Fatalf("New = %s/%s labels %v", w.Namespace, w.Name, w.Labels)
	}
	if Name(ownership.Owner{Namespace: "ops", Name: "upgrade"}, RoleStep, "backup") != "ops-upgrade-backup" {
		t.Fatal("a step's name is namespace-cgu-template")
	}
	if n := Name(ownership.Owner{Namespace: "ops", Name: strings.Repeat("x", 253)}, RolePost, "t"); len(n) > 253 {
		t.Fatalf("name of %d characters", len(n))
	}
	// With TALM's name-suffix annotation, a step is named as TALM names it; actions keep ours.
	suffixed := ownership.Owner{Namespace: "default", Name: "ibu-upgrade", NameSuffix: "kuttl"}
	if got := Name(suffixed, RoleStep, "ibu-prep"); got != "default.ibu-prep-kuttl" {
		t.Fatalf("a suffixed step is %q, want TALM's default.ibu-prep-kuttl", got)
	}
	if got := Name(suffixed, RolePre, "backup"); got != "default-ibu-upgrade-pre-backup" {
		t.Fatalf("a suffixed action is %q", got)
	}
	if n := Name(ownership.Owner{Namespace: "ops", Name: "u", NameSuffix: "abcde"}, RoleStep, strings.Repeat("t", 260)); len(n) > 253 || !strings.HasSuffix(n, "-abcde") {
		t.Fatalf("a long suffixed step is %q (%d characters), want at most 253 ending in the suffix", n, len(n))
	}
	tmpl.Spec.ManifestWorkTemplate.Workload.Manifests = nil
	if len(w.Spec.Workload.Manifests) != 1 {
		t.Fatal("the work shares the template's spec")
	}
}

func labelUpgradeNamespace() string { return ownership.LabelUpgradeNamespace }
