package spokecheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
)

// precacheRules let the precache program run privileged on OpenShift.
var precacheRules = []rbacv1.PolicyRule{{
	APIGroups: []string{"security.openshift.io"}, Resources: []string{"securitycontextconstraints"},
	ResourceNames: []string{"privileged"}, Verbs: []string{"use"},
}}

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

// PrecacheJob is the spoke job that pre-caches spec on a cluster, running image (only
// starting it needs one) for at most deadline; its run is named after the spec, so that a
// changed spec runs again.
func PrecacheJob(cgu *ranv1alpha1.ClusterGroupUpgrade, cluster string, spec ranv1alpha1.PrecachingSpec, image string, deadline time.Duration) spokejob.Job {
	data, _ := json.Marshal(spec) // a struct of strings always encodes
	sum := sha256.Sum256(data)
	run := "precache-" + hex.EncodeToString(sum[:])[:12]
	name := names.Safe(spokejob.MaxNameLength, "cgu-precache", cgu.Namespace, cgu.Name)
	return spokejob.Job{
		Cluster: cluster, Owner: ownership.Owner{Namespace: cgu.Namespace, Name: cgu.Name}, Name: name, Run: run, Image: image,
		Args: []string{"pull", "--spec", spokejob.InputDir + "/spec.json", "--run", run, "--store", "podman",
			"--report-namespace", spokejob.Namespace, "--report-configmap", name},
		Input:      map[string]string{"spec.json": string(data)},
		HostPaths:  precacheHostPaths,
		Privileged: true,
		// An unrecoverable failure (a missing image, too little space) is not retried.
		FailOnExitCodes: []int32{precache.ExitUnrecoverable},
		ClusterRules:    precacheRules,
		Deadline:        deadline,
	}
}

// PrecacheObservation reads what the hub sees of a cluster's precache Job.
func PrecacheObservation(ctx context.Context, runner spokejob.Reader, job spokejob.Job) (prestart.Observation, error) {
	st, sum, err := summaryOf(ctx, runner, job, "precache", func(s *precache.Summary) string { return s.Run })
	if err != nil {
		return prestart.Observation{}, err
	}
	return precache.Observed(jobObservation(st), sum), nil
}
