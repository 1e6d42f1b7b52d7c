package mcu

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/hops"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/upgradepolicy"
)

// LabelMCU labels what a ManagedClustersUpgrade makes with its name (names.LabelValue).
const LabelMCU = "ran.openshift.io/mcu"

// Finalizer keeps a ManagedClustersUpgrade until what it made is deleted: its
// ClusterGroupUpgrade first, whose own cleanup stops every enforcement, then its policies.
const Finalizer = "ran.openshift.io/mcu-cleanup"

// LabelVersion is the label ACM sets on a ManagedCluster from its version claim
// (managedclusters.ClaimVersion), read when the claim is missing.
const LabelVersion = "openshiftVersion"

// Defaults of the upgrade strategy.
const (
	DefaultClusterUpgradeTimeout   = 2 * time.Hour
	DefaultOperatorsUpgradeTimeout = 10 * time.Minute
)

// Reasons of the conditions.
const (
	ReasonSelected          = "ManagedClustersSelected"
	ReasonNoClusters        = "NoClustersSelected"
	ReasonPlacementNotFound = "PlacementNotFound"
	ReasonGraphUnavailable  = "UpdateGraphUnavailable"
	ReasonChannelNotServed  = "ChannelNotServed"
	ReasonVersionNotFound   = "VersionNotFound"
	ReasonInvalidOperators  = "InvalidOperators"
	ReasonWaitingPolicies   = "WaitingForPolicies"
	ReasonApplied           = "UpgradeApplied"
	ReasonNothingToUpgrade  = "NothingToUpgrade"
	// ReasonTooManyStages: the paths make more updates than StageLimit.
	ReasonTooManyStages  = "TooManyStages"
	ReasonNotStarted     = "UpgradeNotStarted"
	ReasonInProgress     = "UpgradeInProgress"
	ReasonEnded          = "UpgradeEnded"
	ReasonComplete       = "UpgradeComplete"
	ReasonNotComplete    = "UpgradeNotComplete"
	ReasonClustersHeld   = "ClustersHeld"
	ReasonClustersFailed = "ClustersFailed"
	ReasonNoFailures     = "NoFailures"
)

// EventUpgradeApplied is the event of the ClusterGroupUpgrade's creation.
const EventUpgradeApplied = "UpgradeApplied"

// StageLimit is the most updates (stages) one rollout's plan holds, as status.stages does.
const StageLimit = 64

// GraphRetry is how often a rollout whose update graph could not be read asks again.
const GraphRetry = 30 * time.Second

// TopologyHighlyAvailable is the control-plane topology (the klusterlet's
// controlplanetopology.openshift.io claim) of a cluster of three control-plane nodes, with
// or without workers: a multi-node cluster, whose worker pool holds machines of its own.
const TopologyHighlyAvailable = "HighlyAvailable"

// Cluster is a selected cluster: its labels, the version it runs ("" unknown) and its
// control-plane topology claim ("" unknown).
type Cluster struct {
	Name     string
	Labels   map[string]string
	Version  string
	Topology string
}

// Child is the ClusterGroupUpgrade that runs the rollout, as gathered.
type Child struct {
	Name  string
	State ranv1alpha1.UpgradeState
	Ended bool
	// Clusters and Canaries are its spec's.
	Clusters, Canaries []string
	Batch              *ranv1alpha1.BatchStatus
	// States are the clusters' states from its batch records; a cluster in none is pending.
	// Reasons are the records' reasons, by cluster, where they give one.
	States  map[string]ranv1alpha1.ClusterState
	Reasons map[string]string
	// Policies are its managed policies, in order. At is, by cluster, the index of the
	// policy its record shows it on (len(Policies) once past the last); a cluster not
	// started is in none. SoftTimedOut are, by cluster, the best-effort policies it passed
	// without complying.
	Policies     []string
	At           map[string]int
	SoftTimedOut map[string][]string
}

// WorkState is what a pre- or post-action ManifestWork reports.
type WorkState struct {
	Applied, Available, Progressing, Degraded bool
}

// Facts are what one pass read.
type Facts struct {
	MCU *ranv1alpha1.ManagedClustersUpgrade
	Now time.Time
	// Clusters are the selected clusters, by name.
	Clusters []Cluster
	// MissingPlacements name the Placements of spec.placement not found.
	MissingPlacements []string
	// Graph is the channel's update graph; GraphErr why it could not be read. Neither is
	// read once the ClusterGroupUpgrade exists.
	Graph    *updategraph.Graph
	GraphErr error
	// Placed are, by policy name, the clusters each of the rollout's policies reports on.
	Placed map[string][]string
	// Upgrade is the rollout's ClusterGroupUpgrade, nil before it is made.
	Upgrade *Child
	// PreWorks and PostWorks are the action ManifestWorks of the ClusterGroupUpgrade, by cluster.
	PreWorks, PostWorks map[string]WorkState
	// Capacity are the clusters adding worker capacity, read from the placement of the
	// policy adding it once the ClusterGroupUpgrade exists.
	Capacity []string
}

// Intents are what a pass writes, in order: policies, Placements and PlacementBindings
// (made when missing), the action templates, then the ClusterGroupUpgrade; then the status.
type Intents struct {
	Policies   []*policyv1.Policy
	Placements []*clusterv1beta1.Placement
	Bindings   []*policyv1.PlacementBinding
	Templates  []*workv1alpha1.ManifestWorkReplicaSet
	Upgrade    *ranv1alpha1.ClusterGroupUpgrade
	Status     ranv1alpha1.ManagedClustersUpgradeStatus
	// Wait is set when the pass waits for what brings no event (the update service).
	Wait time.Duration
}

// PolicyName is the name of the policy that takes clusters to version.
func PolicyName(m *ranv1alpha1.ManagedClustersUpgrade, version string) string {
	return names.Safe(62-len(m.Namespace), m.Name, strings.ReplaceAll(version, ".", "-"))
}

// OperatorsPolicyName is the name of the policy of the operators' upgrades.
func OperatorsPolicyName(m *ranv1alpha1.ManagedClustersUpgrade) string {
	return names.Safe(62-len(m.Namespace), m.Name, "operators")
}

// TemplateName is the name of an action's ManifestWorkReplicaSet template.
func TemplateName(m *ranv1alpha1.ManagedClustersUpgrade, action string) string {
	return names.Safe(253, m.Name, action)
}

// Labels are the labels of what the rollout makes.
func Labels(m *ranv1alpha1.ManagedClustersUpgrade) map[string]string {
	return map[string]string{LabelMCU: names.LabelValue(m.Name)}
}

// Decide returns what a pass writes.
func Decide(f Facts) Intents {
	m := f.MCU
	var in Intents
	st := ranv1alpha1.ManagedClustersUpgradeStatus{ObservedGeneration: m.Generation, Conditions: slices.Clone(m.Status.Conditions)}
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: m.Generation})
	}
	if f.Upgrade != nil {
		running(f, &st, set)
		in.Status = st
		return in
	}
	if len(f.Clusters) > 0 && len(f.MissingPlacements) == 0 {
		set(ranv1alpha1.MCUConditionSelected, metav1.ConditionTrue, ReasonSelected, fmt.Sprintf("%d clusters selected", len(f.Clusters)))
	}
	if r := refusal(f); r != nil {
		set(r.condition, metav1.ConditionFalse, r.reason, r.message)
		if r.condition == ranv1alpha1.MCUConditionSelected {
			set(ranv1alpha1.MCUConditionApplied, metav1.ConditionFalse, r.reason, "nothing is applied: "+r.message)
		}
		notStarted(set)
		in.Status, in.Wait = st, r.wait
		return in
	}
	cv := m.Spec.ClusterVersion
	acceptance := hops.AcceptanceAt(acceptedRisks(m), f.Now)
	versions := make(map[string]string, len(f.Clusters))
	for _, c := range f.Clusters {
		versions[c.Name] = c.Version
	}
	stages, holds := hops.Plan(hops.Input{Graph: f.Graph, Channel: cv.Channel, Target: cv.Version, Versions: versions, Accepted: acceptance.Accepted})
	if len(stages) > StageLimit {
		set(ranv1alpha1.MCUConditionApplied, metav1.ConditionFalse, ReasonTooManyStages, fmt.Sprintf(
			"the selected clusters' paths make %d updates, more than the %d one rollout takes: select clusters closer in version", len(stages), StageLimit))
		notStarted(set)
		in.Status = st
		return in
	}
	byVersion := map[string][]string{}
	for _, s := range stages {
		byVersion[s.Version] = append(byVersion[s.Version], s.Clusters...)
		st.Stages = append(st.Stages, ranv1alpha1.MCUStage{Index: s.Index, Version: s.Version, Clusters: len(s.Clusters),
			Policy: PolicyName(m, s.Version), Risks: s.Risks})
	}
	st.Held, st.HeldNotShown = heldStatus(holds)
	staged := stagedClusters(stages)
	st.CanaryClustersSummary, st.ClustersSummary = planSummaries(f, staged, holds)
	if len(stages) == 0 {
		set(ranv1alpha1.MCUConditionApplied, metav1.ConditionFalse, ReasonNothingToUpgrade, "no selected cluster has an update to take")
		set(ranv1alpha1.MCUConditionInProgress, metav1.ConditionFalse, ReasonEnded, "no cluster upgrades")
		complete(f, st.ClustersSummary, set)
		in.Status = st
		return in
	}
	pausing := workersPaused(f.Clusters, stages)
	capacity := addingCapacity(m, f.Clusters, staged)
	if len(capacity) > 0 {
		st.WorkerCapacity = &ranv1alpha1.CapacitySummary{Total: len(capacity)}
	}
	policies := wanted(m, byVersion, pausing, capacity)
	in.Policies, in.Placements, in.Bindings = policies.policies, policies.placements, policies.bindings
	in.Templates = templates(m)
	if waiting := unplaced(f.Placed, policies.clusters); len(waiting) > 0 {
		set(ranv1alpha1.MCUConditionApplied, metav1.ConditionFalse, ReasonWaitingPolicies,
			fmt.Sprintf("waiting for the policies to reach their clusters: %s", strings.Join(waiting, "; ")))
		notStarted(set)
		in.Status = st
		return in
	}
	updates := maxHops(stages)
	if len(pausing) > 0 {
		updates++ // the workers' own update, once their pool is resumed
	}
	in.Upgrade = upgradeOf(m, policies.order, staged, canaries(f, staged), updates, len(capacity) > 0)
	set(ranv1alpha1.MCUConditionApplied, metav1.ConditionTrue, ReasonApplied,
		fmt.Sprintf("ClusterGroupUpgrade %s rolls %d clusters out through %d policies", m.Name, len(staged), len(policies.order)))
	notStarted(set)
	st.Upgrade = m.Name
	in.Status = st
	return in
}

// refused is why a rollout cannot be planned: the condition it sets False, and whether to
// look again later for what brings no event.
type refused struct {
	condition, reason, message string
	wait                       time.Duration
}

// refusal returns why the rollout cannot be planned, nil when it can: operators malformed or
// not supported, a Placement missing, no cluster, the graph unavailable, the channel or the
// release not served.
func refusal(f Facts) *refused {
	m, cv := f.MCU, f.MCU.Spec.ClusterVersion
	applied := func(reason, format string, args ...any) *refused {
		return &refused{condition: ranv1alpha1.MCUConditionApplied, reason: reason, message: fmt.Sprintf(format, args...)}
	}
	if err := operatorsOf(m).Validate(); err != nil {
		return applied(ReasonInvalidOperators, "spec.ocpOperators: %v", err)
	}
	if len(f.MissingPlacements) > 0 {
		return &refused{condition: ranv1alpha1.MCUConditionSelected, reason: ReasonPlacementNotFound,
			message: "Placement " + strings.Join(f.MissingPlacements, ", ") + " not found"}
	}
	if len(f.Clusters) == 0 {
		return &refused{condition: ranv1alpha1.MCUConditionSelected, reason: ReasonNoClusters,
			message: "the placements and the cluster selector select no ManagedCluster"}
	}
	switch {
	case f.GraphErr != nil:
		r := applied(ReasonGraphUnavailable, "the update graph of channel %s: %v", cv.Channel, f.GraphErr)
		r.wait = GraphRetry
		return r
	case f.Graph == nil || len(f.Graph.Nodes) == 0:
		return applied(ReasonChannelNotServed, "the update service serves no release in channel %s", cv.Channel)
	}
	if n, ok := f.Graph.Node(cv.Version); !ok || !n.InChannel(cv.Channel) {
		return applied(ReasonVersionNotFound, "release %s is not in channel %s", cv.Version, cv.Channel)
	}
	return nil
}

func notStarted(set func(string, metav1.ConditionStatus, string, string)) {
	set(ranv1alpha1.MCUConditionInProgress, metav1.ConditionFalse, ReasonNotStarted, "no cluster upgrades yet")
	set(ranv1alpha1.MCUConditionComplete, metav1.ConditionFalse, ReasonNotComplete, "the upgrade has not started")
	set(ranv1alpha1.MCUConditionFailed, metav1.ConditionFalse, ReasonNoFailures, "no cluster failed")
}

// running writes the status once the ClusterGroupUpgrade exists into st, whose conditions
// set writes: the plan as frozen, the summaries from the ClusterGroupUpgrade's clusters.
func running(f Facts, st *ranv1alpha1.ManagedClustersUpgradeStatus, set func(string, metav1.ConditionStatus, string, string)) {
	m, u := f.MCU, f.Upgrade
	st.Upgrade, st.Stages, st.Held, st.HeldNotShown = u.Name, m.Status.Stages, m.Status.Held, m.Status.HeldNotShown
	st.CurrentBatch = u.Batch
	// The clusters outside the ClusterGroupUpgrade were on the target or held by the plan
	// when it was made; the total and the plan's holds are frozen since.
	total := len(u.Clusters)
	if before := m.Status.ClustersSummary; before != nil {
		total = before.Total
	}
	planHeld := len(m.Status.Held) + m.Status.HeldNotShown
	all := summarize(u.States, u.Clusters)
	all.Total, all.Complete, all.Held = total, all.Complete+max(total-planHeld-len(u.Clusters), 0), all.Held+planHeld
	st.ClustersSummary = &all
	if len(u.Canaries) > 0 {
		c := summarize(u.States, u.Canaries)
		st.CanaryClustersSummary = &c
	}
	st.PreUpgradeActionSummary = actionSummary(m.Spec.PreUpgradeAction, f.PreWorks, u, preLastWord, m.Status.PreUpgradeActionSummary)
	st.PostUpgradeActionSummary = actionSummary(m.Spec.PostUpgradeAction, f.PostWorks, u, postLastWord, m.Status.PostUpgradeActionSummary)
	st.WorkerCapacity = capacitySummary(m, f.Capacity, u)
	set(ranv1alpha1.MCUConditionApplied, metav1.ConditionTrue, ReasonApplied, fmt.Sprintf("ClusterGroupUpgrade %s rolls the upgrade out", u.Name))
	switch {
	case u.Ended:
		set(ranv1alpha1.MCUConditionInProgress, metav1.ConditionFalse, ReasonEnded, fmt.Sprintf("ClusterGroupUpgrade %s ended %s", u.Name, u.State))
	case all.PartialUpgrade > 0:
		set(ranv1alpha1.MCUConditionInProgress, metav1.ConditionTrue, ReasonInProgress, fmt.Sprintf("%d clusters upgrading", all.PartialUpgrade))
	default:
		set(ranv1alpha1.MCUConditionInProgress, metav1.ConditionFalse, ReasonNotStarted, "no cluster upgrading")
	}
	complete(f, &all, set)
}

// complete sets Complete and Failed from the summary of every cluster.
func complete(f Facts, all *ranv1alpha1.ClustersSummary, set func(string, metav1.ConditionStatus, string, string)) {
	switch {
	case all.Complete == all.Total:
		set(ranv1alpha1.MCUConditionComplete, metav1.ConditionTrue, ReasonComplete,
			fmt.Sprintf("every selected cluster runs %s", f.MCU.Spec.ClusterVersion.Version))
	case all.Held > 0 && all.Complete+all.Held == all.Total:
		set(ranv1alpha1.MCUConditionComplete, metav1.ConditionFalse, ReasonClustersHeld,
			fmt.Sprintf("%d of %d clusters run %s; %d held (status.held says why)", all.Complete, all.Total, f.MCU.Spec.ClusterVersion.Version, all.Held))
	default:
		set(ranv1alpha1.MCUConditionComplete, metav1.ConditionFalse, ReasonNotComplete,
			fmt.Sprintf("%d of %d clusters run %s", all.Complete, all.Total, f.MCU.Spec.ClusterVersion.Version))
	}
	if all.Failed > 0 {
		set(ranv1alpha1.MCUConditionFailed, metav1.ConditionTrue, ReasonClustersFailed, fmt.Sprintf("%d clusters failed or timed out", all.Failed))
	} else {
		set(ranv1alpha1.MCUConditionFailed, metav1.ConditionFalse, ReasonNoFailures, "no cluster failed")
	}
}

// summarize counts clusters by their states in the ClusterGroupUpgrade; one in no batch
// record yet is pending.
func summarize(states map[string]ranv1alpha1.ClusterState, clusters []string) ranv1alpha1.ClustersSummary {
	s := ranv1alpha1.ClustersSummary{Total: len(clusters)}
	for _, c := range clusters {
		switch states[c] {
		case ranv1alpha1.ClusterInProgress:
			s.PartialUpgrade++
		case ranv1alpha1.ClusterCompleted:
			s.Complete++
		case ranv1alpha1.ClusterFailed, ranv1alpha1.ClusterTimedOut:
			s.Failed++
		case ranv1alpha1.ClusterHeld:
			s.Held++
		default:
			s.Pending++
		}
	}
	s.Initialized = s.PartialUpgrade + s.Complete + s.Failed
	return s
}

// planSummaries are the summaries before the ClusterGroupUpgrade exists: clusters on the
// target complete, held ones held, the others pending. The canaries counted are those with an
// update to take.
func planSummaries(f Facts, staged []string, holds []hops.Hold) (canary, all *ranv1alpha1.ClustersSummary) {
	all = &ranv1alpha1.ClustersSummary{Total: len(f.Clusters), Held: len(holds), Pending: len(staged)}
	all.Complete = all.Total - all.Held - all.Pending
	if c := canaries(f, staged); len(c) > 0 {
		canary = &ranv1alpha1.ClustersSummary{Total: len(c), Pending: len(c)}
	}
	return canary, all
}

// actionSummary counts an action's ManifestWorks, by cluster. The ClusterGroupUpgrade deletes
// its works as it ends, maybe before this controller saw their last report (a work going
// Degraded holds its cluster, which may end the rollout at once): a cluster whose work is gone
// counts as its batch record tells (lastWord). While no work is left and no record tells
// anything, the last count stays.
func actionSummary(action *ranv1alpha1.UpgradeAction, works map[string]WorkState, u *Child,
	lastWord func(ranv1alpha1.ClusterState, string) (WorkState, bool), before *ranv1alpha1.ActionSummary) *ranv1alpha1.ActionSummary {
	if action == nil {
		return nil
	}
	s := &ranv1alpha1.ActionSummary{}
	count := func(w WorkState) {
		s.Total++
		s.Applied += b2i(w.Applied)
		s.Available += b2i(w.Available)
		s.Progressing += b2i(w.Progressing)
		s.Degraded += b2i(w.Degraded)
	}
	told := false
	for _, c := range u.Clusters {
		w, ok := works[c]
		if !ok {
			w, ok = lastWord(u.States[c], u.Reasons[c])
			told = told || ok
		}
		if ok {
			count(w)
		}
	}
	for c, w := range works {
		if !slices.Contains(u.Clusters, c) {
			count(w)
		}
	}
	if len(works) == 0 && !told && before != nil {
		return before
	}
	return s
}

// preLastWord is what a cluster's batch record tells of its pre-upgrade action: Available
// for a cluster that went on to its update (the action had to be), Degraded for one the
// action held.
func preLastWord(state ranv1alpha1.ClusterState, reason string) (WorkState, bool) {
	switch {
	case state == ranv1alpha1.ClusterHeld && reason == manifestwork.ReasonPreUpgradeActionDegraded:
		return WorkState{Applied: true, Degraded: true}, true
	case state == ranv1alpha1.ClusterInProgress, state == ranv1alpha1.ClusterCompleted:
		return WorkState{Applied: true, Available: true}, true
	}
	return WorkState{}, false
}

// postLastWord is what a cluster's batch record tells of its post-upgrade action: Available
// for a completed cluster, Degraded for one the action failed.
func postLastWord(state ranv1alpha1.ClusterState, reason string) (WorkState, bool) {
	switch {
	case state == ranv1alpha1.ClusterFailed && reason == manifestwork.ReasonPostUpgradeActionDegraded:
		return WorkState{Applied: true, Degraded: true}, true
	case state == ranv1alpha1.ClusterCompleted:
		return WorkState{Applied: true, Available: true}, true
	}
	return WorkState{}, false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func heldStatus(holds []hops.Hold) ([]ranv1alpha1.MCUHold, int) {
	out := make([]ranv1alpha1.MCUHold, 0, min(len(holds), ranv1alpha1.ClusterDetailLimit))
	for _, h := range holds[:min(len(holds), ranv1alpha1.ClusterDetailLimit)] {
		out = append(out, ranv1alpha1.MCUHold{Cluster: h.Cluster, Reason: h.Reason, Message: h.Message})
	}
	if len(out) == 0 {
		out = nil
	}
	return out, len(holds) - len(out)
}

func stagedClusters(stages []hops.Stage) []string {
	var out []string
	for _, s := range stages {
		for _, c := range s.Clusters {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

func maxHops(stages []hops.Stage) int {
	n := 0
	for _, s := range stages {
		n = max(n, s.Index)
	}
	return n
}

// objects are the policies the rollout wants, and the clusters each is placed on.
type objects struct {
	policies   []*policyv1.Policy
	placements []*clusterv1beta1.Placement
	bindings   []*policyv1.PlacementBinding
	// order is the policies' names in the order the ClusterGroupUpgrade enforces them.
	order    []string
	clusters map[string][]string
}

// wanted builds one inform policy per version a cluster updates to, in version order (the
// order of every cluster's path), then the operators' policy, each with its Placement of the
// clusters that take it and its PlacementBinding. The clusters pausing their workers
// (workersPaused) get a policy pausing the worker pool before their first update, and one
// resuming it after their last. The clusters adding worker capacity (addingCapacity) get a
// policy adding it before their first update, and one removing it last, once their workers
// updated.
func wanted(m *ranv1alpha1.ManagedClustersUpgrade, byVersion map[string][]string, pausing, capacity []string) objects {
	o := objects{clusters: map[string][]string{}}
	if len(pausing) > 0 {
		pause := workerPoolPolicy(m, PausePolicyName(m), true)
		pause.Annotations = map[string]string{cgu.IntermediateAnnotation: "true"} // resumed after the last update
		o.add(m, pause, pausing)
	}
	if len(capacity) > 0 {
		o.add(m, addCapacityPolicy(m), capacity)
	}
	versions := slices.SortedFunc(maps.Keys(byVersion), hops.CompareVersions)
	cv := m.Spec.ClusterVersion
	var all []string
	for _, v := range versions {
		opts := upgradepolicy.Options{Name: PolicyName(m, v), Namespace: m.Namespace, Kind: upgradepolicy.KindClusterVersion,
			Version: v, Channel: cv.Channel, Upstream: cv.Upstream}
		if v == cv.Version {
			opts.Image = cv.Image
		}
		p, err := upgradepolicy.Generate(opts)
		if err != nil { // the versions come from the graph, which parsed them
			continue
		}
		if v != cv.Version {
			// A cluster that took the next update no longer runs this release.
			p.Annotations[cgu.IntermediateAnnotation] = "true"
		}
		clusters := slices.Sorted(slices.Values(byVersion[v]))
		o.add(m, p, clusters)
		all = append(all, clusters...)
	}
	if len(pausing) > 0 {
		o.add(m, workerPoolPolicy(m, ResumePolicyName(m), false), pausing)
	}
	if p := operatorsPolicy(m); p != nil {
		slices.Sort(all)
		o.add(m, p, slices.Compact(all))
	}
	if len(capacity) > 0 {
		o.add(m, removeCapacityPolicy(m), capacity)
	}
	return o
}

// workersPaused are the clusters whose worker pool is paused across their path, sorted:
// the multi-node ones (control-plane topology HighlyAvailable) that take more than one
// update, as OpenShift documents the EUS-to-EUS update: the workers reboot once, into the
// target, rather than once per update.
func workersPaused(clusters []Cluster, stages []hops.Stage) []string {
	updates := map[string]int{}
	for _, s := range stages {
		for _, c := range s.Clusters {
			updates[c] = max(updates[c], s.Index)
		}
	}
	var out []string
	for _, c := range clusters {
		if c.Topology == TopologyHighlyAvailable && updates[c.Name] > 1 {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

// PausePolicyName and ResumePolicyName name the policies that pause and resume the worker
// pool of the clusters that pause it.
func PausePolicyName(m *ranv1alpha1.ManagedClustersUpgrade) string {
	return names.Safe(62-len(m.Namespace), m.Name, "pause-workers")
}

// ResumePolicyName names the policy that resumes the worker pool (PausePolicyName).
func ResumePolicyName(m *ranv1alpha1.ManagedClustersUpgrade) string {
	return names.Safe(62-len(m.Namespace), m.Name, "resume-workers")
}

// workerPoolPolicy asks the worker MachineConfigPool to be paused, or resumed: a cluster
// complies with the resume once the pool is no longer paused and its machines run the
// release the cluster runs (the pool's Updated condition), so that the cluster completes
// only once its workers updated.
func workerPoolPolicy(m *ranv1alpha1.ManagedClustersUpgrade, name string, paused bool) *policyv1.Policy {
	pool := map[string]any{
		"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfigPool",
		"metadata": map[string]any{"name": "worker"},
		"spec":     map[string]any{"paused": paused},
	}
	if !paused {
		pool["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Updated", "status": "True"}}}
	}
	return configurationPolicy(m, name, map[string]any{
		"object-templates": []any{map[string]any{"complianceType": "musthave", "objectDefinition": pool}}})
}

func (o *objects) add(m *ranv1alpha1.ManagedClustersUpgrade, p *policyv1.Policy, clusters []string) {
	p.Labels = Labels(m)
	o.policies = append(o.policies, p)
	o.placements = append(o.placements, placementOf(m, p.Name, clusters))
	o.bindings = append(o.bindings, &policyv1.PlacementBinding{
		ObjectMeta:   metav1.ObjectMeta{Namespace: m.Namespace, Name: p.Name, Labels: Labels(m)},
		PlacementRef: policyv1.PlacementSubject{APIGroup: clusterv1beta1.GroupName, Kind: "Placement", Name: p.Name},
		Subjects:     []policyv1.Subject{{APIGroup: policyv1.GroupVersion.Group, Kind: policyv1.Kind, Name: p.Name}},
	})
	o.order = append(o.order, p.Name)
	o.clusters[p.Name] = clusters
}

// placementOf places a policy on clusters by name, tolerating clusters that are unreachable
// for now: the ClusterGroupUpgrade, not the placement, decides what happens to them.
func placementOf(m *ranv1alpha1.ManagedClustersUpgrade, name string, clusters []string) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: name, Labels: Labels(m)},
		Spec: clusterv1beta1.PlacementSpec{
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "name", Operator: metav1.LabelSelectorOpIn, Values: clusters}}},
			}}},
			Tolerations: []clusterv1beta1.Toleration{
				{Key: "cluster.open-cluster-management.io/unreachable", Operator: clusterv1beta1.TolerationOpExists},
				{Key: "cluster.open-cluster-management.io/unavailable", Operator: clusterv1beta1.TolerationOpExists},
			},
		},
	}
}

// unplaced names the policies whose status does not report on every cluster they are
// placed on yet, with how many they miss.
func unplaced(placed map[string][]string, want map[string][]string) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(want)) {
		missing := 0
		for _, c := range want[p] {
			if !slices.Contains(placed[p], c) {
				missing++
			}
		}
		if missing > 0 {
			out = append(out, fmt.Sprintf("%s on %d of %d clusters", p, len(want[p])-missing, len(want[p])))
		}
	}
	return out
}

// upgradeOf is the ClusterGroupUpgrade that rolls the policies out, enabled: a batch's time
// is one clusterUpgradeTimeout per update of the longest path, plus the operators' time and
// the time new worker machines may take.
func upgradeOf(m *ranv1alpha1.ManagedClustersUpgrade, policies, clusters, canaries []string, hopCount int, capacity bool) *ranv1alpha1.ClusterGroupUpgrade {
	s := m.Spec.UpgradeStrategy
	perHop := DefaultClusterUpgradeTimeout
	if s.ClusterUpgradeTimeout != nil {
		perHop = s.ClusterUpgradeTimeout.Duration
	}
	batch := perHop * time.Duration(hopCount)
	ops := m.Spec.OCPOperators
	if approvesOperators(m) {
		extra := DefaultOperatorsUpgradeTimeout
		if s.OperatorsUpgradeTimeout != nil {
			extra = s.OperatorsUpgradeTimeout.Duration
		}
		batch += extra
	}
	if capacity {
		batch += scaleTimeout(m)
	}
	concurrency := max(s.MaxConcurrency, 1)
	batches := len(canaries) + (len(clusters)-len(canaries)+concurrency-1)/concurrency
	minutes := int((batch*time.Duration(batches) + time.Minute - 1) / time.Minute)
	u := &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name, Labels: Labels(m)},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters: clusters, ManagedPolicies: policies, Enable: ptr.To(true),
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: concurrency, Timeout: minutes, Canaries: canaries},
		},
	}
	if ops != nil && len(ops.Include) > 0 {
		u.Spec.OperatorUpgrades = &ranv1alpha1.OperatorUpgrades{}
		for _, o := range ops.Include {
			u.Spec.OperatorUpgrades.Include = append(u.Spec.OperatorUpgrades.Include, ranv1alpha1.SubscriptionRef(o))
		}
		for _, o := range ops.Exclude {
			u.Spec.OperatorUpgrades.Exclude = append(u.Spec.OperatorUpgrades.Exclude, ranv1alpha1.SubscriptionRef(o))
		}
	}
	if r := m.Spec.Rollout; r != nil {
		r = r.DeepCopy()
		u.Spec.MaintenanceWindows, u.Spec.Approval, u.Spec.BatchSoak, u.Spec.MaxFailures, u.Spec.Analysis =
			r.MaintenanceWindows, r.Approval, r.BatchSoak, r.MaxFailures, r.Analysis
	}
	if m.Spec.PreUpgradeAction != nil {
		u.Spec.PreUpgradeActions = []string{TemplateName(m, "pre")}
	}
	if m.Spec.PostUpgradeAction != nil {
		u.Spec.PostUpgradeActions = []string{TemplateName(m, "post")}
	}
	return u
}

// templates are the ManifestWorkReplicaSets the ClusterGroupUpgrade reads its actions from.
func templates(m *ranv1alpha1.ManagedClustersUpgrade) []*workv1alpha1.ManifestWorkReplicaSet {
	var out []*workv1alpha1.ManifestWorkReplicaSet
	for _, a := range []struct {
		name   string
		action *ranv1alpha1.UpgradeAction
	}{{"pre", m.Spec.PreUpgradeAction}, {"post", m.Spec.PostUpgradeAction}} {
		if a.action == nil {
			continue
		}
		out = append(out, &workv1alpha1.ManifestWorkReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: TemplateName(m, a.name), Labels: Labels(m)},
			Spec: workv1alpha1.ManifestWorkReplicaSetSpec{ManifestWorkTemplate: *a.action.ManifestWork.DeepCopy(),
				// The engine makes the ManifestWorks itself; the placement is a placeholder, as TALM's.
				PlacementRefs: []workv1alpha1.LocalPlacementReference{{Name: "dummy"}}},
		})
	}
	return out
}

// canaries are the staged clusters the canary selector matches, by name.
func canaries(f Facts, staged []string) []string {
	sel := canarySelector(f.MCU)
	if sel == nil {
		return nil
	}
	var out []string
	for _, c := range matching(f.Clusters, sel) {
		if slices.Contains(staged, c) {
			out = append(out, c)
		}
	}
	return out
}

func canarySelector(m *ranv1alpha1.ManagedClustersUpgrade) labels.Selector {
	c := m.Spec.UpgradeStrategy.CanaryClusters
	if c == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&c.ClusterSelector)
	if err != nil || sel.Empty() {
		return nil
	}
	return sel
}

func matching(clusters []Cluster, sel labels.Selector) []string {
	var out []string
	for _, c := range clusters {
		if sel.Matches(labels.Set(c.Labels)) {
			out = append(out, c.Name)
		}
	}
	return out
}

func acceptedRisks(m *ranv1alpha1.ManagedClustersUpgrade) []hops.AcceptedRisk {
	out := make([]hops.AcceptedRisk, 0, len(m.Spec.AcceptedRisks))
	for _, r := range m.Spec.AcceptedRisks {
		a := hops.AcceptedRisk{Name: r.Name, By: r.AcceptedBy}
		if r.Until != nil {
			a.Until = r.Until.Time
		}
		out = append(out, a)
	}
	return out
}

func operatorsOf(m *ranv1alpha1.ManagedClustersUpgrade) Operators {
	ops := m.Spec.OCPOperators
	if ops == nil {
		return Operators{}
	}
	out := Operators{ApproveAll: ops.ApproveAllUpgrades}
	for _, o := range ops.Include {
		out.Include = append(out.Include, Operator(o))
	}
	for _, o := range ops.Exclude {
		out.Exclude = append(out.Exclude, Operator(o))
	}
	return out
}

// approvesOperators reports whether the rollout approves operators' upgrades: every one
// (approveAllUpgrades) or those included.
func approvesOperators(m *ranv1alpha1.ManagedClustersUpgrade) bool {
	ops := m.Spec.OCPOperators
	return ops != nil && (ops.ApproveAllUpgrades || len(ops.Include) > 0)
}

// operatorsPolicy is the policy of the operators' upgrades, nil when the rollout approves
// none. With include, it asks every included operator's Subscription to be at the latest
// version its channel offers, with Manual approval: a cluster complies once its pending
// InstallPlan is approved and installed, which the ClusterGroupUpgrade approves while it
// enforces the policy (spec.operatorUpgrades). With approveAllUpgrades the cluster lists its
// own Subscriptions (ApproveAllTemplates), and enforcing the policy there approves the plans.
func operatorsPolicy(m *ranv1alpha1.ManagedClustersUpgrade) *policyv1.Policy {
	ops := m.Spec.OCPOperators
	switch {
	case ops == nil:
		return nil
	case ops.ApproveAllUpgrades:
		return configurationPolicy(m, OperatorsPolicyName(m), map[string]any{
			"object-templates-raw": ApproveAllTemplates(operatorsOf(m).Exclude)})
	case len(ops.Include) == 0:
		return nil
	}
	var objs []any
	for _, o := range ops.Include {
		objs = append(objs, map[string]any{"complianceType": "musthave", "objectDefinition": map[string]any{
			"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
			"metadata": map[string]any{"name": o.Name, "namespace": o.Namespace},
			"spec":     map[string]any{"installPlanApproval": "Manual"},
			"status":   map[string]any{"state": "AtLatestKnown"},
		}})
	}
	return configurationPolicy(m, OperatorsPolicyName(m), map[string]any{"object-templates": objs})
}

// configurationPolicy is the inform policy name in the rollout's namespace holding one
// ConfigurationPolicy with the object templates of templates (object-templates or
// object-templates-raw).
func configurationPolicy(m *ranv1alpha1.ManagedClustersUpgrade, name string, templates map[string]any) *policyv1.Policy {
	spec := map[string]any{"remediationAction": "inform", "severity": "high"}
	maps.Copy(spec, templates)
	raw, _ := json.Marshal(map[string]any{
		"apiVersion": "policy.open-cluster-management.io/v1", "kind": "ConfigurationPolicy",
		"metadata": map[string]any{"name": name + "-config"},
		"spec":     spec,
	})
	return &policyv1.Policy{
		TypeMeta:   metav1.TypeMeta{APIVersion: policyv1.GroupVersion.String(), Kind: policyv1.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: name},
		Spec: policyv1.PolicySpec{RemediationAction: "inform",
			PolicyTemplates: []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: raw}}}},
	}
}

// StateOf says in one word where a rollout stands, and why: Complete, Failed (some cluster
// failed), InProgress, else the reason Selected, Applied or Complete is False for; "-"
// before the controller wrote a condition. kubectl cgu and the dashboard show it.
func StateOf(m *ranv1alpha1.ManagedClustersUpgrade) (state, message string) {
	conds := m.Status.Conditions
	for _, t := range []struct{ condition, state string }{
		{ranv1alpha1.MCUConditionComplete, "Complete"}, {ranv1alpha1.MCUConditionFailed, "Failed"}, {ranv1alpha1.MCUConditionInProgress, "InProgress"},
	} {
		if c := meta.FindStatusCondition(conds, t.condition); c != nil && c.Status == metav1.ConditionTrue {
			return t.state, c.Message
		}
	}
	for _, t := range []string{ranv1alpha1.MCUConditionSelected, ranv1alpha1.MCUConditionApplied, ranv1alpha1.MCUConditionComplete} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Status != metav1.ConditionTrue {
			return c.Reason, c.Message
		}
	}
	return "-", ""
}
