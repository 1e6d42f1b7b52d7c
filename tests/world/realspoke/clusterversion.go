package realspoke

import (
	"context"
	"fmt"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterVersionName is the name of the one ClusterVersion of an OpenShift cluster.
const ClusterVersionName = "version"

// createClusterVersion creates the ClusterVersion of a cluster on which opts.Version was
// installed and is not being updated.
func createClusterVersion(ctx context.Context, c client.Client, opts *Options) error {
	clusterID := opts.ClusterID
	if clusterID == "" {
		clusterID = string(uuid.NewUUID())
	}
	channel := opts.Channel
	if channel == "" {
		channel = defaultChannel(opts.Version)
	}
	image := opts.Image
	if image == "" {
		image = "quay.io/openshift-release-dev/ocp-release:" + opts.Version + "-x86_64"
	}
	cv := &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: ClusterVersionName},
		Spec: configv1.ClusterVersionSpec{
			ClusterID: configv1.ClusterID(clusterID),
			Channel:   channel,
		},
	}
	if err := c.Create(ctx, cv); err != nil {
		return fmt.Errorf("creating ClusterVersion %s: %w", ClusterVersionName, err)
	}
	installed := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	release := configv1.Release{Version: opts.Version, Image: image, Channels: []string{channel}}
	cv.Status = configv1.ClusterVersionStatus{
		Desired:            release,
		ObservedGeneration: cv.Generation,
		VersionHash:        "realspoke",
		History: []configv1.UpdateHistory{{
			State:          configv1.CompletedUpdate,
			StartedTime:    installed,
			CompletionTime: &installed,
			Version:        opts.Version,
			Image:          image,
		}},
		Conditions: []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, LastTransitionTime: installed,
				Message: "Done applying " + opts.Version},
			{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse, LastTransitionTime: installed,
				Message: "Cluster version is " + opts.Version},
			{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse, LastTransitionTime: installed},
		},
	}
	if err := c.Status().Update(ctx, cv); err != nil {
		return fmt.Errorf("setting the status of ClusterVersion %s: %w", ClusterVersionName, err)
	}
	return nil
}

// defaultChannel returns stable-<major>.<minor> for a version <major>.<minor>.<patch>.
func defaultChannel(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return "stable-" + version
	}
	return "stable-" + parts[0] + "." + parts[1]
}
