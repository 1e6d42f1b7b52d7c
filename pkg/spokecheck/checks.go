// Package spokecheck reads, through the hub, what a spoke says of itself for a rollout and
// judges it with the pure checks: the upgrade checks from the ClusterVersion its
// ManagedClusterView shows (pkg/views, pkg/upgradecheck), the health check and pre-caching
// from their spoke Jobs (pkg/spokejob, pkg/upgradecheck.Health, pkg/precache). It builds
// the Jobs' specs and reads their reports; the operator and kubectl cgu preflight share it.
package spokecheck

import (
	"context"
	"fmt"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/upgradecheck"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// GraphSource returns the update graph a service (URL) serves for a channel, or an error.
type GraphSource func(ctx context.Context, url, channel string) (*updategraph.Graph, error)

// Checks are what the upgrade checks of one rollout read: its targets, where to find
// update graphs, and the views of its clusters. The operator and kubectl cgu preflight
// judge clusters with the same Checks.
type Checks struct {
	Reader  client.Reader
	Upgrade *ranv1alpha1.ClusterGroupUpgrade
	// Targets are the upgrade targets of the managed policies; Problem says why they could
	// not be read, and then holds every cluster.
	Targets []upgradecheck.Target
	Problem string
	// Graphs fetches graphs; DefaultService is the update service used when neither the
	// rollout nor the cluster names one.
	Graphs         GraphSource
	DefaultService string
	// ViewsServed is false when the hub serves no ManagedClusterViews.
	ViewsServed bool
	// OnGraphError, when set, is told each graph that could not be fetched.
	OnGraphError func(url, channel string, err error)

	graphs map[graphKey]*updategraph.Graph
}

type graphKey struct{ url, channel string }

// NewChecks reads the targets of the managed policies (roots, nil entries skipped).
func NewChecks(r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade, roots []*policyv1.Policy) *Checks {
	c := &Checks{Reader: r, Upgrade: cgu, ViewsServed: true, graphs: map[graphKey]*updategraph.Graph{}}
	for _, p := range roots {
		t, err := upgradecheck.Targets(p)
		if err != nil {
			c.Targets, c.Problem = nil, fmt.Sprintf("The upgrade target cannot be read: %v", err)
			return c
		}
		c.Targets = append(c.Targets, t...)
	}
	return c
}

// NeedsViews reports whether judging a cluster reads its ClusterVersion: some managed
// policy asks for an upgrade.
func (c *Checks) NeedsViews() bool {
	return c.Problem == "" && len(c.Targets) > 0
}

// Views are the rollout's views.
func (c *Checks) Views(w client.Client) views.Views {
	return views.Views{Client: w, Owner: c.owner()}
}

func (c *Checks) owner() ownership.Owner {
	return ownership.Owner{Namespace: c.Upgrade.Namespace, Name: c.Upgrade.Name}
}

// Judge gives the verdict on one cluster, reading its view (not creating it): no targets
// proceed; an unread ClusterVersion holds the cluster (fail closed).
func (c *Checks) Judge(ctx context.Context, cluster string) (upgradecheck.Verdict, error) {
	switch {
	case c.Problem != "":
		return upgradecheck.Verdict{Outcome: upgradecheck.Hold, Reason: upgradecheck.ReasonTargetUnknown, Message: c.Problem}, nil
	case len(c.Targets) == 0:
		return upgradecheck.JudgeCluster(upgradecheck.ClusterInput{}), nil
	case !c.ViewsServed:
		return unread("the hub does not serve ManagedClusterViews"), nil
	}
	cv, why, err := views.ReadClusterVersion(ctx, c.Reader, c.owner(), cluster)
	if err != nil || cv == nil {
		return unread(why), err
	}
	uc := c.spec()
	return upgradecheck.JudgeCluster(upgradecheck.ClusterInput{
		Targets: c.Targets, Cluster: cv, AcceptRisks: uc.AcceptRisks, AllowNotRecommended: uc.AllowNotRecommended,
		Graph: func(channel string) *updategraph.Graph {
			return c.graph(ctx, c.service(string(cv.Spec.Upstream)), channel)
		},
	}), nil
}

func (c *Checks) spec() ranv1alpha1.UpgradeChecks {
	if c.Upgrade.Spec.UpgradeChecks == nil {
		return ranv1alpha1.UpgradeChecks{}
	}
	return *c.Upgrade.Spec.UpgradeChecks
}

// unread is the verdict on a cluster whose ClusterVersion was not read: held, fail closed.
func unread(why string) upgradecheck.Verdict {
	return upgradecheck.Verdict{Outcome: upgradecheck.Hold, Reason: upgradecheck.ReasonClusterVersionUnknown,
		Message: "ClusterVersion of the cluster has not been read: " + why}
}

// service is the update service to ask: the rollout's, else the cluster's upstream, else
// the default.
func (c *Checks) service(upstream string) string {
	switch {
	case c.spec().UpdateService != "":
		return c.spec().UpdateService
	case upstream != "":
		return upstream
	}
	return c.DefaultService
}

// graph fetches a graph at most once per Checks; nil when it is not available.
func (c *Checks) graph(ctx context.Context, url, channel string) *updategraph.Graph {
	k := graphKey{url, channel}
	if g, ok := c.graphs[k]; ok {
		return g
	}
	var g *updategraph.Graph
	if c.Graphs != nil {
		var err error
		if g, err = c.Graphs(ctx, url, channel); err != nil && c.OnGraphError != nil {
			c.OnGraphError(url, channel, err)
		}
	}
	c.graphs[k] = g
	return g
}
