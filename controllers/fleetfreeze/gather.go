package fleetfreeze

import (
	"context"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/freeze"
)

// gather reads what a pass needs: the time, and when the alert queries are due, their
// answers. It only reads (the Secret, the query API).
func (r *Reconciler) gather(ctx context.Context, ff *ranv1alpha1.FleetFreeze) freeze.Facts {
	f := freeze.Facts{Freeze: ff, Now: r.Clock.Now()}
	if !freeze.Due(ff, f.Now) {
		return f
	}
	f.Ran = true
	a := ff.Spec.Alerts
	e, err := r.endpoint(ctx, a.Prometheus)
	if err != nil {
		f.Unreachable = err.Error()
		return f
	}
	for _, q := range a.Queries {
		f.Answers = append(f.Answers, answer(ctx, e, q))
	}
	var cgus ranv1alpha1.ClusterGroupUpgradeList
	if err := r.Client.List(ctx, &cgus); err != nil {
		// Without the rollouts' silences, nothing is taken as silenced: fail closed.
		return f
	}
	f.Silenced = freeze.SilencedClusters(cgus.Items)
	return f
}

// answer runs one alert query.
func answer(ctx context.Context, e analysis.Endpoint, query string) freeze.Answer {
	if err := analysis.CheckInstant(query); err != nil {
		return freeze.Answer{Invalid: err.Error()}
	}
	body, err := e.Query(ctx, query)
	if err != nil {
		return freeze.Answer{Err: err.Error()}
	}
	samples, err := analysis.Series(body)
	if err != nil {
		return freeze.Answer{Err: err.Error()}
	}
	return freeze.Answer{Samples: samples}
}

// endpoint is the query API src names, with the token and CA of its Secret.
func (r *Reconciler) endpoint(ctx context.Context, src ranv1alpha1.PrometheusSource) (analysis.Endpoint, error) {
	if ref := src.SecretRef; ref != nil {
		return analysis.EndpointOf(ctx, r.Reader, src.URL, ref.Namespace, ref.Name, "spec.alerts.prometheus.secretRef")
	}
	return analysis.Endpoint{URL: src.URL}, nil
}
