// Package cgu decides one reconcile of a ClusterGroupUpgrade: Decide reads the Facts the
// controller gathered (read only, from the cache and the spokes' views) and the operator's
// Config, and returns the Intents the controller applies: the plan and the clusters that
// leave it, the enforcement mode, every spoke Job, view, ManifestWork and InstallPlan
// approval, the batch records' progress, the cluster actions, what to enforce, and the
// status to write with what the rollout waits for. It holds no client, no logger and no
// clock: the time is passed in.
package cgu

import (
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/spokecheck"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// Facts are what one reconcile read of a ClusterGroupUpgrade and of what it drives. Each
// concern contributes its own part; a part is nil (or empty) when the concern read nothing
// this pass. Decide changes none of them.
type Facts struct {
	// Upgrade is the ClusterGroupUpgrade as read; its status is the status before the pass.
	Upgrade *ranv1alpha1.ClusterGroupUpgrade
	// Records are the rollout's batch records, in plan order.
	Records []ranv1alpha1.ClusterGroupUpgradeBatch
	// Started is true once the rollout started: its plan and policies are frozen.
	Started bool
	// Start is what the start is decided from, read before the rollout started.
	Start Start
	// Roots are the managed root policies in order; after the start an entry is nil when
	// its policy was deleted.
	Roots []*policyv1.Policy
	// Compliance holds, by index in Roots, each root policy's compliance per cluster
	// (preview.Compliance), when the gather read it through a preview.ComplianceCache: shared
	// maps, read only. A missing or nil entry is computed from Roots.
	Compliance []map[string]policyv1.ComplianceState
	// Plan is the plan as read: computed before the start, from the records after. Clusters
	// whose pre-start job failed are still in it (Decide takes them out).
	Plan plan.Plan
	// Progress is the progress the records show.
	Progress rollout.Progress
	// Released holds, by index in Roots, the clusters of the current batch that went past an
	// intermediate policy and that the hub shows it no longer enforced on (the policy's
	// replica there is inform, or gone): read only for intermediate policies, and only for
	// the clusters past them (rollout.PolicyFacts Released).
	Released map[int]map[string]bool
	// Rebuilt are the records the API server lost (deleted by hand, or written in part),
	// rebuilt from the status and the spokes' compliance (rollout.Rebuild); Records holds
	// them too. Lost says instead what could not be rebuilt; Plan and Progress are empty then.
	Rebuilt []ranv1alpha1.ClusterGroupUpgradeBatch
	Lost    *rollout.Problem
	// Others are the clusters other rollouts hold.
	Others Others
	// StartsPaced is true while the operator's last write of starting clusters is more
	// recent than its pace (rollout.Gates.StartsPaced).
	StartsPaced bool
	// ProgressPaced is true while the operator's last write of the status is more recent
	// than its pace: a status that changed only by clusters moving on is not written on this
	// pass (Intents.StatusPaced).
	ProgressPaced bool
	// Analysis is what the gather found of spec.analysis: its query API's Secret, and the
	// measurements due now (rollout.MeasureNow).
	Analysis Analysis
	// Freezes are the hub's FleetFreezes (docs/freeze.md): while one is frozen, no batch and
	// no cluster starts.
	Freezes []ranv1alpha1.FleetFreeze
	// Precache is what pre-caching found before the start; nil when the spec asks for none
	// or it was not read.
	Precache *Precache
	// Backup is what the backups before the upgrade show; nil when none is asked for.
	Backup *Backup
	// Checks are the upgrade checks' verdicts; nil without spec.upgradeChecks.pathValidation.
	Checks *Checks
	// Health are the answers of the health checks the spec asks for.
	Health Health
	// Works are the rollout's ManifestWorks and their templates; nil when the spec names
	// none or the hub serves no ManifestWorks.
	Works *Works
	// OperatorUpgrades are the views and actions of InstallPlan approval; nil on a hub that
	// does not serve both.
	OperatorUpgrades *OperatorUpgrades
}

// Start is what a rollout that has not started is decided from (pkg/preview).
type Start struct {
	// Blocked is set while a blocking ClusterGroupUpgrade has not completed.
	Blocked *rollout.Problem
	// Selected are the selected clusters; SelectProblem why the selection failed.
	Selected      []string
	SelectProblem *rollout.Problem
	// Invalid is why the managed policies or the spec are not valid (the maintenance
	// windows are Decide's).
	Invalid *rollout.Problem
	// CompliantBefore are the managed policies every selected cluster complies with
	// already: left out of Roots, read by pre-caching.
	CompliantBefore []*policyv1.Policy
}

// Others is what the batch records of every rollout on the hub show of clusters in progress.
type Others struct {
	// Busy maps the clusters other rollouts have InProgress to them.
	Busy map[string]string
	// InProgress counts the clusters InProgress on the hub, this rollout's included.
	InProgress int
}

// Jobs are the pre-start Jobs of one kind on each planned cluster, run as TALM runs them
// (pkg/talmjob), and what the hub shows of each.
type Jobs struct {
	// Order are the planned clusters in plan order.
	Order []string
	// Work is each cluster's Job.
	Work map[string]talmjob.Work
	// Views are each cluster's views of the Job's protocol, by name; Available tells which
	// clusters are available.
	Views     map[string]map[string]talmjob.View
	Available map[string]bool
	// Labels are each cluster's ManagedCluster labels.
	Labels map[string]map[string]string
	// Kept are the states the status holds (status.precaching.status,
	// status.backup.status), by cluster.
	Kept map[string]string
}

// Precache is what pre-caching found before the start.
type Precache struct {
	// Result is the derived spec and its validity.
	Result precache.Result
	// Overrides are the keys of TALM's deprecated overrides ConfigMap the spec took.
	Overrides []string
	// Jobs are the precache Jobs, read only when the spec is valid.
	Jobs Jobs
	// Elsewhere counts the clusters the hub's other rollouts are pre-caching.
	Elsewhere int
	// Bandwidth is what pre-caching against the PreCachingConfig's bandwidth budget reads;
	// nil without one.
	Bandwidth *Bandwidth
}

// Backup is what the backups before the upgrade show.
type Backup struct {
	Jobs Jobs
	// StartedAt is when the backups started (status.backup.startedAt); nil before.
	StartedAt *metav1.Time
}

// Checks are the upgrade checks' verdicts on the planned clusters that have not started.
type Checks struct {
	Verdicts map[string]upgradecheck.Verdict
	// ViewsNeeded is true when the checks read ClusterVersions through views, which the hub
	// serves.
	ViewsNeeded bool
}

// Health are the health check's answers: before the start on every planned cluster
// (Preview, status only), then on the running batch's clusters about to start (Before) and
// on those verifying (After). A map is nil when the check was not read.
type Health struct {
	Preview, Before, After map[string]spokecheck.HealthVerdict
}

// Works are the rollout's ManifestWorks and their templates.
type Works struct {
	// Templates are the ManifestWorkReplicaSets the spec names, by name; a missing one is
	// absent. Expected are their expected feedback values.
	Templates map[string]*workv1alpha1.ManifestWorkReplicaSet
	Expected  map[string][]manifestwork.Feedback
	// Made are the rollout's ManifestWorks, by namespace/name; read once started.
	Made map[string]*workv1.ManifestWork
}

// OperatorUpgrades are the rollout's views of Subscriptions and InstallPlans and its
// approval actions, by key.
type OperatorUpgrades struct {
	Views   map[client.ObjectKey]*viewv1beta1.ManagedClusterView
	Actions map[client.ObjectKey]bool
}

// Config is what the operator was started with that the decision reads.
type Config struct {
	// MaxConcurrentPrecaching caps the clusters pre-caching at once on the hub; zero means
	// no cap. MaxClustersInProgress caps the clusters under remediation; zero means none.
	MaxConcurrentPrecaching int
	MaxClustersInProgress   int
	// SpokeImage is the image of the spoke program of the health check Jobs.
	SpokeImage string
	// DefaultEnforcement is the mode of a rollout without spec.enforcement.
	DefaultEnforcement ranv1alpha1.EnforcementMode
	// Tenancy are the operator's tenancy rules: where they apply, cluster actions write
	// and remove only keys under their prefix.
	Tenancy tenancy.Rules
	// Alertmanager is the Alertmanager spec.silenceAlerts silences on; "" when the operator
	// has none.
	Alertmanager string
}

// Analysis is what the gather found of spec.analysis.
type Analysis struct {
	// Endpoint says what is wrong with the query API's Secret (missing, empty); "" when
	// nothing is.
	Endpoint string
	// Measured are the measurements taken for this pass, by gate name.
	Measured map[string]analysis.Measurement
}
