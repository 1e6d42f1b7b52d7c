package clustergroupupgrade_test

import (
	"context"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/emitter"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
)

const (
	policyNS = harness.PolicyNamespace
	from, to = harness.From, harness.To
	// settle bounds how long the hub takes to carry a change through the operator, the
	// propagator and the simulated spokes.
	settle = 60 * time.Second
)

// joinFleet adds n clusters named <label>-1..n, labelled fleet=<label>, each with a
// simulated spoke on version from; it returns their names.
func joinFleet(ctx context.Context, label string, n int) []string {
	return fleet.MustJoinFleet(ctx, label, n)
}

// placeUpgradePolicy creates the inform policy <label>-upgrade, upgrading to version to,
// placed on the fleet label, and waits until every cluster of the fleet reports on it.
func placeUpgradePolicy(ctx context.Context, label string, clusters int) *policyv1.Policy {
	return fleet.MustPlaceUpgradePolicy(ctx, label, clusters, settle)
}

// placeTemplatedPolicy creates the inform policy <label>-upgrade, whose ClusterVersion
// desiredUpdate is the hub template release, placed on the fleet label, and waits until its
// clusters report on it.
func placeTemplatedPolicy(ctx context.Context, label, release string, clusters int) *policyv1.Policy {
	GinkgoHelper()
	cv := world.ClusterVersionUpdated(release)
	p := world.NewPolicy(policyNS, label+"-upgrade", policyv1.Inform, world.ConfigPolicy{Name: label + "-cv", Objects: []map[string]any{cv}})
	Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})).To(Succeed())
	Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveLen(clusters))
	return p
}

// placeVersionPolicy creates an inform policy upgrading to version, placed on the fleet
// label, and waits until the policy reports on a cluster.
func placeVersionPolicy(ctx context.Context, label, version string) *policyv1.Policy {
	p := world.UpgradePolicy(policyNS, label+"-to-"+strings.ReplaceAll(version, ".", "-"), version, policyv1.Inform)
	Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})).To(Succeed())
	Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).ShouldNot(BeEmpty())
	return p
}

// nextMinor is the object of a policy updating to harness.NextMinor, in channel unless empty.
func nextMinor(channel string) map[string]any {
	obj := world.ClusterVersionUpdated(harness.NextMinor)
	if channel != "" {
		obj["spec"].(map[string]any)["channel"] = channel
	}
	return obj
}

// placeObjectPolicy creates an inform policy name with one object template, placed on the
// fleet label, and waits until the policy reports on a cluster.
func placeObjectPolicy(ctx context.Context, label, name string, obj map[string]any) *policyv1.Policy {
	p := world.NewPolicy(policyNS, name, policyv1.Inform, world.ConfigPolicy{Name: name + "-cv", Objects: []map[string]any{obj}})
	Expect(hub.PlacePolicy(ctx, p, metav1.LabelSelector{MatchLabels: map[string]string{"fleet": label}})).To(Succeed())
	Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).ShouldNot(BeEmpty())
	return p
}

// rootCompliance returns each cluster's compliance as the root policy's status shows it.
func rootCompliance(ctx context.Context, name string) func(Gomega) map[string]policyv1.ComplianceState {
	return func(g Gomega) map[string]policyv1.ComplianceState {
		out, err := hub.Compliance(ctx, policyNS, name)
		g.Expect(err).NotTo(HaveOccurred())
		return out
	}
}

// upgradeSpec is the spec of a CGU over clusters and policies, not enabled.
func newCGU(namespace, name string, clusters []string, maxConcurrency int, policyNames ...string) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters: clusters, ManagedPolicies: policyNames, Enable: ptr.To(false),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: maxConcurrency, Timeout: 240},
		},
	}
}

// state returns the CGU's state.
func state(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) ranv1alpha1.UpgradeState {
	return func(g Gomega) ranv1alpha1.UpgradeState { return fleet.Stored(ctx, cgu)(g).Status.State }
}

// condition returns one of the CGU's conditions, nil when absent.
func condition(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, kind string) func(Gomega) *metav1.Condition {
	return func(g Gomega) *metav1.Condition {
		for _, c := range fleet.Stored(ctx, cgu)(g).Status.Conditions {
			if c.Type == kind {
				return &c
			}
		}
		return nil
	}
}

func enable(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) {
	fleet.MustUpdate(ctx, cgu, func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Enable = ptr.To(true) })
}

// advance moves the operator's clock and makes it look at the CGUs again, as the timers it
// asked for would on a real clock.
func advance(ctx context.Context, d time.Duration, cgus ...*ranv1alpha1.ClusterGroupUpgrade) {
	fleet.Advance(ctx, d, cgus...)
}

// version returns the version a simulated cluster runs: the latest Completed in its
// ClusterVersion history.
func version(name string) func(Gomega) string {
	return func(g Gomega) string {
		cv, err := simulator.ClusterVersion(name)
		g.Expect(err).NotTo(HaveOccurred())
		for _, h := range cv.Status.History {
			if h.State == configv1.CompletedUpdate {
				return h.Version
			}
		}
		return ""
	}
}

// desired returns a simulated cluster's spec.desiredUpdate version, "" when unset.
func desired(name string) func(Gomega) string {
	return func(g Gomega) string {
		v, err := simulator.DesiredVersion(name)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}
}

// events counts the events regarding the CGU by reason.
func events(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) map[string]int {
	return func(g Gomega) map[string]int {
		return eventsOf(ctx, g, cgu.Namespace, "ClusterGroupUpgrade", cgu.Name)
	}
}

// eventsOf counts the events regarding an object of a kind, by reason.
func eventsOf(ctx context.Context, g Gomega, namespace, kind, name string) map[string]int {
	var list eventsv1.EventList
	g.Expect(hub.Client.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	out := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Regarding.Kind == kind {
			n := 1
			if e.Series != nil {
				n = int(e.Series.Count)
			}
			out[e.Reason] += n
		}
	}
	return out
}

// talmEvents counts the events regarding the CGU by action, for those written with TALM's
// reasons and annotations (pkg/talm).
func talmEvents(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) map[string]int {
	return func(g Gomega) map[string]int {
		out := map[string]int{}
		for _, e := range talmEventsOf(ctx, cgu, "")(g) {
			out[e.Action]++
		}
		return out
	}
}

// talmEventsOf returns the events with TALM's reasons regarding the CGU, of one action (all
// for "").
func talmEventsOf(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, action string) func(Gomega) []eventsv1.Event {
	return func(g Gomega) []eventsv1.Event {
		var list eventsv1.EventList
		g.Expect(hub.Client.List(ctx, &list, client.InNamespace(cgu.Namespace))).To(Succeed())
		var out []eventsv1.Event
		for _, e := range list.Items {
			if e.Regarding.Name == cgu.Name && e.ReportingController == emitter.Controller && (action == "" || e.Action == action) {
				out = append(out, e)
			}
		}
		return out
	}
}

// leftovers counts the governance objects made for the CGU, in every namespace: root
// policies, Placements and PlacementBindings.
func leftovers(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) func(Gomega) int {
	return func(g Gomega) int {
		n, err := fleet.Leftovers(ctx, cgu.Namespace, cgu.Name)
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
}

// keptOutOfBackup checks that every object the operator made for the CGU carries
// ownership.LabelExcludeFromBackup, and returns them ("Kind namespace/name").
func keptOutOfBackup(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) map[string]map[string]string {
	GinkgoHelper()
	made, err := fleet.Made(ctx, cgu.Namespace, cgu.Name)
	Expect(err).NotTo(HaveOccurred())
	for object, labels := range made {
		Expect(labels).To(HaveKeyWithValue(ownership.LabelExcludeFromBackup, "true"), object)
	}
	return made
}

// enforcedOn returns the clusters a managed policy of the CGU is enforced on: those whose
// replicated policy, of the original (Override) or of the CGU's copy (Copy), is enforce.
func enforcedOn(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, policy string) func(Gomega) []string {
	return enforcedThrough(ctx, originalRoot(policy), copyRoot(cgu, policy))
}

// originalRoot and copyRoot are the root-policy labels of a managed policy's replicated
// policies, and of those of the CGU's enforce copy of it.
func originalRoot(policy string) string { return policyNS + "." + policy }

func copyRoot(cgu *ranv1alpha1.ClusterGroupUpgrade, policy string) string {
	return cgu.Namespace + "." + names.PolicyCopy(cgu.Namespace, cgu.Name, policy)
}

// enforcedThrough returns the clusters whose replicated policy of one of roots is enforce.
func enforcedThrough(ctx context.Context, roots ...string) func(Gomega) []string {
	return func(g Gomega) []string {
		var list policyv1.PolicyList
		g.Expect(hub.Client.List(ctx, &list, client.HasLabels{sim.RootPolicyLabel})).To(Succeed())
		out := []string{}
		for _, p := range list.Items {
			// The propagator writes "enforce" for a binding override, a copy carries "Enforce".
			if strings.EqualFold(string(p.Spec.RemediationAction), string(policyv1.Enforce)) && slices.Contains(roots, p.Labels[sim.RootPolicyLabel]) {
				out = append(out, p.Namespace)
			}
		}
		slices.Sort(out)
		return out
	}
}

func keyOf(o client.Object) client.ObjectKey { return client.ObjectKeyFromObject(o) }

// enableOnCreate makes a CGU start as soon as it is created.
func enableOnCreate(cgu *ranv1alpha1.ClusterGroupUpgrade) { cgu.Spec.Enable = ptr.To(true) }

// stalledRollout starts, in mode, a rollout of two new clusters labelled label, batches of
// maxConcurrency, and waits until its stalled first cluster is enforced.
func stalledRollout(ctx context.Context, label string, mode ranv1alpha1.EnforcementMode, maxConcurrency int) ([]string, *policyv1.Policy, *ranv1alpha1.ClusterGroupUpgrade) {
	clusters := joinFleet(ctx, label, 2)
	p := placeUpgradePolicy(ctx, label, 2)
	stall(clusters[0])
	cgu := newCGU("cgu-"+label, "upgrade", clusters, maxConcurrency, p.Name)
	cgu.Spec.Enforcement = mode
	enableOnCreate(cgu)
	fleet.MustCreate(ctx, cgu)
	EventuallyWithOffset(1, enforcedOn(ctx, cgu, p.Name)).WithTimeout(settle).Should(Equal([]string{clusters[0]}))
	return clusters, p, cgu
}
