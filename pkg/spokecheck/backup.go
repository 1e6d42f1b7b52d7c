package spokecheck

import (
	"context"
	"encoding/json"
	"fmt"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
)

// backupRoot is where the backup Job mounts the node's root filesystem.
const backupRoot = "/host"

// BackupJob is the spoke job that backs a cluster up before its upgrade (precache backup),
// running image for at most backup.JobDeadline. Its run is named after the rollout (its UID):
// a rollout backs each cluster up once, a new rollout again.
func BackupJob(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster, image string) spokejob.Job {
	run := "backup-" + string(cgu.UID)
	name := names.Safe(spokejob.MaxNameLength, "cgu-backup", cgu.Namespace, cgu.Name)
	return spokejob.Job{
		Cluster: cluster, Owner: ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}, Name: name, Run: run, Image: image,
		Args: []string{"backup", "--run", run, "--root", backupRoot, "--dir", recovery.DefaultDir,
			"--report-namespace", spokejob.Namespace, "--report-configmap", name},
		HostPaths:  []spokejob.HostPath{{Name: "host", Path: "/", MountPath: backupRoot}},
		Privileged: true,
		// Too little space is not retried.
		FailOnExitCodes: []int32{recovery.ExitUnrecoverable},
		ClusterRules:    precacheRules,
		Deadline:        backup.JobDeadline,
	}
}

// BackupObservation reads what the hub sees of a cluster's backup Job.
func BackupObservation(ctx context.Context, runner spokejob.Reader, job spokejob.Job) (prestart.Observation, error) {
	st, sum, err := summaryOf(ctx, runner, job, "backup", func(s *recovery.Summary) string { return s.Run })
	if err != nil {
		return prestart.Observation{}, err
	}
	return backup.Observed(jobObservation(st), sum), nil
}

// jobObservation is what a spoke job's state says, before its program's summary.
func jobObservation(st spokejob.State) prestart.Observation {
	return prestart.Observation{Requested: st.Requested, Running: st.Running, Failed: st.Failed,
		DeadlineExceeded: st.FailedReason == "DeadlineExceeded"}
}

// summaryOf reads a spoke job's state and the summary its program wrote for this run (JSON
// under precache.SummaryKey of its report, or of its progress before the Job completed);
// nil when there is none yet.
func summaryOf[T any](ctx context.Context, runner spokejob.Reader, job spokejob.Job, what string, runOf func(*T) string) (spokejob.State, *T, error) {
	st, err := runner.Read(ctx, job)
	if err != nil {
		return st, nil, fmt.Errorf("reading the %s Job of %s: %w", what, job.Cluster, err)
	}
	report := st.Report
	if report == nil {
		report = st.Progress
	}
	if report == nil {
		return st, nil, nil
	}
	sum := new(T)
	if json.Unmarshal([]byte(report.Data[precache.SummaryKey]), sum) != nil || runOf(sum) != job.Run {
		return st, nil, nil
	}
	return st, sum, nil
}
