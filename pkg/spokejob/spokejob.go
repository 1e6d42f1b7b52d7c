// Package spokejob runs a one-shot program of a rollout as a Kubernetes Job on a managed
// cluster (spoke) and reads back the program's report, with nothing but what an Open Cluster
// Management hub offers: ManagedClusterActions, which the cluster's work-manager agent
// carries out once (create, update or delete one object) and the hub deletes about a minute
// after they completed, and ManagedClusterViews, which the agent refreshes every
// views.RefreshSeconds with a copy of one named object. It serves the health checks; the
// pre-caching and backup Jobs run as TALM runs them (pkg/talmjob).
//
// # On the spoke
//
// Everything lives in Namespace. For a Job named N: a ServiceAccount N; a ClusterRole and a
// ClusterRoleBinding "cgu-operator-spoke:N" with the Job's ClusterRules (none when it has
// none); a ClusterRoleBinding "cgu-operator-spoke:N:R" for each of its BindClusterRoles R; a
// Role and RoleBinding N letting the program create ConfigMaps and get and update the
// ConfigMap N, its report; and the Job N itself, whose pod runs the image with the Job's
// Args as N, restricted (non-root, no privilege escalation, no capabilities, the runtime's
// seccomp profile). The Job and its pod carry the label LabelRun (a hash of the run) and the
// annotation AnnotationRun (the run itself). Namespace, ServiceAccount and RBAC are shared by
// every run of N and stay; Stop deletes the Job and the report only. When the rollout ends,
// its teardown (teardown.go) deletes N's ServiceAccount, RBAC, input and report; the
// namespace, shared by every rollout's jobs, stays.
//
// # On the hub, in the cluster's namespace
//
// Two views, of the Job N and of the ConfigMap N, named after the rollout and N, and
// actions named after the rollout, N, what they do and a hash of the run. Every object
// carries the rollout's labels (ownership.Owner.Labels), LabelJob, and for actions LabelRun,
// so that the rollout's cleanup finds them by label.
//
// # Start: idempotence and the replacement of a run
//
// Action names are deterministic, so Start re-creating an action that exists does nothing.
// The decision is taken again from what the hub shows on every call, which never needs a
// completed action to still exist:
//
//   - Setup (namespace first, then ServiceAccount and RBAC) goes by the actions of this run:
//     a Create that failed because the object already exists counts as done; the Roles, whose
//     rules may change from run to run, are then replaced by an Update action.
//   - While the Job view shows a Job of another run (its AnnotationRun differs), a Delete
//     action removes it; while the report view shows a report, a Delete action removes it, so
//     that a report read later was written after the Job of this run was requested. Each
//     Delete action is named after the UID of what it deletes.
//   - Once setup is done, the old Job and report are gone and no action of another run of the
//     Job, nor a Stop, is still unanswered (it could create or delete the Job later), Start
//     records the run on the Job view (AnnotationRequested, a hash of the run, with the UID of
//     the Job it replaced) and creates the action that creates the Job.
//   - From then on Start only creates that action again when it no longer exists (the hub
//     collected it) while the view does not show the Job of this run yet: the Create then
//     fails with "already exists" at worst, and the spoke never gets a second Job. Nothing is
//     deleted on behalf of a run once its Job was requested, even when a stale view still
//     shows the Job it replaced; only a Job of another run that the view shows after the
//     request, with another UID, clears the record and is replaced in turn.
//   - An action that failed stays until the hub collects it; Start then creates it again,
//     which retries it about once a minute.
//
// Start and Read never wait: callers call them again when a view or an action changes.
//
// # Read
//
// Read returns the report only once the Job view shows the Job of this run Complete, and
// only as the report view shows it then. A view may lag behind the spoke by up to
// views.RefreshSeconds, and the program of a replaced run may still write its report after
// its Job was deleted (see Stop), so callers also check the run the program wrote into the
// report. Failed holds the message of the Job's Failed condition, or of an action of this
// run that failed for another reason than the expected "already exists" (Create) or "not
// found" (Delete).
//
// # Stop
//
// Stop deletes the hub's other actions of the Job (an action never answered must not create
// the Job later), creates Delete actions for the Job and the report, and deletes the views.
// The agent deletes without options, and for batch/v1 Jobs the API server's default is to
// orphan the pods: a Delete action cannot ask for propagationPolicy Background. The pods of a
// deleted Job therefore stay in Namespace: a running one stops at its own
// activeDeadlineSeconds (the Job's Deadline, set on the pod too), a finished one remains
// until the namespace is deleted. A Job never stopped is deleted with its pods by
// Kubernetes one day after it finished (ttlSecondsAfterFinished). Stop is over once the
// views are gone: calling it again does nothing, and Start of the same run afterwards runs
// the program again. Callers stop their runs before the rollout's cleanup deletes the views.
//
// # Limits
//
// The Job tries the program twice at most (backoffLimit 1; disruptions of its pod, such as
// evictions, do not count). Programs keep their reports small: the report view copies the
// whole ConfigMap into its status on the hub.
//
// Only one run of a given Name may be under way on a cluster at a time: two rollouts running
// Jobs of the same Name on one cluster replace each other's Job.
package spokejob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
)

// Namespace is where rollouts run their programs on spokes.
const Namespace = "cgu-operator-spoke"

// Labels and annotations of the objects of a spoke job.
const (
	// LabelJob names the spoke job an object on the hub or the spoke belongs to.
	LabelJob = "ran.openshift.io/spoke-job"
	// LabelRun holds the hash of the run (RunHash) on the hub's actions and on the spoke's
	// Job and pods.
	LabelRun = "ran.openshift.io/run"
	// AnnotationRun holds the run itself on the spoke's Job.
	AnnotationRun = "ran.openshift.io/run"
	// AnnotationRequested on the hub's Job view holds the hash of the run whose Job was
	// requested on the spoke.
	AnnotationRequested = "ran.openshift.io/requested-run"
)

// Limits and defaults of a spoke job.
const (
	// MaxNameLength keeps the names of the Job's pods (the Job's name and 6 characters)
	// within a label value, as Kubernetes asks of Job names.
	MaxNameLength = 52
	// DefaultDeadline is how long the Job may run when Job.Deadline is zero.
	DefaultDeadline = 10 * time.Minute
	// backoffLimit lets a program fail once for a passing reason; disruptions of its pod
	// (evictions, preemptions) are not counted.
	backoffLimit = 1
	// finishedTTL is how long Kubernetes keeps a finished Job nobody stopped.
	finishedTTL = 24 * 60 * 60
	// runHashLength is the number of hexadecimal digits of RunHash.
	runHashLength = 10
	// managedBy is the app.kubernetes.io/managed-by label of the spoke's objects.
	managedBy = "cgu-operator"
)

// Job is a program a rollout runs on one spoke.
type Job struct {
	// Cluster is the managed cluster (its namespace on the hub).
	Cluster string
	// Owner is the rollout; its labels are on every hub object made.
	Owner ownership.Owner
	// Name is the name of the spoke Job and of its report ConfigMap: a DNS label of at most
	// MaxNameLength characters.
	Name string
	// Run is the identity of this run: a Job or report of another run is replaced or
	// ignored.
	Run string
	// Image is the program's image.
	Image string
	// Args are the container's arguments; the program writes its report ConfigMap
	// Namespace/Name itself.
	Args []string
	// ClusterRules are the cluster-wide permissions the program needs (for example get and
	// list of clusteroperators).
	ClusterRules []rbacv1.PolicyRule
	// BindClusterRoles are existing ClusterRoles bound to the program's service account (for
	// example "cluster-monitoring-view").
	BindClusterRoles []string
	// Deadline is the activeDeadlineSeconds of the Job and its pod (0: DefaultDeadline).
	Deadline time.Duration
	// Input, when set, is the data of a ConfigMap "<Name>-input" written for each run and
	// mounted read-only at InputDir, for example the spec the program carries out.
	Input map[string]string
	// HostPaths are directories of the node mounted into the program's container.
	HostPaths []HostPath
	// FailOnExitCodes are exit codes that mean another attempt cannot succeed: the Job fails
	// at once instead of retrying (a podFailurePolicy rule).
	FailOnExitCodes []int32
	// Privileged runs the container privileged as root, as writing to the node's container
	// storage needs; on OpenShift the service account must then be allowed the privileged
	// SecurityContextConstraints (a ClusterRule "use" on it).
	Privileged bool
}

// HostPath is a directory of the node mounted into the program's container.
type HostPath struct {
	// Name names the volume: a DNS label.
	Name string
	// Path is the directory on the node; MountPath where the container sees it.
	Path, MountPath string
	// ReadOnly mounts it read-only.
	ReadOnly bool
}

// InputDir is where the Input ConfigMap is mounted in the program's container.
const InputDir = "/etc/cgu-operator/input"

// Validate reports what makes j unusable to start.
func (j Job) Validate() error {
	errs := j.identityErrors()
	for _, h := range j.HostPaths {
		for _, msg := range validation.IsDNS1123Label(h.Name) {
			errs = append(errs, fmt.Errorf("host path volume %q: %s", h.Name, msg))
		}
		if !strings.HasPrefix(h.Path, "/") || !strings.HasPrefix(h.MountPath, "/") {
			errs = append(errs, fmt.Errorf("host path volume %q: path and mount path must be absolute", h.Name))
		}
	}
	if j.Image == "" {
		errs = append(errs, errors.New("no image"))
	}
	if j.Deadline < 0 {
		errs = append(errs, fmt.Errorf("negative deadline %s", j.Deadline))
	}
	for i, r := range j.ClusterRules {
		if len(r.Verbs) == 0 {
			errs = append(errs, fmt.Errorf("clusterRules[%d] has no verbs", i))
		}
	}
	for _, role := range j.BindClusterRoles {
		for _, msg := range path.IsValidPathSegmentName(role) {
			errs = append(errs, fmt.Errorf("cluster role %q: %s", role, msg))
		}
		if role == "" {
			errs = append(errs, errors.New("empty cluster role name"))
		}
	}
	return joinErrors(j, errs)
}

// validateIdentity reports what keeps j from naming a run: what Read and Stop need.
func (j Job) validateIdentity() error {
	return joinErrors(j, j.identityErrors())
}

func joinErrors(j Job, errs []error) error {
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("spoke job %q: %w", j.Name, err)
	}
	return nil
}

// identityErrors are the problems of the fields that name j's run.
func (j Job) identityErrors() []error {
	var errs []error
	if j.Cluster == "" {
		errs = append(errs, errors.New("no cluster"))
	}
	if j.Owner.Namespace == "" || j.Owner.Name == "" {
		errs = append(errs, errors.New("no owner"))
	}
	for _, msg := range validation.IsDNS1123Label(j.Name) {
		errs = append(errs, fmt.Errorf("name %q: %s", j.Name, msg))
	}
	if len(j.Name) > MaxNameLength {
		errs = append(errs, fmt.Errorf("name %q: longer than %d characters", j.Name, MaxNameLength))
	}
	if j.Run == "" {
		errs = append(errs, errors.New("no run"))
	}
	return errs
}

// RunHash is the hash of a run that names its actions and labels its Job.
func RunHash(run string) string {
	sum := sha256.Sum256([]byte(run))
	return hex.EncodeToString(sum[:])[:runHashLength]
}

// DeadlineSeconds is the Job's activeDeadlineSeconds: Deadline rounded up to a second,
// DefaultDeadline when zero.
func (j Job) DeadlineSeconds() int64 {
	d := j.Deadline
	if d == 0 {
		d = DefaultDeadline
	}
	return max(int64((d+time.Second-1)/time.Second), 1)
}

// hubLabels label every hub object of the job.
func (j Job) hubLabels() map[string]string {
	labels := j.Owner.Labels()
	labels[LabelJob] = names.LabelValue(j.Name)
	return labels
}

// runLabels label the hub's actions of this run.
func (j Job) runLabels() map[string]string {
	labels := j.hubLabels()
	labels[LabelRun] = RunHash(j.Run)
	return labels
}

// spokeLabels label every spoke object of the job.
func (j Job) spokeLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": managedBy, LabelJob: j.Name}
}

// jobLabels label the spoke's Job and pods.
func (j Job) jobLabels() map[string]string {
	labels := maps.Clone(j.spokeLabels())
	labels[LabelRun] = RunHash(j.Run)
	return labels
}

// viewName is the name of the hub's view of the spoke object what ("job" or "report").
func (j Job) viewName(what string) string {
	return names.Safe(253, "cgu", j.Owner.Namespace, j.Owner.Name, j.Name, what)
}

// actionName is the name of the hub's action of this run doing what.
func (j Job) actionName(what string) string {
	hash := RunHash(j.Run)
	return names.Safe(253-len(hash)-1, "cgu", j.Owner.Namespace, j.Owner.Name, j.Name, what) + "-" + hash
}

// clusterRoleName is the name of the ClusterRole with the Job's ClusterRules and of its
// binding; ":" cannot appear in a Job name, so no two Jobs share it.
func (j Job) clusterRoleName() string {
	return Namespace + ":" + j.Name
}

// bindingName is the name of the ClusterRoleBinding of an existing ClusterRole.
func (j Job) bindingName(role string) string {
	return Namespace + ":" + j.Name + ":" + role
}
