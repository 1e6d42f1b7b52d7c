package train

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
	"github.com/cgu-operator/cgu-operator/pkg/names"
)

// Labels of a train's rollouts: the train's name (names.LabelValue), the ring's and the
// release's.
const (
	LabelTrain   = "ran.openshift.io/release-train"
	LabelRing    = "ran.openshift.io/release-train-ring"
	LabelRelease = "ran.openshift.io/release-train-release"
	// LabelTrainNamespace is the train's namespace, on its ManifestWorks, which live in the
	// regional hubs' namespaces. It is the label of every object the operator makes for the
	// rollouts of a namespace (ownership.LabelUpgradeNamespace): the operator's cache of
	// ManifestWorks holds only those.
	LabelTrainNamespace = "ran.openshift.io/cgu-namespace"
)

// The feedback a regional hub's work agent reports from its rollout (JSON paths of the
// ManagedClustersUpgrade's status).
const (
	feedbackTotal      = "total"
	feedbackComplete   = "complete"
	feedbackFailed     = "failed"
	feedbackHeld       = "held"
	feedbackInProgress = "inProgress"
	feedbackApplied    = "applied"
	feedbackRefusal    = "appliedMessage"
)

var feedbackPaths = []workv1.JsonPath{
	{Name: feedbackTotal, Path: ".status.clustersSummary.total"},
	{Name: feedbackComplete, Path: ".status.clustersSummary.complete"},
	{Name: feedbackFailed, Path: ".status.clustersSummary.failed"},
	{Name: feedbackHeld, Path: ".status.clustersSummary.held"},
	{Name: feedbackInProgress, Path: `.status.conditions[?(@.type=="InProgress")].reason`},
	{Name: feedbackApplied, Path: `.status.conditions[?(@.type=="Applied")].reason`},
	{Name: feedbackRefusal, Path: `.status.conditions[?(@.type=="Applied")].message`},
}

// refusal says why a rollout's Applied condition refuses to go on, empty when it is applied or
// waits for its policies to reach their clusters (an expected wait).
func refusal(reason, message string) string {
	if reason == "" || reason == mcu.ReasonApplied || reason == mcu.ReasonWaitingPolicies {
		return ""
	}
	return reason + ": " + message
}

// Labels are the labels of a release's rollout in a ring.
func Labels(t *ranv1alpha1.ReleaseTrain, ring, version string) map[string]string {
	return map[string]string{LabelTrain: names.LabelValue(t.Name), LabelRing: ring, LabelRelease: version}
}

// Selector selects every rollout of a train: its ManagedClustersUpgrades (in its namespace)
// and its ManifestWorks (in any).
func Selector(t *ranv1alpha1.ReleaseTrain) map[string]string {
	return map[string]string{LabelTrain: names.LabelValue(t.Name), LabelTrainNamespace: t.Namespace}
}

// KeyOf returns the ring and release of a rollout from its labels.
func KeyOf(labels map[string]string) (Key, bool) {
	k := Key{Ring: labels[LabelRing], Version: labels[LabelRelease]}
	return k, k.Ring != "" && k.Version != ""
}

// MCU is the ManagedClustersUpgrade that runs a release in a ring, in namespace.
func MCU(t *ranv1alpha1.ReleaseTrain, p Planned, namespace string) *ranv1alpha1.ManagedClustersUpgrade {
	ring := t.Spec.Rings[p.Index].DeepCopy()
	// A release that failed the ring spreads no further in it: unless the ring says otherwise,
	// the rollout's failure budget is the ring's.
	if ring.Rollout == nil {
		ring.Rollout = &ranv1alpha1.MCURollout{}
	}
	if ring.Rollout.MaxFailures == nil {
		ring.Rollout.MaxFailures = ptr.To(intstr.FromInt32(ring.Qualification.MaxFailed))
	}
	return &ranv1alpha1.ManagedClustersUpgrade{
		TypeMeta:   metav1.TypeMeta{APIVersion: ranv1alpha1.GroupVersion.String(), Kind: "ManagedClustersUpgrade"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: p.Name, Labels: Labels(t, p.Ring, p.Version)},
		Spec: ranv1alpha1.ManagedClustersUpgradeSpec{
			Placement:       ring.Placement,
			ClusterSelector: ring.ClusterSelector,
			ClusterVersion: ranv1alpha1.MCUClusterVersion{
				Channel: t.Spec.Releases.Channel, Version: p.Version, Upstream: t.Spec.Releases.Upstream,
			},
			OCPOperators:    ring.OCPOperators,
			UpgradeStrategy: ring.UpgradeStrategy,
			Rollout:         ring.Rollout,
			AcceptedRisks:   ring.AcceptedRisks,
		},
	}
}

// HubNamespace is the namespace of a ring's rollouts on its regional hubs.
func HubNamespace(t *ranv1alpha1.ReleaseTrain, ring int) string {
	if ns := t.Spec.Rings[ring].HubNamespace; ns != "" {
		return ns
	}
	return t.Namespace
}

// Work is the ManifestWork that delivers a release's rollout in a ring to one regional hub:
// the ManagedClustersUpgrade, with the feedback this hub reads its progress from. The
// namespace must exist on the regional hub; deleting the work deletes the rollout there.
func Work(t *ranv1alpha1.ReleaseTrain, p Planned, hub string) (*workv1.ManifestWork, error) {
	ns := HubNamespace(t, p.Index)
	m := MCU(t, p, ns)
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	labels := Labels(t, p.Ring, p.Version)
	labels[LabelTrainNamespace] = t.Namespace
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: hub, Name: p.Name, Labels: labels},
		Spec: workv1.ManifestWorkSpec{
			Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}},
			ManifestConfigs: []workv1.ManifestConfigOption{{
				ResourceIdentifier: workv1.ResourceIdentifier{
					Group: ranv1alpha1.GroupVersion.Group, Resource: "managedclustersupgrades", Namespace: ns, Name: p.Name,
				},
				FeedbackRules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: feedbackPaths}},
				// The agent watches the rollout rather than reading it every 10 to 20 s.
				FeedbackScrapeType: workv1.FeedbackWatchType,
			}},
		},
	}, nil
}

// FromMCU is the part of a rollout a ManagedClustersUpgrade on this hub says.
func FromMCU(m *ranv1alpha1.ManagedClustersUpgrade) Part {
	pt := Part{Reporting: true}
	if s := m.Status.ClustersSummary; s != nil {
		pt.Reported = true
		pt.Total, pt.Complete, pt.Failed, pt.Held = s.Total, s.Complete, s.Failed, s.Held
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, ranv1alpha1.MCUConditionInProgress); c != nil {
		pt.Ended = c.Reason == mcu.ReasonEnded
	}
	if c := meta.FindStatusCondition(m.Status.Conditions, ranv1alpha1.MCUConditionApplied); c != nil && c.Status != metav1.ConditionTrue {
		pt.Blocked = refusal(c.Reason, c.Message)
	}
	return pt
}

// FromWork is the part of a rollout a regional hub reports through its work's feedback;
// available is whether the hub's ManagedCluster is available here.
func FromWork(hub string, w *workv1.ManifestWork, available bool) Part {
	pt := Part{Hub: hub, Reporting: available}
	if w == nil {
		return pt
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse {
		pt.Blocked = "its ManifestWork is not applied: " + notApplied(w, c.Message)
	}
	values := feedbackOf(w)
	count := func(name string) (int, bool) { return countOf(values, name) }
	if r, ok := values[feedbackApplied]; ok && r.String != nil && pt.Blocked == "" {
		msg := ""
		if m, ok := values[feedbackRefusal]; ok && m.String != nil {
			msg = *m.String
		}
		pt.Blocked = refusal(*r.String, msg)
	}
	total, ok := count(feedbackTotal)
	if !ok {
		return pt
	}
	pt.Reported, pt.Total = true, total
	pt.Complete, _ = count(feedbackComplete)
	pt.Failed, _ = count(feedbackFailed)
	pt.Held, _ = count(feedbackHeld)
	if v, ok := values[feedbackInProgress]; ok && v.String != nil {
		pt.Ended = *v.String == mcu.ReasonEnded
	}
	return pt
}

// feedbackOf is the feedback a work's agent reports, by name.
func feedbackOf(w *workv1.ManifestWork) map[string]workv1.FieldValue {
	values := map[string]workv1.FieldValue{}
	for _, m := range w.Status.ResourceStatus.Manifests {
		for _, v := range m.StatusFeedbacks.Values {
			values[v.Name] = v.Value
		}
	}
	return values
}

// countOf reads a count of the feedback: an integer, or a string of one.
func countOf(values map[string]workv1.FieldValue, name string) (int, bool) {
	v, ok := values[name]
	switch {
	case !ok:
		return 0, false
	case v.Integer != nil:
		return int(*v.Integer), true
	case v.String != nil:
		n, err := strconv.Atoi(*v.String)
		return n, err == nil
	}
	return 0, false
}

// notApplied is why a work is not applied: its first manifest's own Applied message (the work's
// says only that some manifest failed), or the work's.
func notApplied(w *workv1.ManifestWork, workMessage string) string {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if c := meta.FindStatusCondition(m.Conditions, workv1.ManifestApplied); c != nil && c.Status == metav1.ConditionFalse && c.Message != "" {
			return c.Message
		}
	}
	return workMessage
}

// Available reports whether a ManagedCluster is available: its agent reports to this hub.
func Available(mc *clusterv1.ManagedCluster) bool {
	return mc != nil && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)
}
