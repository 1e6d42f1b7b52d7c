package monitoring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/cgu-operator/cgu-operator/pkg/metrics"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// exported is what a registry with the operator's metrics and a reconcile error counter for
// two controllers serves, as a scrape would show it.
func exported(t *testing.T) Exported {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics.New(reg)
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_errors_total", Help: "Reconcile errors.",
	}, []string{"controller"})
	reg.MustRegister(errs)
	errs.WithLabelValues("clustergroupupgrade")
	errs.WithLabelValues("ztp")
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return FromFamilies(families)
}

func TestCheckExpr(t *testing.T) {
	e := exported(t)
	cases := map[string]struct {
		expr string
		// problem is in the error; "" for none.
		problem string
	}{
		"gauge":                    {`sum(cgu_operator_upgrades{state="TimedOut"}) > 0`, ""},
		"histogram buckets":        {`histogram_quantile(0.9, sum by (le, outcome) (increase(cgu_operator_batch_duration_seconds_bucket[1d])))`, ""},
		"histogram count":          {`sum(increase(cgu_operator_batch_duration_seconds_count{outcome="timed_out"}[30m])) > 0`, ""},
		"name matcher":             {`{__name__="cgu_operator_batches_overdue"} > 0`, ""},
		"alternation":              {`sum by (controller) (rate(controller_runtime_reconcile_errors_total{controller=~"clustergroupupgrade|ztp"}[5m]))`, ""},
		"pattern":                  {`cgu_operator_clusters{state=~"completed|timed_.*"}`, ""},
		"negative matchers":        {`cgu_operator_clusters{state!="pending", state!~"x|y"}`, ""},
		"not PromQL":               {`sum(cgu_operator_upgrades{state="TimedOut"}`, "parsing"},
		"unknown metric":           {`sum(rate(cgu_operator_upgrade_errors_total[5m]))`, "metric cgu_operator_upgrade_errors_total is not exported"},
		"histogram name":           {`cgu_operator_batch_duration_seconds`, "metric cgu_operator_batch_duration_seconds is not exported"},
		"one of two":               {`cgu_operator_upgrades / on() cgu_operator_cluster`, "metric cgu_operator_cluster is not exported"},
		"unknown label":            {`cgu_operator_upgrades{phase="TimedOut"}`, "cgu_operator_upgrades has no label phase"},
		"unknown value":            {`cgu_operator_clusters{state="TimedOut"}`, `no series has state="TimedOut"`},
		"alternation typo":         {`controller_runtime_reconcile_errors_total{controller=~"clustergroupupgrade|ibu"}`, `no series has controller="ibu"`},
		"pattern matching nothing": {`cgu_operator_clusters{state=~"Timed.*"}`, "matches no series"},
		"name pattern":             {`{__name__=~"cgu_operator_.*"}`, "must be given exactly"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := CheckExpr(tc.expr, e)
			switch {
			case tc.problem == "" && err != nil:
				t.Errorf("CheckExpr(%q): %v", tc.expr, err)
			case tc.problem != "" && err == nil:
				t.Errorf("CheckExpr(%q) found no problem, want one with %q", tc.expr, tc.problem)
			case tc.problem != "" && !strings.Contains(err.Error(), tc.problem):
				t.Errorf("CheckExpr(%q) = %v, want a problem with %q", tc.expr, err, tc.problem)
			}
		})
	}
}

func TestExpandVariables(t *testing.T) {
	cases := map[string]struct {
		expr, want string
		bad        bool
	}{
		"none":             {expr: `sum(cgu_operator_upgrades)`, want: `sum(cgu_operator_upgrades)`},
		"rate interval":    {expr: `rate(x[$__rate_interval])`, want: `rate(x[4m])`},
		"braces":           {expr: `increase(x[${__range}])`, want: `increase(x[1d])`},
		"format":           {expr: `increase(x[${__interval:raw}])`, want: `increase(x[1m])`},
		"two":              {expr: `rate(x[$__interval]) * $__range_s`, want: `rate(x[1m]) * 86400`},
		"PromQL's own":     {expr: `label_replace(x, "a", "$1", "b", "(.*)")`, want: `label_replace(x, "a", "$1", "b", "(.*)")`},
		"unknown variable": {expr: `x{cluster="$cluster"}`, bad: true},
		"unknown braces":   {expr: `x{cluster="${cluster}"}`, bad: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ExpandVariables(tc.expr)
			switch {
			case tc.bad && err == nil:
				t.Errorf("ExpandVariables(%q) = %q, want an error", tc.expr, got)
			case !tc.bad && err != nil:
				t.Errorf("ExpandVariables(%q): %v", tc.expr, err)
			case !tc.bad && got != tc.want:
				t.Errorf("ExpandVariables(%q) = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

// goodRules returns a PrometheusRule that passes CheckRules.
func goodRules() *RuleFile {
	f := &RuleFile{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule"}
	f.Metadata.Name = "test"
	f.Spec.Groups = []RuleGroup{{Name: "g", Rules: []Rule{
		{Alert: "A", Expr: `sum(cgu_operator_upgrades{state="TimedOut"}) > 0`, For: "5m",
			Labels: map[string]string{"severity": "warning"}, Annotations: map[string]string{"summary": "s", "description": "d"}},
		{Alert: "B", Expr: `sum(cgu_operator_batches_overdue) > 0`, For: "10m",
			Labels: map[string]string{"severity": "critical"}, Annotations: map[string]string{"summary": "s", "description": "d"}},
	}}}
	return f
}

func TestCheckRules(t *testing.T) {
	e := exported(t)
	if err := CheckRules(goodRules(), e); err != nil {
		t.Fatalf("a good PrometheusRule: %v", err)
	}
	cases := map[string]struct {
		change  func(f *RuleFile)
		problem string
	}{
		"kind":           {func(f *RuleFile) { f.Kind = "ConfigMap" }, "is not a monitoring.coreos.com/v1 PrometheusRule"},
		"no group":       {func(f *RuleFile) { f.Spec.Groups = nil }, "no rule group"},
		"recording rule": {func(f *RuleFile) { f.Spec.Groups[0].Rules[0].Alert, f.Spec.Groups[0].Rules[0].Record = "", "r" }, "not an alert"},
		"same name":      {func(f *RuleFile) { f.Spec.Groups[0].Rules[1].Alert = "A" }, "used twice"},
		"no for":         {func(f *RuleFile) { f.Spec.Groups[0].Rules[0].For = "" }, "not a positive duration"},
		"bad for":        {func(f *RuleFile) { f.Spec.Groups[0].Rules[0].For = "5 minutes" }, "not a positive duration"},
		"severity":       {func(f *RuleFile) { f.Spec.Groups[0].Rules[0].Labels["severity"] = "page" }, `severity "page"`},
		"no summary":     {func(f *RuleFile) { delete(f.Spec.Groups[0].Rules[1].Annotations, "summary") }, "alert B: no summary"},
		"no description": {func(f *RuleFile) { f.Spec.Groups[0].Rules[0].Annotations["description"] = "" }, "alert A: no description"},
		"bad expression": {func(f *RuleFile) { f.Spec.Groups[0].Rules[1].Expr = `sum(cgu_operator_batches_overdue > 0` }, "alert B: parsing"},
		"unknown metric": {func(f *RuleFile) { f.Spec.Groups[0].Rules[1].Expr = `cgu_operator_batches_late > 0` }, "cgu_operator_batches_late is not exported"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := goodRules()
			tc.change(f)
			err := CheckRules(f, e)
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("CheckRules = %v, want a problem with %q", err, tc.problem)
			}
		})
	}
}

func TestLoadRulesRefusesUnknownFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	data := `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: test}
spec:
  groups:
  - name: g
    rules:
    - alert: A
      expr: vector(1)
      for: 5m
      annotation: {summary: s}
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRules(path); err == nil || !strings.Contains(err.Error(), "annotation") {
		t.Errorf("LoadRules = %v, want an error naming the unknown field", err)
	}
}

// goodDashboard is a dashboard that passes CheckDashboard, with a collapsed row holding a
// panel.
const goodDashboard = `{
  "title": "t", "uid": "u", "schemaVersion": 39,
  "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
  "panels": [
    {"id": 1, "type": "stat", "title": "CGUs", "description": "d", "gridPos": {"h": 4, "w": 12, "x": 0, "y": 0},
     "datasource": {"type": "prometheus", "uid": "${datasource}"},
     "targets": [{"refId": "A", "expr": "sum by (state) (cgu_operator_upgrades)",
                  "datasource": {"type": "prometheus", "uid": "${datasource}"}}]},
    {"id": 2, "type": "row", "title": "More", "collapsed": true, "gridPos": {"h": 1, "w": 24, "x": 0, "y": 4},
     "panels": [
       {"id": 3, "type": "timeseries", "title": "Errors", "description": "d", "gridPos": {"h": 8, "w": 24, "x": 0, "y": 5},
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "targets": [{"refId": "A", "expr": "sum(rate(cgu_operator_remediation_errors_total[$__rate_interval]))"}]}
     ]}
  ]
}`

func TestCheckDashboard(t *testing.T) {
	e := exported(t)
	good := func(t *testing.T) *Dashboard {
		t.Helper()
		d := &Dashboard{}
		if err := json.Unmarshal([]byte(goodDashboard), d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if err := CheckDashboard(good(t), e); err != nil {
		t.Fatalf("a good dashboard: %v", err)
	}
	nested := func(d *Dashboard) *Panel { return &d.Panels[1].Panels[0] }
	cases := map[string]struct {
		change  func(d *Dashboard)
		problem string
	}{
		"no variable":        {func(d *Dashboard) { d.Templating.List = nil }, `no template variable "datasource"`},
		"same id":            {func(d *Dashboard) { nested(d).ID = 1 }, "unique"},
		"no title":           {func(d *Dashboard) { d.Panels[0].Title = "" }, "no title"},
		"no place":           {func(d *Dashboard) { nested(d).GridPos = nil }, "no gridPos"},
		"too wide":           {func(d *Dashboard) { d.Panels[0].GridPos.X = 16 }, "no gridPos"},
		"no description":     {func(d *Dashboard) { nested(d).Description = "" }, "no description"},
		"fixed data source":  {func(d *Dashboard) { nested(d).Datasource.UID = "prometheus" }, "data source is not ${datasource}"},
		"query data source":  {func(d *Dashboard) { d.Panels[0].Targets[0].Datasource.UID = "P1" }, "query A: the data source"},
		"no query":           {func(d *Dashboard) { d.Panels[0].Targets = nil }, "no query"},
		"nested bad query":   {func(d *Dashboard) { nested(d).Targets[0].Expr = "sum(rate(x[5m])" }, `panel 3 "Errors": query A: parsing`},
		"nested unknown":     {func(d *Dashboard) { nested(d).Targets[0].Expr = "cgu_operator_errors_total" }, "cgu_operator_errors_total is not exported"},
		"unknown variable":   {func(d *Dashboard) { d.Panels[0].Targets[0].Expr = `cgu_operator_upgrades{state="$state"}` }, "unknown variable $state"},
		"query on a row":     {func(d *Dashboard) { d.Panels[1].Targets = d.Panels[0].Targets }, "a row has no queries"},
		"no panel":           {func(d *Dashboard) { d.Panels = nil }, "no panel"},
		"no uid":             {func(d *Dashboard) { d.UID = "" }, "a title and a uid"},
		"label typo in stat": {func(d *Dashboard) { d.Panels[0].Targets[0].Expr = `cgu_operator_upgrades{state="Timedout"}` }, `no series has state="Timedout"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := good(t)
			tc.change(d)
			err := CheckDashboard(d, e)
			if err == nil || !strings.Contains(err.Error(), tc.problem) {
				t.Errorf("CheckDashboard = %v, want a problem with %q", err, tc.problem)
			}
		})
	}
}

func TestParseExposition(t *testing.T) {
	text := `# TYPE cgu_operator_batch_duration_seconds histogram
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="60"} 0
cgu_operator_batch_duration_seconds_bucket{outcome="completed",le="+Inf"} 1
cgu_operator_batch_duration_seconds_sum{outcome="completed"} 120
cgu_operator_batch_duration_seconds_count{outcome="completed"} 1
# TYPE cgu_operator_batches_overdue gauge
cgu_operator_batches_overdue 0
`
	e, err := ParseExposition(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{
		`cgu_operator_batch_duration_seconds_bucket{le="+Inf", outcome="completed"}`,
		`cgu_operator_batch_duration_seconds_sum{outcome="completed"}`,
		`cgu_operator_batch_duration_seconds_count`,
		`cgu_operator_batches_overdue`,
	} {
		if err := CheckExpr(expr, e); err != nil {
			t.Errorf("CheckExpr(%q): %v", expr, err)
		}
	}
	if err := CheckExpr(`cgu_operator_batch_duration_seconds_sum{le="60"}`, e); err == nil {
		t.Error("the sum of a histogram has no le label")
	}
	if _, err := ParseExposition(strings.NewReader("not an exposition {\n")); err == nil {
		t.Error("ParseExposition accepted a bad exposition")
	}
}

// TestKustomization builds config/monitoring as kubectl apply -k does: the PrometheusRule
// and the dashboard's ConfigMap, labelled for Grafana's sidecar, in the operator's namespace.
func TestKustomization(t *testing.T) {
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "config", "monitoring")
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatal(err)
	}
	dashboard, err := os.ReadFile(filepath.Join(dir, "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, r := range resources.Resources() {
		kinds[r.GetKind()] = r.GetName()
		if ns := r.GetNamespace(); ns != "cgu-operator-system" {
			t.Errorf("%s %s is in namespace %q, want cgu-operator-system", r.GetKind(), r.GetName(), ns)
		}
		if r.GetKind() != "ConfigMap" {
			continue
		}
		if got := r.GetLabels()["grafana_dashboard"]; got != "1" {
			t.Errorf("the dashboard's ConfigMap has grafana_dashboard=%q, want \"1\"", got)
		}
		if got := r.GetDataMap()["cgu-operator.json"]; got != string(dashboard) {
			t.Error("the dashboard's ConfigMap does not hold grafana-dashboard.json as cgu-operator.json")
		}
	}
	want := map[string]string{"PrometheusRule": "cgu-operator", "ConfigMap": "cgu-operator-grafana-dashboard"}
	if len(kinds) != len(want) || kinds["PrometheusRule"] != want["PrometheusRule"] || kinds["ConfigMap"] != want["ConfigMap"] {
		t.Errorf("config/monitoring builds %v, want %v", kinds, want)
	}
}

func TestDocQueries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "# Title\n\n```promql\n# one\nsum(a)\n\n# two, on two lines\nsum(b)\n  / sum(c)\n```\n\n```sh\nnot(a_query)\n```\n\n```promql\nd\n```\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := DocQueries(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sum(a)", "sum(b)\n  / sum(c)", "d"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("DocQueries = %q, want %q", got, want)
	}
	if err := os.WriteFile(path, []byte("```promql\nsum(a)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := DocQueries(path); err == nil {
		t.Error("DocQueries accepted a block that is not closed")
	}
}
