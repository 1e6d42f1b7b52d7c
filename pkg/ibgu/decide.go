package ibgu

import (
	"fmt"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Reasons of the events of an ImageBasedGroupUpgrade (TALM records none).
const (
	// EventPlanStepStarted: the ClusterGroupUpgrade of a plan step was created.
	EventPlanStepStarted = "PlanStepStarted"
	// EventPlanStepSkipped: a plan step selected no cluster and was skipped.
	EventPlanStepSkipped = "PlanStepSkipped"
	// EventPlanCompleted: every step of the plan ended.
	EventPlanCompleted = "PlanCompleted"
	// EventMissingContent: the Prep step waits for ConfigMaps or a Secret of its ibuSpec.
	EventMissingContent = "MissingContent"
)

// ReasonMissingContent (Progressing=False) is beyond TALM's InProgress and Completed: the
// Prep step waits for the OADP ConfigMaps or the seed image's pull secret its ibuSpec
// names; the message names them.
const ReasonMissingContent = "MissingContent"

// Waits of a pass, each ended by a watch event or, for what the operator does not watch,
// by the timer.
const (
	// CacheRetry bounds the wait for the cache to show the operator's own writes (cluster
	// labels) and for ended steps' ManifestWorks to go.
	CacheRetry = time.Second
	// ContentRetry is how often a Prep step that waits for ConfigMaps or a Secret (which
	// the operator does not watch) looks again.
	ContentRetry = 10 * time.Second
)

// Facts are what one pass read of an ImageBasedGroupUpgrade and of what it drives, from the
// cache. Decide reads them and changes none.
type Facts struct {
	IBGU *lcmv1alpha1.ImageBasedGroupUpgrade
	// WorksNotServed is true on a hub that serves no ManifestWork API.
	WorksNotServed bool
	// Children are the plan's steps by index: those with a ClusterGroupUpgrade, and those
	// the status says were skipped.
	Children map[int]*Child
	// StepPaused is spec.paused of each step's ClusterGroupUpgrade, by index.
	StepPaused map[int]bool
	// ClusterLabels are the labels of every ManagedCluster, by name.
	ClusterLabels map[string]map[string]string
	// EndedWorks are the ManifestWorks of the steps that ended, still in the cache.
	EndedWorks []Work
	// Templates are the ManifestWorkReplicaSet templates of the plan's actions.
	Templates map[lcmv1alpha1.Action]TemplateFact
	// PrepContent is what the Prep template carries, read while that template is missing.
	PrepContent Content
}

// Work names a ManifestWork; Deleting is true once its deletion started.
type Work struct {
	Namespace, Name string
	Deleting        bool
}

// TemplateFact is what the hub holds under an action's template name.
type TemplateFact int

// What the hub holds under a template's name.
const (
	TemplateMissing TemplateFact = iota
	TemplateOwned
	// TemplateForeign: a ManifestWorkReplicaSet of that name that this
	// ImageBasedGroupUpgrade does not own.
	TemplateForeign
)

// Content is what the Prep template sends with the ImageBasedUpgrade: the OADP ConfigMaps
// and the seed image's pull secret found on the hub, and the names of those missing.
type Content struct {
	Objects []runtime.Object
	Missing []string
	// OutOfReach are the ConfigMaps of other namespaces, in tenancy mode, which Prep may
	// not send.
	OutOfReach []string
}

// Intents are what a pass writes, in order: cluster labels, deletions of ended steps'
// ManifestWorks, the running step's pause, new templates, the next step's
// ClusterGroupUpgrade; then the status, then the events it carries.
type Intents struct {
	// Labels are the label changes by cluster (nil value: remove).
	Labels map[string]map[string]*string
	// DeleteWorks are ManifestWorks of ended steps to delete.
	DeleteWorks []Work
	// Pause sets spec.paused of the running step's ClusterGroupUpgrade.
	Pause *Pause
	// Templates are templates to create.
	Templates []*workv1alpha1.ManifestWorkReplicaSet
	// Step is the ClusterGroupUpgrade of the next step, to create; StepIndex is its index.
	Step      *ranv1alpha1.ClusterGroupUpgrade
	StepIndex int
	// Status is the status to write.
	Status lcmv1alpha1.ImageBasedGroupUpgradeStatus
	// Events are written once the status is.
	Events []Event
	// Wait is set when the pass waits for something to change that may bring no event.
	Wait *Wait
	// Problem is set when the plan cannot go on until a person acts: the pass fails with it.
	Problem error

	// missing says what the Prep step waits for that a person must make.
	missing string
}

// Foreign is the problem of an object of one of the ImageBasedGroupUpgrade's names that it
// does not own: the plan cannot go on until a person deletes or renames it. The operator does
// not watch objects it does not own, so the pass looks again every ContentRetry rather than
// backing off.
type Foreign struct {
	// Object names it: its kind, namespace and name, and what it stands in the way of.
	Object string
}

func (e *Foreign) Error() string {
	return e.Object + " exists and is not this ImageBasedGroupUpgrade's: delete or rename it"
}

// Pause is the value to give a step's spec.paused.
type Pause struct {
	Upgrade string
	Paused  bool
}

// Event is an event regarding the ImageBasedGroupUpgrade.
type Event struct {
	Type, Reason, Message string
}

// Wait is why a pass looks again, and when at the latest.
type Wait struct {
	Reason string
	After  time.Duration
}

// Decide decides one pass from the facts, at now. The plan's steps run one after the
// other: the labels of the clusters' outcomes come first and the next step starts only once
// the cache shows them (it selects by them); the ended steps' ManifestWorks go before the
// next step's come (two works would fight over one ImageBasedUpgrade); a paused plan starts
// no step; a step starts with its templates, then its ClusterGroupUpgrade.
func Decide(f Facts, now time.Time) Intents {
	g := f.IBGU
	in := Intents{Status: *g.Status.DeepCopy()}
	in.Status.ObservedGeneration = g.Generation
	if f.WorksNotServed {
		in.progressing(g, metav1.ConditionFalse, ranv1alpha1.ReasonHubAPINotServed,
			"The hub serves no ManifestWork or ManifestWorkReplicaSet API: image-based upgrades run through ManifestWorks")
		return in
	}
	children := maps.Clone(f.Children)
	if children == nil {
		children = map[int]*Child{}
	}
	clusters := Clusters(g, children)
	in.Status.Clusters, in.Status.ClustersNotShown = Bound(clusters, MaxClustersBytes)
	wasCompleted := PlanCompleted(g)
	in.advance(f, children, clusters, wasCompleted)
	if in.Problem == nil {
		in.setStatus(f, children, now, wasCompleted)
	}
	return in
}

// advance decides the writes of the pass, stopping at the first wait.
func (in *Intents) advance(f Facts, children map[int]*Child, clusters []lcmv1alpha1.ClusterState, wasCompleted bool) {
	g := f.IBGU
	create, running, done := Next(g.Spec.Plan, children)
	if !wasCompleted {
		in.Labels = labelChanges(clusters, f.ClusterLabels)
		if len(in.Labels) > 0 && !done {
			in.Wait = &Wait{Reason: "the cache to show the cluster labels written", After: CacheRetry}
			return
		}
	}
	for _, w := range f.EndedWorks {
		if !w.Deleting {
			in.DeleteWorks = append(in.DeleteWorks, w)
		}
	}
	if len(f.EndedWorks) > 0 {
		in.Wait = &Wait{Reason: fmt.Sprintf("%d ManifestWorks of the steps that ended to be deleted", len(f.EndedWorks)), After: CacheRetry}
		return
	}
	paused := g.Spec.Rollout != nil && g.Spec.Rollout.Paused
	if running >= 0 && children[running].Upgrade != "" && f.StepPaused[running] != paused {
		in.Pause = &Pause{Upgrade: children[running].Upgrade, Paused: paused}
	}
	if create >= 0 && !paused {
		in.startStep(f, children, create)
	}
}

// PlanCompleted reports whether the status already says that every step of the current plan
// ended and its labels were written: then the labels are no longer this
// ImageBasedGroupUpgrade's to keep (a later one may change them).
func PlanCompleted(g *lcmv1alpha1.ImageBasedGroupUpgrade) bool {
	c := meta.FindStatusCondition(g.Status.Conditions, ConditionProgressing)
	return c != nil && c.Reason == ReasonCompleted && g.Status.ObservedGeneration == g.Generation
}

// labelChanges are the label changes the clusters' states call for, on the clusters that
// still exist.
func labelChanges(clusters []lcmv1alpha1.ClusterState, current map[string]map[string]string) map[string]map[string]*string {
	var out map[string]map[string]*string
	for _, c := range clusters {
		have, ok := current[c.Name]
		if !ok {
			continue // the cluster is gone
		}
		if changes := LabelChanges(c, have); changes != nil {
			if out == nil {
				out = map[string]map[string]*string{}
			}
			out[c.Name] = changes
		}
	}
	return out
}

// startStep starts plan step i: a step that selects no cluster is skipped; else its
// templates come first (their events bring the next pass), then its ClusterGroupUpgrade.
func (in *Intents) startStep(f Facts, children map[int]*Child, i int) {
	g := f.IBGU
	item := g.Spec.Plan[i]
	selectors := Selectors(g.Spec.ClusterLabelSelectors, item.Actions[0])
	if !selectsAny(selectors, f.ClusterLabels) {
		children[i] = &Child{Skipped: true, Ended: true}
		in.Events = append(in.Events, Event{Type: corev1.EventTypeNormal, Reason: EventPlanStepSkipped,
			Message: fmt.Sprintf("Plan step %d (%s) selects no cluster: skipped", i, strings.Join(item.Actions, ", "))})
		return
	}
	ready := true
	for _, action := range item.Actions {
		switch f.Templates[action] {
		case TemplateOwned:
			continue
		case TemplateForeign:
			in.Problem = &Foreign{Object: fmt.Sprintf("ManifestWorkReplicaSet %s/%s", g.Namespace, TemplateName(g.Name, action))}
			return
		}
		var extra []runtime.Object
		if action == lcmv1alpha1.ActionPrep {
			if far := f.PrepContent.OutOfReach; len(far) > 0 {
				in.missingContent(fmt.Sprintf("Plan step Prep may not send %s: tenancy mode allows content of namespace %s only",
					strings.Join(far, ", "), g.Namespace))
				return
			}
			if missing := f.PrepContent.Missing; len(missing) > 0 {
				in.missingContent(fmt.Sprintf("Plan step Prep waits for %s on the hub", strings.Join(missing, ", ")))
				return
			}
			extra = f.PrepContent.Objects
		}
		t, err := Template(g, action, extra)
		if err != nil {
			in.Problem = err
			return
		}
		in.Templates = append(in.Templates, t)
		ready = false
	}
	if !ready {
		return
	}
	in.Step, in.StepIndex = Step(g, i, stepCanaries(g, selectors, f.ClusterLabels)), i
	children[i] = &Child{Upgrade: in.Step.Name, Clusters: map[string]Progress{}}
}

// missingContent waits for what the Prep step needs that a person must make.
func (in *Intents) missingContent(msg string) {
	in.Events = append(in.Events, Event{Type: corev1.EventTypeWarning, Reason: EventMissingContent, Message: msg})
	in.Wait, in.missing = &Wait{Reason: msg, After: ContentRetry}, msg
}

// StepStarted is the event of a step whose ClusterGroupUpgrade was created.
func StepStarted(g *lcmv1alpha1.ImageBasedGroupUpgrade, i int, upgrade string) Event {
	return Event{Type: corev1.EventTypeNormal, Reason: EventPlanStepStarted,
		Message: fmt.Sprintf("Plan step %d (%s) started: ClusterGroupUpgrade %s", i, strings.Join(g.Spec.Plan[i].Actions, ", "), upgrade)}
}

// setStatus fills the status from where the plan stands after the pass's intents.
func (in *Intents) setStatus(f Facts, children map[int]*Child, now time.Time, wasCompleted bool) {
	g := f.IBGU
	st := &in.Status
	st.Steps = Steps(g.Spec.Plan, children)
	c := Progressing(g.Spec.Plan, children)
	c.ObservedGeneration = g.Generation
	meta.SetStatusCondition(&st.Conditions, c)
	stamp := metav1.NewTime(now).Rfc3339Copy()
	if st.StartedAt == nil && len(children) > 0 {
		st.StartedAt = &stamp
	}
	switch {
	case c.Reason != ReasonCompleted:
		st.CompletedAt = nil // a step appended to a completed plan runs again
	case st.CompletedAt == nil:
		st.CompletedAt = &stamp
	}
	create, _, _ := Next(g.Spec.Plan, children)
	switch {
	case in.missing != "":
		in.progressing(g, metav1.ConditionFalse, ReasonMissingContent, in.missing)
	case create >= 0 && in.Wait == nil && g.Spec.Rollout != nil && g.Spec.Rollout.Paused:
		in.progressing(g, metav1.ConditionTrue, ranv1alpha1.ReasonPaused,
			fmt.Sprintf("Paused before plan step %d: set spec.rollout.paused to false to go on", create))
	case !wasCompleted && c.Reason == ReasonCompleted:
		in.Events = append(in.Events, Event{Type: corev1.EventTypeNormal, Reason: EventPlanCompleted, Message: c.Message})
	}
}

func (in *Intents) progressing(g *lcmv1alpha1.ImageBasedGroupUpgrade, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&in.Status.Conditions, metav1.Condition{Type: ConditionProgressing, Status: status,
		Reason: reason, Message: message, ObservedGeneration: g.Generation})
}

// stepCanaries are the canaries of spec.rollout that the step's selectors select.
func stepCanaries(g *lcmv1alpha1.ImageBasedGroupUpgrade, selectors []ranv1alpha1.ClusterLabelSelector, clusters map[string]map[string]string) []string {
	if g.Spec.Rollout == nil {
		return nil
	}
	var out []string
	for _, c := range g.Spec.Rollout.Canaries {
		if l, ok := clusters[c]; ok && selectsAny(selectors, map[string]map[string]string{c: l}) {
			out = append(out, c)
		}
	}
	return out
}

// selectsAny reports whether a cluster matches one of the selectors.
func selectsAny(selectors []ranv1alpha1.ClusterLabelSelector, clusters map[string]map[string]string) bool {
	for _, s := range selectors {
		ls := s.LabelSelector()
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			continue // the CRD refuses what cannot be parsed
		}
		for _, l := range clusters {
			if sel.Matches(labels.Set(l)) {
				return true
			}
		}
	}
	return false
}
