package sim

import (
	"context"
	"net/http"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/updategraph"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
)

// RiskMatcher decides whether a conditional update risk applies to a cluster, as the
// cluster-version operator decides by evaluating the risk's PromQL on the cluster.
type RiskMatcher func(cluster string, risk configv1.ConditionalUpdateRisk) (bool, error)

// graphPoll is how long the simulated cluster-version operators use a graph before asking
// the update service again; the real one polls every few minutes, the tests need less.
const graphPoll = 2 * time.Second

// GraphUpdates returns an UpdateSource that asks the update service at graphURL (for
// example a graphserver.Server's URL) for the cluster's channel, as the cluster-version
// operator polls spec.upstream (one graph per channel, fetched again after graphPoll), and
// derives availableUpdates and conditionalUpdates from the
// graph. match decides risks per cluster; nil leaves every PromQL risk Unknown.
func GraphUpdates(graphURL string, match RiskMatcher) UpdateSource {
	client := &updateservice.Client{HTTP: &http.Client{Timeout: 10 * time.Second}, TTL: graphPoll}
	return func(cluster string, cv *configv1.ClusterVersion, now time.Time) (Updates, error) {
		g, err := client.Graph(context.Background(), graphURL, cv.Spec.Channel, "amd64")
		if err != nil {
			return Updates{}, err
		}
		q := updategraph.Query{
			Version: cv.Status.Desired.Version, Channel: cv.Spec.Channel,
			Now: metav1.NewTime(now), Previous: cv.Status.ConditionalUpdates,
		}
		if match != nil {
			q.Match = func(risk configv1.ConditionalUpdateRisk, _ string) (bool, error) { return match(cluster, risk) }
		}
		u, err := g.Updates(q)
		if err != nil {
			return Updates{}, err
		}
		return Updates{Available: u.AvailableUpdates, Conditional: u.ConditionalUpdates}, nil
	}
}
