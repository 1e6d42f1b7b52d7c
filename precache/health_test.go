package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
)

var now = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func options(run string) healthOptions {
	return healthOptions{namespace: "cgu-spoke", configMap: "cgu-health", run: run}
}

// fakeSource is a cluster with one operator, one alert and a ClusterVersion; alertsErr makes
// its alerts unreadable.
type fakeSource struct {
	alertsErr error
}

func (fakeSource) ClusterOperators(context.Context) ([]configv1.ClusterOperator, error) {
	return []configv1.ClusterOperator{{ObjectMeta: metav1.ObjectMeta{Name: "etcd"}}}, nil
}

func (fakeSource) ClusterVersion(context.Context) (*configv1.ClusterVersion, error) {
	return &configv1.ClusterVersion{Status: configv1.ClusterVersionStatus{Conditions: []configv1.ClusterOperatorStatusCondition{
		{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionTrue},
	}}}, nil
}

func (f fakeSource) Alerts(context.Context) ([]spokehealth.Alert, error) {
	if f.alertsErr != nil {
		return nil, f.alertsErr
	}
	return []spokehealth.Alert{{Name: "Watchdog", Severity: "none", State: "firing"}}, nil
}

// readReport reads the report of the ConfigMap cgu-spoke/cgu-health.
func readReport(t *testing.T, c client.Client) spokehealth.Report {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "cgu-spoke", Name: "cgu-health"}, cm); err != nil {
		t.Fatalf("reading the ConfigMap: %v", err)
	}
	r, err := spokehealth.FromConfigMap(cm)
	if err != nil {
		t.Fatalf("FromConfigMap() error: %v", err)
	}
	return r
}

func TestRunHealthCreatesThenUpdates(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(spokehealth.Scheme()).Build()
	steps := []struct {
		name       string
		src        fakeSource
		run        string
		at         time.Time
		wantAlerts int // -1: not read
		wantErrors []string
	}{
		{name: "create", src: fakeSource{}, run: "run-1", at: now, wantAlerts: 1},
		{name: "update", src: fakeSource{alertsErr: errors.New("answer 403 Forbidden")}, run: "run-2", at: now.Add(time.Minute),
			wantAlerts: -1, wantErrors: []string{"alerts: answer 403 Forbidden"}},
	}
	for _, s := range steps {
		returned, err := runHealth(context.Background(), c, s.src, options(s.run), s.at)
		if err != nil {
			t.Fatalf("%s: runHealth() error: %v", s.name, err)
		}
		got := readReport(t, c)
		if got.Run != s.run || !got.CollectedAt.Time.Equal(s.at) || len(got.ClusterOperators) != 1 {
			t.Errorf("%s: report = %+v, want %s at %v with one operator", s.name, got, s.run, s.at)
		}
		if (s.wantAlerts < 0) != (got.Alerts == nil) || (s.wantAlerts >= 0 && len(got.Alerts) != s.wantAlerts) {
			t.Errorf("%s: alerts = %#v, want %d (-1: not read)", s.name, got.Alerts, s.wantAlerts)
		}
		if diff := cmp.Diff(s.wantErrors, got.Errors); diff != "" {
			t.Errorf("%s: errors mismatch (-want +got):\n%s", s.name, diff)
		}
		if diff := cmp.Diff(returned, got, cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })); diff != "" {
			t.Errorf("%s: runHealth() returned another report than it wrote (-returned +written):\n%s", s.name, diff)
		}
	}
	var list corev1.ConfigMapList
	if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 1 {
		t.Errorf("ConfigMaps = %d (%v), want 1", len(list.Items), err)
	}
}

func TestRunHealthMissingFlags(t *testing.T) {
	cases := map[string]struct {
		change func(*healthOptions)
		want   string
	}{
		"no namespace":  {change: func(o *healthOptions) { o.namespace = "" }, want: "missing required flags: --namespace"},
		"no configmap":  {change: func(o *healthOptions) { o.configMap = "" }, want: "missing required flags: --configmap"},
		"no run":        {change: func(o *healthOptions) { o.run = "" }, want: "missing required flags: --run"},
		"none of those": {change: func(o *healthOptions) { *o = healthOptions{} }, want: "missing required flags: --namespace, --configmap, --run"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(spokehealth.Scheme()).Build()
			o := options("run-1")
			tc.change(&o)
			_, err := runHealth(context.Background(), c, fakeSource{}, o, now)
			if err == nil || err.Error() != tc.want {
				t.Errorf("runHealth() error = %v, want %q", err, tc.want)
			}
			var list corev1.ConfigMapList
			if err := c.List(context.Background(), &list); err != nil || len(list.Items) != 0 {
				t.Errorf("ConfigMaps = %d (%v), want none", len(list.Items), err)
			}
		})
	}
}

func TestRunHealthWriteFails(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cgu-health", errors.New("no RBAC"))
	cases := map[string]interceptor.Funcs{
		"create": {Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return forbidden }},
		"update": {Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error { return forbidden }},
	}
	for name, funcs := range cases {
		t.Run(name, func(t *testing.T) {
			existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "cgu-spoke", Name: "cgu-health"}}
			c := fake.NewClientBuilder().WithScheme(spokehealth.Scheme()).WithObjects(existing).WithInterceptorFuncs(funcs).Build()
			_, err := runHealth(context.Background(), c, fakeSource{}, options("run-1"), now)
			if err == nil || !strings.HasPrefix(err.Error(), "writing ConfigMap cgu-spoke/cgu-health: ") || !apierrors.IsForbidden(err) {
				t.Errorf("runHealth() error = %v, want a wrapped Forbidden naming the ConfigMap", err)
			}
		})
	}
}

func TestParseHealthFlags(t *testing.T) {
	cases := map[string]struct {
		args    []string
		want    healthOptions
		wantErr string
	}{
		"defaults": {
			args: []string{"--namespace", "ns", "--configmap", "cm", "--run", "r"},
			want: healthOptions{namespace: "ns", configMap: "cm", run: "r", prometheusURL: "https://thanos-querier.openshift-monitoring.svc:9091",
				tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token", caFile: "/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt"},
		},
		"all flags": {
			args: []string{"--namespace=ns", "--configmap=cm", "--run=r", "--prometheus-url=http://localhost:9090", "--token-file=/t", "--ca-file=/ca"},
			want: healthOptions{namespace: "ns", configMap: "cm", run: "r", prometheusURL: "http://localhost:9090", tokenFile: "/t", caFile: "/ca"},
		},
		"missing run":     {args: []string{"--namespace", "ns", "--configmap", "cm"}, wantErr: "missing required flags: --run"},
		"unknown flag":    {args: []string{"--namespace", "ns", "--verbose"}, wantErr: "flag provided but not defined: -verbose"},
		"help":            {args: []string{"-h"}, wantErr: flag.ErrHelp.Error()},
		"extra arguments": {args: []string{"--namespace", "ns", "--configmap", "cm", "--run", "r", "now"}, wantErr: "unexpected arguments: now"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseHealthFlags(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("parseHealthFlags() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseHealthFlags() error: %v", err)
			}
			if got != tc.want {
				t.Errorf("parseHealthFlags() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestHealthMainFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := healthMain(context.Background(), []string{"--run", "r"}, &stdout, &stderr); code != 1 {
		t.Errorf("healthMain() without --namespace and --configmap = %d, want 1", code)
	}
	if got, want := stderr.String(), "precache health: missing required flags: --namespace, --configmap\n"; got != want || stdout.Len() != 0 {
		t.Errorf("healthMain() printed %q and %q, want only %q on stderr", stdout.String(), got, want)
	}

	stderr.Reset()
	if code := healthMain(context.Background(), []string{"-h"}, &stdout, &stderr); code != 0 {
		t.Errorf("healthMain(-h) = %d, want 0", code)
	}
	if !strings.Contains(stderr.String(), "-prometheus-url") {
		t.Errorf("healthMain(-h) printed %q, want the flags", stderr.String())
	}
}

func TestSummary(t *testing.T) {
	r := spokehealth.Report{Run: "run-1", ClusterOperators: []spokehealth.Operator{{Name: "etcd"}, {Name: "dns"}}, Alerts: []spokehealth.Alert{},
		Errors: []string{"ClusterVersion: not found"}}
	want := "Wrote ConfigMap cgu-spoke/cgu-health for run run-1: cluster operators: 2, alerts: 0, ClusterVersion conditions: not read, errors: 1"
	if got := summary(options("run-1"), r); got != want {
		t.Errorf("summary() = %q, want %q", got, want)
	}
}

// tlsPrometheus starts a Prometheus over TLS that answers one firing alert to the bearer
// token "secret" and 401 to anything else, and writes its certificate to a PEM file.
func tlsPrometheus(t *testing.T) (url, caFile string) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"alerts":[{"labels":{"alertname":"Watchdog","severity":"none"},"state":"firing"}]}}`))
	}))
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "service-ca.crt")
	writeFile(t, caFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	return srv.URL, caFile
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPrometheusFor(t *testing.T) {
	url, caFile := tlsPrometheus(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	writeFile(t, tokenFile, "secret\n")
	notPEM := filepath.Join(dir, "not-pem.crt")
	writeFile(t, notPEM, "hello")
	cases := map[string]struct {
		caFile     string
		wantErr    string
		wantStderr string
	}{
		"service CA":    {caFile: caFile},
		"no CA file":    {caFile: filepath.Join(dir, "missing.crt"), wantErr: "certificate", wantStderr: "using the system's certificate authorities: open " + dir},
		"CA file empty": {caFile: notPEM, wantErr: "certificate", wantStderr: "not-pem.crt holds no PEM certificate"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			p, err := prometheusFor(healthOptions{prometheusURL: url, tokenFile: tokenFile, caFile: tc.caFile}, &stderr)
			if err != nil {
				t.Fatalf("prometheusFor() error: %v", err)
			}
			if p.Token != "secret" || p.URL != url {
				t.Errorf("prometheusFor() = token %q, URL %s, want secret, %s", p.Token, p.URL, url)
			}
			alerts, err := p.Alerts(context.Background())
			if tc.wantErr == "" {
				if err != nil || len(alerts) != 1 {
					t.Errorf("Alerts() = %v, %v, want the Watchdog", alerts, err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Alerts() error = %v, want one containing %q", err, tc.wantErr)
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) || (tc.wantStderr == "") != (stderr.Len() == 0) {
				t.Errorf("prometheusFor() printed %q, want %q", stderr.String(), tc.wantStderr)
			}
		})
	}
}

func TestNewSourceWithoutToken(t *testing.T) {
	url, caFile := tlsPrometheus(t)
	c := fake.NewClientBuilder().WithScheme(spokehealth.Scheme()).
		WithObjects(&configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: "etcd"}}).Build()
	o := healthOptions{prometheusURL: url, tokenFile: filepath.Join(t.TempDir(), "token"), caFile: caFile}

	r := spokehealth.Collect(context.Background(), newSource(c, o, &bytes.Buffer{}), "run-1", now)

	if len(r.ClusterOperators) != 1 || r.Alerts != nil {
		t.Errorf("report = %+v, want one operator and alerts not read", r)
	}
	if len(r.Errors) != 2 || !strings.HasPrefix(r.Errors[0], "alerts: reading the Prometheus token: open ") {
		t.Errorf("errors = %q, want the token's and the ClusterVersion's", r.Errors)
	}
}

func TestRun(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"no command":      {args: nil, wantCode: 1, wantStderr: "Usage: precache COMMAND"},
		"unknown command": {args: []string{"prefetch"}, wantCode: 1, wantStderr: `precache: unknown command "prefetch"`},
		"help":            {args: []string{"help"}, wantCode: 0, wantStdout: "health   Collect"},
		"health help":     {args: []string{"health", "-h"}, wantCode: 0, wantStderr: "-configmap"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("run(%q) = %d, want %d", tc.args, code, tc.wantCode)
			}
			for _, c := range []struct {
				name, got, want string
			}{{"stdout", stdout.String(), tc.wantStdout}, {"stderr", stderr.String(), tc.wantStderr}} {
				if !strings.Contains(c.got, c.want) || (c.want == "") != (c.got == "") {
					t.Errorf("run(%q) %s = %q, want %q", tc.args, c.name, c.got, c.want)
				}
			}
		})
	}
}
