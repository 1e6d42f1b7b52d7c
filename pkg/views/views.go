// Package views reads objects of managed clusters through ManagedClusterViews: the hub asks
// the cluster's work agent to copy an object into the view's status. It is the I/O side of
// the upgrade checks: the rollout reads each cluster's ClusterVersion this way.
package views

import (
	"context"
	"encoding/json"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
)

// RefreshSeconds is how often the agent refreshes the rollout's views: an upgrade takes
// minutes to hours, a minute is fresh enough and keeps the agents' load low.
const RefreshSeconds = 60

// clusterVersionScope names a spoke's ClusterVersion.
var clusterVersionScope = viewv1beta1.ViewScope{
	Group: configv1.GroupName, Version: "v1", Kind: "ClusterVersion", Name: "version", UpdateIntervalSeconds: RefreshSeconds,
}

// Views writes and reads the views of one rollout.
type Views struct {
	Client client.Client
	Owner  ownership.Owner
}

// Name is the name of the rollout's view of what in a cluster namespace.
func (v Views) Name(what string) string {
	return names.Safe(253, "cgu", v.Owner.Namespace, v.Owner.Name, what)
}

// EnsureClusterVersion creates the view of a cluster's ClusterVersion when it is missing.
func (v Views) EnsureClusterVersion(ctx context.Context, cluster string) error {
	view := &viewv1beta1.ManagedClusterView{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: v.Name("clusterversion"), Labels: v.Owner.ObjectLabels()},
		Spec:       viewv1beta1.ViewSpec{Scope: clusterVersionScope},
	}
	_, err := spokeobjects.Writer{Client: v.Client}.EnsureView(ctx, view)
	return err
}

// ClusterVersion returns a cluster's ClusterVersion as its view last showed it, or nil with
// the reason when the view has not answered yet or the agent could not read the object.
func (v Views) ClusterVersion(ctx context.Context, cluster string) (*configv1.ClusterVersion, string, error) {
	return ReadClusterVersion(ctx, v.Client, v.Owner, cluster)
}

// ReadClusterVersion is Views.ClusterVersion for a reader, for tools that only read.
func ReadClusterVersion(ctx context.Context, r client.Reader, owner ownership.Owner, cluster string) (*configv1.ClusterVersion, string, error) {
	view := &viewv1beta1.ManagedClusterView{}
	err := r.Get(ctx, client.ObjectKey{Namespace: cluster, Name: Views{Owner: owner}.Name("clusterversion")}, view)
	switch {
	case apierrors.IsNotFound(err):
		return nil, "the view of its ClusterVersion does not exist yet", nil
	case err != nil:
		return nil, "", err
	}
	return Decode(view)
}

// Decode returns the ClusterVersion a view shows, or nil with the reason when it shows none.
func Decode(view *viewv1beta1.ManagedClusterView) (*configv1.ClusterVersion, string, error) {
	c := meta.FindStatusCondition(view.Status.Conditions, viewv1beta1.ConditionViewProcessing)
	switch {
	case c == nil:
		return nil, "its agent has not answered the view of its ClusterVersion yet", nil
	case c.Status != metav1.ConditionTrue:
		return nil, fmt.Sprintf("its agent cannot read its ClusterVersion: %s", c.Message), nil
	case len(view.Status.Result.Raw) == 0:
		return nil, "the view of its ClusterVersion is empty", nil
	}
	cv := &configv1.ClusterVersion{}
	if err := json.Unmarshal(view.Status.Result.Raw, cv); err != nil {
		return nil, fmt.Sprintf("the view of its ClusterVersion cannot be read: %v", err), nil
	}
	return cv, "", nil
}
