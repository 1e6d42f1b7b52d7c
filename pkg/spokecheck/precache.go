package spokecheck

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// precacheHostPaths are what the program reads and writes on the node: the container
// storage CRI-O reads images from and the run root whose locks CRI-O shares, the containers
// configuration (registries, mirrors, policy), and the kubelet's pull secret
// (precache/README.md says why).
var precacheHostPaths = []spokejob.HostPath{
	{Name: "containers-storage", Path: "/var/lib/containers", MountPath: "/var/lib/containers"},
	{Name: "containers-run", Path: "/run/containers/storage", MountPath: "/run/containers/storage"},
	{Name: "containers-config", Path: "/etc/containers", MountPath: "/etc/containers", ReadOnly: true},
	{Name: "kubelet", Path: "/var/lib/kubelet", MountPath: "/var/lib/kubelet", ReadOnly: true},
}

// PrecacheWork is the Job that pre-caches spec on a cluster as TALM runs it
// (talmjob.Precache), running image for at most deadline: the spoke program's pull
// command, privileged, reading the spec from TALM's spec ConfigMap and reporting its progress
// in the report ConfigMap the hub views (talmjob.Precache.ReportView). Its run is named
// after the spec. interval is how often the agent refreshes the Job's views.
func PrecacheWork(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string, spec ranv1alpha1.PrecachingSpec, image string,
	deadline time.Duration, interval int32) talmjob.Work {
	data, _ := json.Marshal(spec) // a struct of strings always encodes
	sum := sha256.Sum256(data)
	run := "precache-" + hex.EncodeToString(sum[:])[:12]
	job := spokejob.Job{Name: talmjob.Precache.Job, Image: image, Deadline: deadline, HostPaths: precacheHostPaths, Privileged: true,
		Args: []string{"pull", "--spec", talmjob.SpecDir, "--run", run, "--store", "podman",
			"--report-namespace", talmjob.Precache.Namespace, "--report-configmap", talmjob.Precache.ReportConfigMap}}
	return talmjob.Work{Cluster: cluster, Pod: job.PodSpec(), DeadlineSeconds: job.DeadlineSeconds(),
		Spec: precache.SpecData(spec), UpdateIntervalSeconds: interval, Labels: ownership.OwnerOf(cgu).ObjectLabels(), DeleteLabels: spokejob.TeardownLabels(talmjob.Precache.Job)}
}
