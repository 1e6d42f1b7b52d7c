package ibgu

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// decideAt is the time the Decide tests decide at.
var decideAt = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

// prepFacts: the sample's plan with nothing started, three clusters selected, the Prep
// template missing and nothing it needs missing.
func prepFacts() Facts {
	return Facts{
		IBGU: sample(),
		ClusterLabels: map[string]map[string]string{
			"sno-1": {"common": "true"}, "sno-2": {"common": "true"}, "sno-3": {"common": "true"},
		},
		Templates: map[lcmv1alpha1.Action]TemplateFact{"Prep": TemplateMissing, "Upgrade": TemplateMissing, "FinalizeUpgrade": TemplateMissing},
	}
}

// prepEnded: the Prep step ended, sno-1 and sno-2 completed it, sno-3 failed it.
func prepEnded(f Facts) Facts {
	f.Children = map[int]*Child{0: {Upgrade: StepName(f.IBGU.Name, []string{"Prep"}, 0), Ended: true, State: ranv1alpha1.StateCompleted,
		Clusters: map[string]Progress{
			"sno-1": {State: ranv1alpha1.ClusterCompleted}, "sno-2": {State: ranv1alpha1.ClusterCompleted},
			"sno-3": {State: ranv1alpha1.ClusterFailed, Template: TemplateName(f.IBGU.Name, "Prep"), Message: "pull failed"},
		}}}
	f.Templates["Prep"] = TemplateOwned
	return f
}

// labelled gives the clusters the labels of their Prep outcome.
func labelled(f Facts) Facts {
	f.ClusterLabels = map[string]map[string]string{
		"sno-1": {"common": "true", Label("Prep", Completed): ""}, "sno-2": {"common": "true", Label("Prep", Completed): ""},
		"sno-3": {"common": "true", Label("Prep", Failed): ""},
	}
	return f
}

func progressingReason(in Intents) string {
	if c := meta.FindStatusCondition(in.Status.Conditions, ConditionProgressing); c != nil {
		return c.Reason
	}
	return ""
}

func eventReasons(in Intents) []string {
	var out []string
	for _, e := range in.Events {
		out = append(out, e.Reason)
	}
	return out
}

// decideCases are the facts of a pass and what its intents must hold, one case for each kind
// of intent.
var decideCases = map[string]struct {
	facts func() Facts
	check func(t *testing.T, in Intents)
}{
	"a hub without ManifestWorks: nothing written but the status saying so": {
		facts: func() Facts { f := prepFacts(); f.WorksNotServed = true; return f },
		check: func(t *testing.T, in Intents) {
			if progressingReason(in) != ranv1alpha1.ReasonHubAPINotServed || in.Templates != nil || in.Step != nil {
				t.Errorf("got reason %q, templates %d, step %v", progressingReason(in), len(in.Templates), in.Step)
			}
		},
	},
	"the first step: its template first, no ClusterGroupUpgrade yet": {
		facts: prepFacts,
		check: func(t *testing.T, in Intents) {
			if len(in.Templates) != 1 || in.Templates[0].Name != TemplateName("upgrade-4.17", "Prep") || in.Step != nil {
				t.Fatalf("got templates %v, step %v", in.Templates, in.Step)
			}
			if in.Status.StartedAt != nil || len(in.Status.Steps) != 0 {
				t.Errorf("nothing started yet: %+v", in.Status)
			}
		},
	},
	"the first step with its template: its ClusterGroupUpgrade": {
		facts: func() Facts { f := prepFacts(); f.Templates["Prep"] = TemplateOwned; return f },
		check: func(t *testing.T, in Intents) {
			if in.Step == nil || in.Step.Name != StepName("upgrade-4.17", []string{"Prep"}, 0) || in.StepIndex != 0 {
				t.Fatalf("got step %v", in.Step)
			}
			if in.Status.StartedAt == nil || !in.Status.StartedAt.Equal(ptr.To(metav1.NewTime(decideAt))) || len(in.Status.Steps) != 1 {
				t.Errorf("the status shows the step started at %s: %+v", decideAt, in.Status)
			}
		},
	},
	"Prep waiting for its content: a warning, a condition, a wait and nothing made": {
		facts: func() Facts {
			f := prepFacts()
			f.PrepContent = Content{Missing: []string{"ConfigMap openshift-adp/oadp", "Secret ztp/pull"}}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Templates != nil || in.Step != nil || in.Wait == nil || in.Wait.After != ContentRetry {
				t.Fatalf("got templates %v, step %v, wait %v", in.Templates, in.Step, in.Wait)
			}
			c := meta.FindStatusCondition(in.Status.Conditions, ConditionProgressing)
			if c == nil || c.Reason != ReasonMissingContent || c.Message != "Plan step Prep waits for ConfigMap openshift-adp/oadp, Secret ztp/pull on the hub" {
				t.Errorf("got condition %+v", c)
			}
			if len(in.Events) != 1 || in.Events[0].Type != corev1.EventTypeWarning || in.Events[0].Reason != EventMissingContent {
				t.Errorf("got events %+v", in.Events)
			}
		},
	},
	"Prep refused content of another namespace (tenancy): a warning, a condition naming it, nothing made": {
		facts: func() Facts {
			f := prepFacts()
			f.PrepContent = Content{OutOfReach: []string{"ConfigMap openshift-adp/oadp"}, Missing: []string{"Secret ztp/pull"}}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Templates != nil || in.Step != nil || in.Wait == nil {
				t.Fatalf("got templates %v, step %v, wait %v", in.Templates, in.Step, in.Wait)
			}
			c := meta.FindStatusCondition(in.Status.Conditions, ConditionProgressing)
			want := "Plan step Prep may not send ConfigMap openshift-adp/oadp: tenancy mode allows content of namespace " + prepFacts().IBGU.Namespace + " only"
			if c == nil || c.Reason != ReasonMissingContent || c.Message != want {
				t.Errorf("got condition %+v, want %q", c, want)
			}
		},
	},
	"Prep's content goes into its template": {
		facts: func() Facts {
			f := prepFacts()
			f.PrepContent = Content{Objects: []runtime.Object{&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-adp", Name: "oadp"}}}}
			return f
		},
		check: func(t *testing.T, in Intents) {
			without := Decide(prepFacts(), decideAt)
			if len(in.Templates) != 1 || len(without.Templates) != 1 ||
				len(in.Templates[0].Spec.ManifestWorkTemplate.Workload.Manifests) != len(without.Templates[0].Spec.ManifestWorkTemplate.Workload.Manifests)+1 {
				t.Fatalf("want the Prep template with the ConfigMap beside its own manifests, got %+v", in.Templates)
			}
		},
	},
	"a foreign template in the way: a problem naming it, no status decided": {
		facts: func() Facts { f := prepFacts(); f.Templates["Prep"] = TemplateForeign; return f },
		check: func(t *testing.T, in Intents) {
			if in.Problem == nil || in.Problem.Error() != "ManifestWorkReplicaSet ztp/upgrade-4.17-prep exists and is not this ImageBasedGroupUpgrade's: delete or rename it" {
				t.Errorf("got problem %v", in.Problem)
			}
			if in.Templates != nil || in.Step != nil {
				t.Errorf("nothing is made beside it")
			}
		},
	},
	"a step ended: its clusters' labels first, and the next step waits for the cache to show them": {
		facts: func() Facts { return prepEnded(prepFacts()) },
		check: func(t *testing.T, in Intents) {
			want := map[string]string{"sno-1": Label("Prep", Completed), "sno-2": Label("Prep", Completed), "sno-3": Label("Prep", Failed)}
			if len(in.Labels) != 3 {
				t.Fatalf("got labels %v", in.Labels)
			}
			for c, l := range want {
				if v, ok := in.Labels[c][l]; !ok || v == nil || *v != "" {
					t.Errorf("%s: want label %s, got %v", c, l, in.Labels[c])
				}
			}
			if in.Wait == nil || in.Wait.After != CacheRetry || in.Templates != nil || in.Step != nil {
				t.Errorf("got wait %v, templates %v, step %v", in.Wait, in.Templates, in.Step)
			}
		},
	},
	"labels shown, the ended step's works still there: deleted, and the next step waits for them": {
		facts: func() Facts {
			f := labelled(prepEnded(prepFacts()))
			f.EndedWorks = []Work{{Namespace: "sno-3", Name: "w1"}, {Namespace: "sno-1", Name: "w2", Deleting: true}}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Labels != nil || len(in.DeleteWorks) != 1 || in.DeleteWorks[0].Name != "w1" {
				t.Fatalf("got labels %v, deletions %v", in.Labels, in.DeleteWorks)
			}
			if in.Wait == nil || in.Templates != nil || in.Step != nil {
				t.Errorf("got wait %v, templates %v, step %v", in.Wait, in.Templates, in.Step)
			}
		},
	},
	"labels shown, works gone: the next step's templates": {
		facts: func() Facts { return labelled(prepEnded(prepFacts())) },
		check: func(t *testing.T, in Intents) {
			if len(in.Templates) != 2 || in.Wait != nil || in.Step != nil {
				t.Errorf("got templates %d, wait %v, step %v", len(in.Templates), in.Wait, in.Step)
			}
		},
	},
	"a paused plan starts no step, and says so": {
		facts: func() Facts {
			f := labelled(prepEnded(prepFacts()))
			f.IBGU.Spec.Rollout = &lcmv1alpha1.StepRollout{Paused: true}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Templates != nil || in.Step != nil || progressingReason(in) != ranv1alpha1.ReasonPaused {
				t.Errorf("got templates %v, step %v, reason %q", in.Templates, in.Step, progressingReason(in))
			}
		},
	},
	"a paused plan pauses its running step": {
		facts: func() Facts {
			f := prepFacts()
			f.Children = map[int]*Child{0: {Upgrade: "u-prep-0"}}
			f.StepPaused = map[int]bool{0: false}
			f.IBGU.Spec.Rollout = &lcmv1alpha1.StepRollout{Paused: true}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Pause == nil || *in.Pause != (Pause{Upgrade: "u-prep-0", Paused: true}) {
				t.Errorf("got pause %v", in.Pause)
			}
		},
	},
	"a running step already as paused as the plan: nothing to write": {
		facts: func() Facts {
			f := prepFacts()
			f.Children = map[int]*Child{0: {Upgrade: "u-prep-0"}}
			f.StepPaused = map[int]bool{0: false}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Pause != nil || in.Step != nil || in.Templates != nil {
				t.Errorf("got pause %v, step %v, templates %v", in.Pause, in.Step, in.Templates)
			}
		},
	},
	"a step that selects no cluster is skipped, with an event": {
		facts: func() Facts {
			f := labelled(prepEnded(prepFacts()))
			for _, l := range f.ClusterLabels {
				delete(l, Label("Prep", Completed)) // Upgrade selects the clusters that completed Prep
			}
			f.Children[0].Clusters = map[string]Progress{"sno-3": f.Children[0].Clusters["sno-3"]}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if in.Step != nil || in.Templates != nil {
				t.Fatalf("got step %v, templates %v", in.Step, in.Templates)
			}
			if got := eventReasons(in); len(got) != 2 || got[0] != EventPlanStepSkipped || got[1] != EventPlanCompleted {
				t.Errorf("want the step skipped, then the plan completed (it was the last step), got %v", got)
			}
			if len(in.Status.Steps) != 2 {
				t.Errorf("the skipped step is in the status: %+v", in.Status.Steps)
			}
		},
	},
	"the last step ended: the plan completes, once": {
		facts: func() Facts {
			f := labelled(prepEnded(prepFacts()))
			f.Children[1] = &Child{Upgrade: "u-1", Ended: true, State: ranv1alpha1.StateCompleted}
			return f
		},
		check: func(t *testing.T, in Intents) {
			if progressingReason(in) != ReasonCompleted || in.Status.CompletedAt == nil {
				t.Fatalf("got reason %q, completedAt %v", progressingReason(in), in.Status.CompletedAt)
			}
			if got := eventReasons(in); len(got) != 1 || got[0] != EventPlanCompleted {
				t.Errorf("got events %v", got)
			}
		},
	},
}

func TestDecide(t *testing.T) {
	for name, tc := range decideCases {
		t.Run(name, func(t *testing.T) {
			f := tc.facts()
			before := f.IBGU.DeepCopy()
			in := Decide(f, decideAt)
			tc.check(t, in)
			if in.Problem == nil && in.Status.ObservedGeneration != f.IBGU.Generation {
				t.Errorf("observedGeneration %d, want %d", in.Status.ObservedGeneration, f.IBGU.Generation)
			}
			if !equality.Semantic.DeepEqual(before, f.IBGU) {
				t.Error("Decide changed the ImageBasedGroupUpgrade it read")
			}
		})
	}
}

func TestDecideCompletesOnce(t *testing.T) {
	f := labelled(prepEnded(prepFacts()))
	f.Children[1] = &Child{Upgrade: "u-1", Ended: true, State: ranv1alpha1.StateCompleted}
	in := Decide(f, decideAt)
	f.IBGU.Status = in.Status
	again := Decide(f, decideAt.Add(time.Minute))
	if len(again.Events) != 0 {
		t.Errorf("a completed plan says so once: got %v", eventReasons(again))
	}
	if !again.Status.CompletedAt.Equal(in.Status.CompletedAt) {
		t.Errorf("completedAt moved: %v, then %v", in.Status.CompletedAt, again.Status.CompletedAt)
	}
}

func TestPullSecretCopied(t *testing.T) {
	g := &lcmv1alpha1.ImageBasedGroupUpgrade{}
	if PullSecretCopied(g) {
		t.Error("no pull secret named, yet copied")
	}
	g.Spec.IBUSpec.SeedImageRef.PullSecretRef = &lcmv1alpha1.PullSecretRef{Name: "seed-pull"}
	if !PullSecretCopied(g) {
		t.Error("a named pull secret is not copied by default (TALM's way)")
	}
	g.Annotations = map[string]string{AnnotationPullSecretDelivery: PullSecretByReference}
	if PullSecretCopied(g) {
		t.Error("a pull secret delivered by reference is copied")
	}
}
