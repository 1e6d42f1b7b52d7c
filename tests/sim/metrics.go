package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/utils/ptr"
)

// The metrics endpoint plays the series ACM Observability collects from every managed cluster
// into the hub, where one query sees the whole fleet and tells clusters apart by their cluster
// label. It serves, in the Prometheus text exposition format (version 0.0.4), for every
// simulated spoke that is reachable:
//
//	cluster:apiserver_request_error_ratio:rate5m{cluster="<spoke>"}
//	    the share of the cluster's API requests that fail: BaselineErrorRatio(spoke), a healthy
//	    value a little different for each cluster, until an update completed on a cluster whose
//	    Behaviour.DegradeAfterUpgrade is above zero; from then on that value.
//	cluster_version_info{cluster="<spoke>",version="<version>"} 1
//	    the version of the last update the cluster's ClusterVersion history shows completed.
//	ALERTS{cluster="<spoke>",alertname="<name>",severity="<severity>",alertstate="firing",...} 1
//	    one series for each alert firing on the cluster (SpokeSpec.Alerts, SetAlerts), with the
//	    alert's other labels.
//
// A spoke that is unreachable (SetReachable false) serves nothing, as its metrics collector
// then cannot reach the hub: its series go stale. Prometheus scrapes the endpoint with
// honor_labels, so the cluster label is the spoke's.

// The names of the series the metrics endpoint serves.
const (
	MetricErrorRatio  = "cluster:apiserver_request_error_ratio:rate5m"
	MetricVersionInfo = "cluster_version_info"
	MetricAlerts      = "ALERTS"
)

// textFormat is the content type of the Prometheus text exposition format.
const textFormat = "text/plain; version=0.0.4; charset=utf-8"

// BaselineErrorRatio is the API error ratio a healthy cluster reports: 0.01 plus up to five
// thousandths that depend on the cluster's name only, so that clusters differ (a statistical
// comparison of two sets of clusters has no ties) and every run gives the same values.
func BaselineErrorRatio(cluster string) float64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(cluster))
	return 0.01 + float64(h.Sum32()%5000)/1e6
}

// Metrics returns the handler of the metrics endpoint: at any path, the series of every
// reachable spoke as they are at the time of the request.
func (s *Simulator) Metrics() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", textFormat)
		for _, f := range metricFamilies(s.spokeSeries()) {
			if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
				return
			}
		}
	})
}

// ServeMetrics serves the metrics endpoint at /metrics on a free loopback port until ctx is
// done or the hub stops, and returns its host:port, the target a Prometheus scrapes.
func (s *Simulator) ServeMetrics(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("metrics endpoint: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.Metrics())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.hub.Go(func(context.Context) { _ = srv.Serve(l) })
	s.hub.Go(func(hubCtx context.Context) {
		select {
		case <-ctx.Done():
		case <-hubCtx.Done():
		}
		_ = srv.Close()
	})
	return l.Addr().String(), nil
}

// seriesOfSpoke is what one spoke's metrics report.
type seriesOfSpoke struct {
	cluster    string
	errorRatio float64
	version    string
	alerts     []Alert
}

// spokeSeries returns the series of every reachable spoke, ordered by cluster name.
func (s *Simulator) spokeSeries() []seriesOfSpoke {
	s.mu.RLock()
	spokes := slices.Collect(maps.Values(s.spokes))
	s.mu.RUnlock()
	out := make([]seriesOfSpoke, 0, len(spokes))
	for _, sp := range spokes {
		sp.mu.Lock()
		series, ok := sp.series()
		sp.mu.Unlock()
		if ok {
			out = append(out, series)
		}
	}
	slices.SortFunc(out, func(a, b seriesOfSpoke) int { return strings.Compare(a.cluster, b.cluster) })
	return out
}

// series returns what the spoke's metrics report; false when it is unreachable.
func (sp *Spoke) series() (seriesOfSpoke, bool) {
	if !sp.reachable {
		return seriesOfSpoke{}, false
	}
	out := seriesOfSpoke{cluster: sp.name, errorRatio: BaselineErrorRatio(sp.name)}
	if cv, err := sp.clusterVersion(); err == nil {
		out.version = completedVersion(cv)
		if degraded := sp.cvo.Behaviour.DegradeAfterUpgrade; degraded > 0 && upgraded(cv) {
			out.errorRatio = degraded
		}
	}
	for _, op := range sp.operators {
		if a, ok := op.(*alerts); ok {
			out.alerts = copyAlerts(a.firing)
		}
	}
	return out, true
}

// upgraded reports whether the latest entry of the ClusterVersion's history completed an
// update to a version other than the one the cluster was installed at (its oldest entry).
func upgraded(cv *configv1.ClusterVersion) bool {
	h := cv.Status.History
	return len(h) > 1 && h[0].State == configv1.CompletedUpdate && h[0].Version != h[len(h)-1].Version
}

// metricFamilies returns the metric families of the spokes' series, leaving out the empty ones.
func metricFamilies(spokes []seriesOfSpoke) []*dto.MetricFamily {
	ratio := gaugeFamily(MetricErrorRatio, "Share of the cluster's API requests that fail, over 5 minutes.")
	version := gaugeFamily(MetricVersionInfo, "The version the cluster's last completed update brought, as a label.")
	firing := gaugeFamily(MetricAlerts, "Alerts firing on the cluster.")
	for _, sp := range spokes {
		ratio.Metric = append(ratio.Metric, gauge(sp.errorRatio, "cluster", sp.cluster))
		if sp.version != "" {
			version.Metric = append(version.Metric, gauge(1, "cluster", sp.cluster, "version", sp.version))
		}
		seen := map[string]bool{}
		for _, a := range sp.alerts {
			labels := alertLabels(sp.cluster, a)
			if key := strings.Join(labels, "\x00"); !seen[key] {
				seen[key] = true
				firing.Metric = append(firing.Metric, gauge(1, labels...))
			}
		}
	}
	return slices.DeleteFunc([]*dto.MetricFamily{ratio, version, firing}, func(f *dto.MetricFamily) bool {
		return len(f.Metric) == 0
	})
}

// alertLabels returns the label names and values of an alert's ALERTS series, sorted by name:
// the alert's own labels, leaving out those whose names Prometheus would refuse or that
// would hide the series' cluster, alertname, severity and alertstate.
func alertLabels(cluster string, a Alert) []string {
	set := map[string]string{}
	for name, value := range a.Labels {
		if model.LegacyValidation.IsValidLabelName(name) && !strings.HasPrefix(name, "__") {
			set[name] = value
		}
	}
	set["cluster"], set["alertname"], set["severity"], set["alertstate"] = cluster, a.Name, a.Severity, "firing"
	out := make([]string, 0, 2*len(set))
	for _, name := range slices.Sorted(maps.Keys(set)) {
		out = append(out, name, set[name])
	}
	return out
}

func gaugeFamily(name, help string) *dto.MetricFamily {
	return &dto.MetricFamily{Name: ptr.To(name), Help: ptr.To(help), Type: ptr.To(dto.MetricType_GAUGE)}
}

// gauge returns a gauge of value with labels given as name, value, name, value...
func gauge(value float64, labels ...string) *dto.Metric {
	m := &dto.Metric{Gauge: &dto.Gauge{Value: ptr.To(value)}}
	for i := 0; i+1 < len(labels); i += 2 {
		m.Label = append(m.Label, &dto.LabelPair{Name: ptr.To(labels[i]), Value: ptr.To(labels[i+1])})
	}
	return m
}
