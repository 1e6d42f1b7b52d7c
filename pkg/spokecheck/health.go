package spokecheck

import (
	"context"
	"fmt"
	"strconv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
)

// Reasons of the health checks, on a held cluster, a failed one, or one waiting.
const (
	ReasonHealthCheckPending = upgradecheck.ReasonHealthCheckPending
	ReasonHealthCheckFailed  = upgradecheck.ReasonHealthCheckFailed
)

// healthRules are what the spoke program reads to check a cluster's health; it reads the
// alerts through the cluster-monitoring-view role.
var healthRules = []rbacv1.PolicyRule{{
	APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators", "clusterversions"},
	Verbs: []string{"get", "list"},
}}

// HealthChecks returns the spec's health checks, nil without.
func HealthChecks(cgu *ranv1alpha1.ClusterGroupUpgrade) *ranv1alpha1.HealthChecks {
	if cgu.Spec.UpgradeChecks == nil {
		return nil
	}
	return cgu.Spec.UpgradeChecks.Health
}

// HealthJob is the spoke job of a rollout's health check on a cluster, for one run; image is
// the spoke program's (only starting the job needs it).
func HealthJob(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster, run, image string) spokejob.Job {
	name := names.Safe(spokejob.MaxNameLength, "cgu-health", cgu.Namespace, cgu.Name)
	return spokejob.Job{
		Cluster: cluster, Owner: ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}, Name: name, Run: run, Image: image,
		Args:             []string{"health", "--namespace", spokejob.Namespace, "--configmap", name, "--run", run},
		ClusterRules:     healthRules,
		BindClusterRoles: []string{"cluster-monitoring-view"},
	}
}

// The runs of a cluster's health checks: before the rollout starts (one per spec
// generation, so that kubectl cgu preflight and status show health before enable), before
// the cluster's batch starts, and after the cluster began verifying. Each is read from what
// status and the batch records hold, so that every reconcile finds the run again.

// HealthRunBeforeEnable is the run of the health check before the rollout starts.
func HealthRunBeforeEnable(cgu *ranv1alpha1.ClusterGroupUpgrade) string {
	return "preview-g" + strconv.FormatInt(cgu.Generation, 10)
}

// BatchHealthRun is the run of the check of the clusters of a batch started at started.
func BatchHealthRun(started time.Time) string {
	return "before-" + strconv.FormatInt(started.Unix(), 10)
}

// VerifyHealthRun is the run of the check of a cluster verifying since since.
func VerifyHealthRun(since time.Time) string {
	return "after-" + strconv.FormatInt(since.Unix(), 10)
}

// HealthVerdict is what one run of the health check says of a cluster.
type HealthVerdict = upgradecheck.HealthRun

// ReadHealth reads the verdict of one run of the health check: the report of that run
// judged by upgradecheck.Health (yStream: the upgrade changes the minor version).
func ReadHealth(ctx context.Context, runner spokejob.Reader, job spokejob.Job, yStream bool) (HealthVerdict, error) {
	st, err := runner.Read(ctx, job)
	switch {
	case err != nil:
		return HealthVerdict{}, fmt.Errorf("reading the health check of %s: %w", job.Cluster, err)
	case st.Failed != "":
		return HealthVerdict{Done: true, Reason: ReasonHealthCheckFailed,
			Message: "The health check could not run on the cluster: " + st.Failed}, nil
	case st.Report == nil:
		return HealthVerdict{Reason: ReasonHealthCheckPending, Message: "The health check has not answered yet: " + st.Waiting}, nil
	}
	report, err := spokehealth.FromConfigMap(st.Report)
	if err != nil || report.Run != job.Run {
		why := "its report is from another run"
		if err != nil {
			why = err.Error()
		}
		return HealthVerdict{Reason: ReasonHealthCheckPending, Message: "The health check has not answered yet: " + why}, nil
	}
	v := upgradecheck.Health(report.Input(yStream))
	return HealthVerdict{Done: true, Healthy: v.Healthy, Reason: v.Reason, Message: v.Message, CollectedAt: report.CollectedAt.Time}, nil
}
