package sim

import (
	"maps"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape returns the series the metrics endpoint serves, each as `name{labels}` with its value.
func scrape(t *testing.T, s *Simulator) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != textFormat {
		t.Fatalf("Content-Type = %q, want %q", ct, textFormat)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("the endpoint serves no valid text format: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		if f.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s is a %s, want a gauge", name, f.GetType())
		}
		for _, m := range f.Metric {
			labels := model.LabelSet{}
			for _, l := range m.Label {
				labels[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
			}
			out[name+labels.String()] = m.GetGauge().GetValue()
		}
	}
	return out
}

// upgrade makes a spoke's ClusterVersion ask for version and runs its operators once.
func upgrade(t *testing.T, sp *Spoke, version string) {
	t.Helper()
	cv, err := sp.clusterVersion()
	if err != nil {
		t.Fatal(err)
	}
	desire(cv, version)
	obj, err := toUnstructured(cv)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.objects.Update(obj); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.stepOperators(t0); err != nil {
		t.Fatal(err)
	}
}

func TestMetricsServeEachReachableSpoke(t *testing.T) {
	burn := Alert{Name: "KubeAPIErrorBudgetBurn", Severity: SeverityCritical, Labels: map[string]string{
		"namespace": "openshift-kube-apiserver", "not-a-label": "x", "cluster": "elsewhere", "__name__": "x",
	}}
	s := &Simulator{spokes: map[string]*Spoke{}}
	for _, spec := range []SpokeSpec{
		{Name: "sno-1", Version: "4.16.10", Alerts: []Alert{burn, burn}},
		{Name: "sno-2", Version: "4.16.10", Behaviour: Behaviour{DegradeAfterUpgrade: 0.3}},
		{Name: "sno-3", Version: "4.16.10"},
	} {
		sp, err := newSpoke(spec, nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		s.spokes[spec.Name] = sp
	}
	s.spokes["sno-3"].reachable = false

	healthy := map[string]float64{
		`cluster:apiserver_request_error_ratio:rate5m{cluster="sno-1"}`:                                                                               BaselineErrorRatio("sno-1"),
		`cluster:apiserver_request_error_ratio:rate5m{cluster="sno-2"}`:                                                                               BaselineErrorRatio("sno-2"),
		`cluster_version_info{cluster="sno-1", version="4.16.10"}`:                                                                                    1,
		`cluster_version_info{cluster="sno-2", version="4.16.10"}`:                                                                                    1,
		`ALERTS{alertname="KubeAPIErrorBudgetBurn", alertstate="firing", cluster="sno-1", namespace="openshift-kube-apiserver", severity="critical"}`: 1,
	}
	if got := scrape(t, s); !maps.Equal(got, healthy) {
		t.Fatalf("before the upgrade the endpoint serves\n%v\nwant\n%v", got, healthy)
	}

	upgrade(t, s.spokes["sno-1"], "4.16.12")
	upgrade(t, s.spokes["sno-2"], "4.16.12")
	degraded := maps.Clone(healthy)
	delete(degraded, `cluster_version_info{cluster="sno-1", version="4.16.10"}`)
	delete(degraded, `cluster_version_info{cluster="sno-2", version="4.16.10"}`)
	degraded[`cluster_version_info{cluster="sno-1", version="4.16.12"}`] = 1
	degraded[`cluster_version_info{cluster="sno-2", version="4.16.12"}`] = 1
	degraded[`cluster:apiserver_request_error_ratio:rate5m{cluster="sno-2"}`] = 0.3
	if got := scrape(t, s); !maps.Equal(got, degraded) {
		t.Fatalf("after the upgrade the endpoint serves\n%v\nwant\n%v", got, degraded)
	}
}

func TestBaselineErrorRatioIsSmallAndDiffersByCluster(t *testing.T) {
	seen := map[float64]string{}
	for _, cluster := range []string{"sno-1", "sno-2", "sno-3", "sno-10", "hub-a", "hub-b"} {
		r := BaselineErrorRatio(cluster)
		if r < 0.01 || r >= 0.015 {
			t.Errorf("BaselineErrorRatio(%q) = %v, want in [0.01, 0.015)", cluster, r)
		}
		if other, tied := seen[r]; tied {
			t.Errorf("%s and %s have the same baseline %v", cluster, other, r)
		}
		seen[r] = cluster
		if again := BaselineErrorRatio(cluster); again != r {
			t.Errorf("BaselineErrorRatio(%q) changed from %v to %v", cluster, r, again)
		}
	}
}
