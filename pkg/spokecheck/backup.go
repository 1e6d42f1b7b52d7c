package spokecheck

import (
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// backupRoot is where the backup Job mounts the node's root filesystem.
const backupRoot = "/host"

// BackupWork is the Job that backs a cluster up before its upgrade as TALM runs it
// (talmjob.Backup): the spoke program's backup command, privileged, with the node's root
// filesystem, for at most backup.JobDeadline. Its run is named after the rollout (its UID).
func BackupWork(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster, image string) talmjob.Work {
	run := "backup-" + string(cgu.UID)
	job := spokejob.Job{Name: talmjob.Backup.Job, Image: image, Deadline: backup.JobDeadline, Privileged: true,
		Args:      []string{"backup", "--run", run, "--root", backupRoot, "--dir", recovery.DefaultDir},
		HostPaths: []spokejob.HostPath{{Name: "host", Path: "/", MountPath: backupRoot}}}
	return talmjob.Work{Cluster: cluster, Pod: job.PodSpec(), DeadlineSeconds: job.DeadlineSeconds(),
		Labels: ownership.OwnerOf(cgu).ObjectLabels(), DeleteLabels: spokejob.TeardownLabels(talmjob.Backup.Job)}
}
