package cgu

import (
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/installplan"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// Intents are what one reconcile decided: the writes the controller makes, in the order
// it makes them (cluster actions, the plan's records at the start, enforcement, the records'
// progress, InstallPlan approval, the spoke-side objects), and the status it writes last.
type Intents struct {
	// Settled is true for a rollout that completed before this pass: nothing is decided,
	// Cleanup says whether its objects are deleted, and Status keeps what it showed.
	Settled bool
	Cleanup bool
	// Mode is how the rollout enforces its policies: the recorded mode once started.
	Mode ranv1alpha1.EnforcementMode
	// Invalid is why the rollout cannot start with this spec (the selection's problem
	// first); nil once started.
	Invalid *rollout.Problem
	// Plan is the plan, without the clusters whose pre-caching or backup failed.
	Plan     plan.Plan
	Decision rollout.Decision
	// StartedNow is true when this pass starts the rollout.
	StartedNow bool
	// Approvals are the recorded approvals and a new one from the annotations.
	Approvals []ranv1alpha1.BatchApproval
	// Records are the batch records the pass works with: those read, or at the start the
	// plan's (made before anything is enforced); RecordStatus is each one's progress by name.
	Records      []ranv1alpha1.ClusterGroupUpgradeBatch
	RecordStatus map[string]ranv1alpha1.ClusterGroupUpgradeBatchStatus
	// Rebuilt are records to make again, with their status, before anything is enforced.
	Rebuilt []ranv1alpha1.ClusterGroupUpgradeBatch
	// Actions are the clusters whose spec.actions run this pass. ActionsProblem says, once
	// started, why none runs: the actions hold keys or values no ManagedCluster takes.
	Actions        Actions
	ActionsProblem *rollout.Problem
	// Enforcement is what binds each managed policy to the clusters working on it.
	Enforcement Enforcement
	// Spoke are the spoke-side objects to make: each is made only when missing.
	Spoke Spoke
	// Silences are the silences to make and expire (spec.silenceAlerts); apply puts the
	// outcome in Status.Silences.
	Silences Silences
	// Status is the status to write.
	Status ranv1alpha1.ClusterGroupUpgradeStatus
	// StatusPaced is true when Status differs from the status read only by clusters moving
	// on (rollout.StatusProgressOnly) while its pace runs (Facts.ProgressPaced): it is not
	// written on this pass, and TALM's fields in it are those read, made again by the pass
	// that writes.
	StatusPaced bool
	// Notes are what the decision noticed that is worth a debug log line.
	Notes []Note
}

// Actions are the clusters the spec's cluster actions run on this pass.
type Actions struct {
	// BeforeEnable are the planned clusters, at the start.
	BeforeEnable []string
	// AfterCompletion are the clusters that completed this pass (every planned one when
	// the rollout completes), and at the start those left out as already compliant.
	AfterCompletion []string
}

// Enforcement is the write of the rollout's enforcement objects.
type Enforcement struct {
	// Write is false while nothing is enforced yet (the rollout has not started) or when
	// Cleanup deletes everything.
	Write bool
	// Released are the managed policies deleted since the start: what enforced them goes.
	Released []ranv1alpha1.PolicyReference
	// Policies are the managed policies still there; Clusters, by index in Policies, the
	// clusters to enforce each on; Frozen those whose enforce copies keep the accepted
	// content.
	Policies []*policyv1.Policy
	Clusters map[int][]string
	Frozen   map[int]bool
	// Paced is true when only clusters moving on inside a batch changed: the write may wait
	// for the pacing interval.
	Paced bool
	// Starts is true when clusters of the current batch, a window, start with this
	// decision (its freed slots): once the status that records them is written, the
	// operator paces the next starts (Facts.StartsPaced).
	Starts bool
}

// Spoke are the spoke-side objects to make or delete.
type Spoke struct {
	// Views are the clusters whose ClusterVersion view the upgrade checks need.
	Views []string
	// Jobs are the health check Jobs to start.
	Jobs []spokejob.Job
	// Prestart are the writes of the pre-caching and backup Jobs, cluster by cluster.
	Prestart []talmjob.Intents
	// Settled are the writes that clear a cluster's pre-caching or backup Job once it
	// succeeded (its views, its namespace on the spoke): they follow the status write that
	// records the success, since once they are done nothing on the hub shows it. An operator
	// stopped between the two finds the Job's views and sees the success again; one stopped
	// after the status write leaves them to the rollout's cleanup (its spoke teardown).
	Settled []talmjob.Intents
	// Works are the ManifestWorks to make or delete.
	Works []Work
	// InstallPlans are the writes of InstallPlan approval.
	InstallPlans InstallPlans
}

// Work is a ManifestWork to make, or to delete: a template's, for a cluster, in a role.
type Work struct {
	Role              manifestwork.Role
	Template, Cluster string
	Delete            bool
}

// InstallPlans are the writes of InstallPlan approval: the views to make or correct, the
// approvals to make, and the views of clusters no longer enforced, to delete.
type InstallPlans struct {
	Views     []*viewv1beta1.ManagedClusterView
	Approvals []Approval
	Stale     []*viewv1beta1.ManagedClusterView
	// Problems are approvals that could not be built: the pass reports them as its error.
	Problems []error
}

// Approval is the action approving one InstallPlan, with what the event about it says.
type Approval struct {
	Action       *actionv1beta1.ManagedClusterAction
	Cluster      string
	Subscription string
	Verdict      installplan.Verdict
}

// Note is a line for the debug log: a message and its key-value pairs.
type Note struct {
	Message string
	Values  []any
}

// BatchEnded names the clusters of a batch the decision ended (1-based index) by their
// final state, in plan order.
func (in *Intents) BatchEnded(index int) map[ranv1alpha1.ClusterState][]string {
	n := map[ranv1alpha1.ClusterState][]string{}
	for _, e := range in.Decision.Ended {
		if e.Index+1 != index {
			continue
		}
		for _, name := range in.Plan.Batches[e.Index].Clusters {
			if c, ok := e.Clusters[name]; ok {
				n[c.State] = append(n[c.State], name)
			}
		}
	}
	return n
}
