// Package story tells one cluster's part in a rollout for a person looking at a cluster that
// does not finish: its state and since when, its managed policies in order with their
// compliance, what it waits for, what its spoke reports, the events that name it, and its
// time against the rollout's other clusters. Gather reads the facts from the hub; Tell, a
// pure function, turns them into a Story that kubectl cgu status --managed-cluster prints
// and the dashboard serves as JSON.
package story

import (
	"fmt"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// Facts are what a cluster's story is told from, as Gather read them.
type Facts struct {
	// Upgrade is the ClusterGroupUpgrade.
	Upgrade *ranv1alpha1.ClusterGroupUpgrade
	// Records are its batch records (ClusterGroupUpgradeBatch), every batch and part; none
	// before the rollout started.
	Records []ranv1alpha1.ClusterGroupUpgradeBatch
	// Cluster is the managed cluster the story is about.
	Cluster string
	// Policies are what the cluster's namespace holds of each managed policy, by name.
	Policies map[string]PolicyFacts
	// ClusterVersion is the cluster's ClusterVersion as the rollout's ManagedClusterView last
	// showed it; nil with NoClusterVersion saying why when it shows none.
	ClusterVersion   *configv1.ClusterVersion
	NoClusterVersion string
	// Events are the events about the ClusterGroupUpgrade, of every cluster.
	Events []corev1.Event
	// Now is the time the story is told at.
	Now time.Time
}

// PolicyFacts are the replicas of one managed policy in the cluster's namespace.
type PolicyFacts struct {
	// Namespace is the managed policy's namespace, "" when the rollout has not resolved it.
	Namespace string
	// Replica is the propagator's copy of the managed policy in the cluster's namespace
	// (<namespace>.<name>): its compliance is the cluster's.
	Replica Replica
	// Bound is the replica of the enforce copy the rollout binds in Copy mode
	// (<cgu namespace>.<copy name>); nil when the rollout binds the managed policy itself
	// (Override mode) or its mode is not known yet.
	Bound *Replica
}

// Replica is what one replicated policy in the cluster's namespace says.
type Replica struct {
	// Name is the replica's name in the cluster's namespace.
	Name string
	// Found is false when the namespace holds no such replica.
	Found             bool
	Compliance        policyv1.ComplianceState
	RemediationAction policyv1.RemediationAction
	// Problem says why the replica could not be read (forbidden), "" when it was.
	Problem string
}

// Story is one cluster's part in a rollout.
type Story struct {
	// Upgrade is the ClusterGroupUpgrade, namespace/name.
	Upgrade string `json:"upgrade"`
	// Cluster is the managed cluster.
	Cluster string `json:"cluster"`
	// Batch is the batch the plan put the cluster in.
	Batch Batch `json:"batch"`
	// State is the cluster's state in the rollout (Pending before its batch started).
	State ranv1alpha1.ClusterState `json:"state"`
	// Since is when the cluster entered its state or, InProgress, started its current
	// policy; unset while Pending.
	Since *metav1.Time `json:"since,omitempty"`
	// Reason is the rollout's CamelCase reason for the cluster's state, if any, and
	// Explanation says it in plain words.
	Reason      string `json:"reason,omitempty"`
	Explanation string `json:"explanation,omitempty"`
	// Policies are the managed policies in spec.managedPolicies order, then the ManifestWork
	// steps (spec.manifestWorkTemplates).
	Policies []Policy `json:"policies"`
	// WaitsFor says in one sentence what the cluster waits for.
	WaitsFor string `json:"waitsFor"`
	// Spoke is what the cluster's ClusterVersion reports.
	Spoke Spoke `json:"spoke"`
	// Precache and Backup are the cluster's pre-caching and backup states as the rollout's
	// status lists them; "" when the rollout does neither.
	Precache string `json:"precache,omitempty"`
	Backup   string `json:"backup,omitempty"`
	// Events are the events about the rollout whose message names the cluster, newest
	// first, at most EventLimit.
	Events []Event `json:"events"`
	// Timing is the cluster's time against the rollout's completed clusters.
	Timing Timing `json:"timing"`
}

// Batch is the cluster's batch.
type Batch struct {
	// Index is the 1-based batch; Of is how many the plan has (0 when not known).
	Index int `json:"index"`
	Of    int `json:"of,omitempty"`
	// Canary is true for a canary batch.
	Canary bool `json:"canary,omitempty"`
	// Stage is the 1-based stage of a Progressive batch the cluster started in, 0 before
	// it starts and in other batches.
	Stage int `json:"stage,omitempty"`
	// Current is the batch the rollout is on (the last one started), 0 before the start.
	Current int `json:"current,omitempty"`
	// StartedAt and FinishedAt are the batch's start and end, once they happened.
	StartedAt  *metav1.Time `json:"startedAt,omitempty"`
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// Policy is one managed policy, or one ManifestWork step, as it stands on the cluster.
type Policy struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	// Step is true for a ManifestWork step (spec.manifestWorkTemplates), which has no
	// compliance of its own here.
	Step bool `json:"step,omitempty"`
	// Placed is true when the propagator replicated the policy to the cluster; Compliance is
	// then the replica's (Compliant, NonCompliant or Pending), "" before it reported.
	Placed     bool   `json:"placed"`
	Compliance string `json:"compliance,omitempty"`
	// Enforced is true while the hub enforces the policy on the cluster (the replica the
	// rollout binds has remediationAction enforce).
	Enforced bool `json:"enforced,omitempty"`
	// Current is true for the policy the cluster works on, or timed out or failed on.
	Current bool `json:"current,omitempty"`
	// SoftTimedOut is true for a best-effort policy the cluster moved past without
	// complying.
	SoftTimedOut bool `json:"softTimedOut,omitempty"`
	// CompliantBefore is true for a policy every selected cluster complied with before the
	// start: the rollout does not enforce it.
	CompliantBefore bool `json:"compliantBefore,omitempty"`
	// Problem says why the replica could not be read, if it could not.
	Problem string `json:"problem,omitempty"`
}

// Spoke is what the cluster's ClusterVersion reports, as the rollout's view shows it.
type Spoke struct {
	// Answered is false when the view shows no ClusterVersion; Problem then says why.
	Answered bool   `json:"answered"`
	Problem  string `json:"problem,omitempty"`
	// Desired is the version the cluster-version operator works towards.
	Desired string `json:"desired,omitempty"`
	// Latest is the latest entry of the ClusterVersion's history.
	Latest *Update `json:"latest,omitempty"`
	// Progressing is the message of the Progressing condition, Failing that of the Failing
	// condition while True.
	Progressing string `json:"progressing,omitempty"`
	Failing     string `json:"failing,omitempty"`
}

// Update is one entry of a ClusterVersion's history.
type Update struct {
	Version string `json:"version"`
	// State is Completed or Partial.
	State       string       `json:"state"`
	StartedAt   metav1.Time  `json:"startedAt"`
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// Event is one event about the rollout that names the cluster.
type Event struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
	Time    time.Time `json:"time"`
}

// EventLimit is how many events a story keeps.
const EventLimit = 20

// NotSelectedError says that a rollout does not select a cluster.
type NotSelectedError struct {
	// Upgrade is the ClusterGroupUpgrade, namespace/name; Cluster the cluster asked for.
	Upgrade, Cluster string
	// Clusters is how many clusters the rollout's plan has.
	Clusters int
	// Listed, when not zero, is how many of them a shortened status lists before the start:
	// the cluster is not among those, and may be among the others.
	Listed int
}

func (e *NotSelectedError) Error() string {
	if e.Listed > 0 {
		return fmt.Sprintf("cluster %s is not among the %d clusters the status of ClusterGroupUpgrade %s lists before its start "+
			"(its plan has %d: kubectl cgu plan shows them all)", e.Cluster, e.Listed, e.Upgrade, e.Clusters)
	}
	return fmt.Sprintf("ClusterGroupUpgrade %s does not select cluster %s: its plan has %s", e.Upgrade, e.Cluster, words.Plural(e.Clusters, "cluster"))
}

// Tell tells the story of f.Cluster in f.Upgrade's rollout; a cluster the rollout does not
// select is a *NotSelectedError.
func Tell(f Facts) (Story, error) {
	at, err := locate(f)
	if err != nil {
		return Story{}, err
	}
	cgu := f.Upgrade
	s := Story{
		Upgrade: cgu.Namespace + "/" + cgu.Name, Cluster: f.Cluster, Batch: at.batch,
		State: at.progress.State, Since: at.progress.Since, Reason: at.progress.Reason,
		Policies: policiesOf(f, at.progress),
		Spoke:    spokeOf(f),
		Events:   eventsOf(f.Events, f.Cluster),
		Timing:   timingOf(f, at),
	}
	s.Explanation = explain(cgu, f.Cluster, s.Reason)
	s.WaitsFor = waitsFor(f, at, s.Policies)
	s.Precache, s.Backup = precacheAndBackup(cgu.Status, f.Cluster)
	return s, nil
}

// place is where the plan put the cluster: its batch, and its progress there.
type place struct {
	batch    Batch
	progress ranv1alpha1.ClusterProgress
	// started tells when the cluster (a window's, a stage's) or else its batch started.
	started *metav1.Time
}

// locate finds the cluster in the batch records or, before the start, in the plan the
// status lists.
func locate(f Facts) (place, error) {
	cgu := f.Upgrade
	if len(f.Records) > 0 {
		return locateInRecords(f)
	}
	st := cgu.Status
	for i, clusters := range st.RemediationPlan {
		if slices.Contains(clusters, f.Cluster) {
			b := Batch{Index: i + 1, Of: len(st.RemediationPlan)}
			if st.Plan != nil {
				b.Of, b.Canary = st.Plan.Batches, i < st.Plan.CanaryBatches
			}
			return place{batch: b, progress: ranv1alpha1.ClusterProgress{Name: f.Cluster, State: ranv1alpha1.ClusterPending}}, nil
		}
	}
	e := &NotSelectedError{Upgrade: cgu.Namespace + "/" + cgu.Name, Cluster: f.Cluster, Clusters: st.Counts.Total}
	if st.Plan != nil {
		e.Clusters = st.Plan.Clusters
	}
	if sh := st.Shortened; sh != nil && sh.RemediationPlanClustersNotShown > 0 {
		e.Listed = e.Clusters - sh.RemediationPlanClustersNotShown
	}
	return place{}, e
}

func locateInRecords(f Facts) (place, error) {
	var at place
	found, total := false, 0
	for _, r := range f.Records {
		total += len(r.Spec.Clusters)
		at.batch.Of = max(at.batch.Of, r.Spec.Batches, r.Spec.Index)
		if r.Status.StartedAt != nil {
			at.batch.Current = max(at.batch.Current, r.Spec.Index)
		}
		if found || !slices.Contains(r.Spec.Clusters, f.Cluster) {
			continue
		}
		found = true
		at.batch.Index, at.batch.Canary = r.Spec.Index, r.Spec.Canary
		at.batch.StartedAt, at.batch.FinishedAt = r.Status.StartedAt, r.Status.FinishedAt
		at.progress = ranv1alpha1.ClusterProgress{Name: f.Cluster, State: ranv1alpha1.ClusterPending}
		if i := slices.IndexFunc(r.Status.Clusters, func(c ranv1alpha1.ClusterProgress) bool { return c.Name == f.Cluster }); i >= 0 {
			at.progress = r.Status.Clusters[i]
		}
		at.batch.Stage = at.progress.Stage
		at.started = startOf(at.progress, r.Status.StartedAt)
	}
	if !found {
		cgu := f.Upgrade
		return place{}, &NotSelectedError{Upgrade: cgu.Namespace + "/" + cgu.Name, Cluster: f.Cluster, Clusters: total}
	}
	return at, nil
}

// startOf is when a cluster started: its own start (a window's or a stage's cluster), else
// its batch's; nil for a cluster that never started.
func startOf(c ranv1alpha1.ClusterProgress, batchStarted *metav1.Time) *metav1.Time {
	switch {
	case neverStarted(c):
		return nil
	case c.StartedAt != nil:
		return c.StartedAt
	}
	return batchStarted
}

// neverStarted reports whether a cluster never started its policies: Pending, held by the
// upgrade checks, or timed out while it waited to start (which leaves the reason it waited
// for).
func neverStarted(c ranv1alpha1.ClusterProgress) bool {
	switch c.State {
	case ranv1alpha1.ClusterPending, "", ranv1alpha1.ClusterHeld:
		return true
	case ranv1alpha1.ClusterTimedOut:
		return c.Reason != ""
	}
	return false
}

// policiesOf lists the managed policies in spec order, then the steps, as they stand on the
// cluster.
func policiesOf(f Facts, c ranv1alpha1.ClusterProgress) []Policy {
	cgu := f.Upgrade
	out := make([]Policy, 0, len(cgu.Spec.ManagedPolicies)+len(cgu.Spec.ManifestWorkTemplates))
	// The policy a cluster works on, or the one it timed out or failed on.
	working := !neverStarted(c) && c.State != ranv1alpha1.ClusterCompleted && c.Reason != ranv1alpha1.ReasonVerifying
	for _, name := range cgu.Spec.ManagedPolicies {
		pf := f.Policies[name]
		p := Policy{Name: name, Namespace: pf.Namespace, Placed: pf.Replica.Found, Compliance: string(pf.Replica.Compliance),
			Problem:         pf.Replica.Problem,
			CompliantBefore: slices.Contains(cgu.Status.ManagedPoliciesCompliantBeforeUpgrade, name),
			Current:         working && c.CurrentPolicy == name, SoftTimedOut: slices.Contains(c.SoftTimedOut, name)}
		bound := pf.Replica
		if pf.Bound != nil {
			bound = *pf.Bound
		}
		p.Enforced = bound.Found && strings.EqualFold(string(bound.RemediationAction), string(policyv1.Enforce))
		if p.Problem == "" && pf.Bound != nil {
			p.Problem = pf.Bound.Problem
		}
		out = append(out, p)
	}
	for _, name := range cgu.Spec.ManifestWorkTemplates {
		out = append(out, Policy{Name: name, Step: true, Current: working && c.CurrentPolicy == name,
			SoftTimedOut: slices.Contains(c.SoftTimedOut, name)})
	}
	return out
}

// spokeOf is what the cluster's ClusterVersion reports.
func spokeOf(f Facts) Spoke {
	cv := f.ClusterVersion
	if cv == nil {
		problem := f.NoClusterVersion
		if uc := f.Upgrade.Spec.UpgradeChecks; uc == nil || !uc.PathValidation {
			problem = "the rollout keeps no view of its ClusterVersion (it makes one for spec.upgradeChecks.pathValidation only)"
		}
		return Spoke{Problem: problem}
	}
	s := Spoke{Answered: true, Desired: cv.Status.Desired.Version}
	if h := cv.Status.History; len(h) > 0 {
		s.Latest = &Update{Version: h[0].Version, State: string(h[0].State), StartedAt: h[0].StartedTime, CompletedAt: h[0].CompletionTime}
	}
	for _, c := range cv.Status.Conditions {
		switch {
		case c.Type == configv1.OperatorProgressing:
			s.Progressing = c.Message
		case c.Type == "Failing" && c.Status == configv1.ConditionTrue:
			s.Failing = c.Message
		}
	}
	return s
}

// precacheAndBackup are the cluster's pre-caching and backup states; "" for what the
// rollout does not do.
func precacheAndBackup(st ranv1alpha1.ClusterGroupUpgradeStatus, cluster string) (precache, backup string) {
	var shortened ranv1alpha1.ShortenedStatus
	if st.Shortened != nil {
		shortened = *st.Shortened
	}
	if st.Precaching != nil {
		precache = listedState(st.Precaching.Status, cluster, shortened.PrecachingClustersNotShown)
	}
	if st.Backup != nil {
		backup = listedState(st.Backup.Status, cluster, shortened.BackupClustersNotShown)
	}
	return precache, backup
}

// listedState is a cluster's state in a map the status may have shortened, which keeps the
// clusters that did not succeed first.
func listedState(states map[string]string, cluster string, notShown int) string {
	if s, ok := states[cluster]; ok {
		return s
	}
	if notShown > 0 {
		return fmt.Sprintf("not listed: the status leaves out %d clusters, those that succeeded first", notShown)
	}
	return "not listed"
}
