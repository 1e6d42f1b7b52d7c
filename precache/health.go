package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
)

const (
	defaultPrometheusURL = "https://thanos-querier.openshift-monitoring.svc:9091"
	// serviceAccountDir is where the kubelet mounts the pod's service account token and the
	// service CA.
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	// requestTimeout bounds each request to the API server and to Prometheus.
	requestTimeout = 30 * time.Second
)

// healthOptions are the flags of the health command.
type healthOptions struct {
	namespace     string
	configMap     string
	run           string
	prometheusURL string
	tokenFile     string
	caFile        string
}

// parseHealthFlags parses the flags of the health command; it prints the usage to stderr on
// -h and on a flag it does not know.
func parseHealthFlags(args []string, stderr io.Writer) (healthOptions, error) {
	var o healthOptions
	fs := flag.NewFlagSet("precache health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.namespace, "namespace", "", "Namespace of the report ConfigMap (required).")
	fs.StringVar(&o.configMap, "configmap", "", "Name of the report ConfigMap (required).")
	fs.StringVar(&o.run, "run", "", "The run the report answers, as the hub names it (required).")
	fs.StringVar(&o.prometheusURL, "prometheus-url", defaultPrometheusURL, "Base URL of the Prometheus API to read alerts from.")
	fs.StringVar(&o.tokenFile, "token-file", filepath.Join(serviceAccountDir, "token"), "File holding the bearer token for Prometheus.")
	fs.StringVar(&o.caFile, "ca-file", filepath.Join(serviceAccountDir, "service-ca.crt"), "PEM file of the CA that signed Prometheus's certificate; the system's CAs when it is missing.")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return o, o.validate()
}

// validate names the required flags that are missing.
func (o healthOptions) validate() error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"--namespace", o.namespace}, {"--configmap", o.configMap}, {"--run", o.run},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required flags: %s", strings.Join(missing, ", "))
	}
	return nil
}

// healthMain runs the health command against the cluster the program runs in and returns
// the exit code: 0 when the report was written, even with inputs that could not be read.
func healthMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseHealthFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "precache health:", err)
		return 1
	}
	c, err := kubeClient()
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "precache health:", err)
		return 1
	}
	report, err := runHealth(ctx, c, newSource(c, o, stderr), o, time.Now())
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "precache health:", err)
		return 1
	}
	for _, e := range report.Errors {
		_, _ = fmt.Fprintln(stderr, "precache health: not read:", e)
	}
	_, _ = fmt.Fprintln(stdout, summary(o, report))
	return 0
}

// runHealth collects the report with src and writes it to the ConfigMap the options name,
// creating it or updating it.
func runHealth(ctx context.Context, c client.Client, src spokehealth.Source, o healthOptions, now time.Time) (spokehealth.Report, error) {
	if err := o.validate(); err != nil {
		return spokehealth.Report{}, err
	}
	report := spokehealth.Collect(ctx, src, o.run, now)
	cm, err := spokehealth.ToConfigMap(o.namespace, o.configMap, report)
	if err != nil {
		return report, err
	}
	if err := writeConfigMap(ctx, c, cm); err != nil {
		return report, fmt.Errorf("writing ConfigMap %s/%s: %w", o.namespace, o.configMap, err)
	}
	return report, nil
}

// writeConfigMap creates want, or, when it exists, replaces its data with want's.
func writeConfigMap(ctx context.Context, c client.Client, want *corev1.ConfigMap) error {
	err := c.Create(ctx, want.DeepCopy())
	if err == nil || !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		got := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			return err
		}
		got.Data = want.Data
		return c.Update(ctx, got)
	})
}

// summary is the line the health command prints when it wrote the report.
func summary(o healthOptions, r spokehealth.Report) string {
	return fmt.Sprintf("Wrote ConfigMap %s/%s for run %s: cluster operators: %s, alerts: %s, ClusterVersion conditions: %s, errors: %d",
		o.namespace, o.configMap, r.Run, count(r.ClusterOperators), count(r.Alerts), count(r.ClusterVersionConditions), len(r.Errors))
}

// count is the length of an input, or "not read" when it is nil.
func count[T any](s []T) string {
	if s == nil {
		return "not read"
	}
	return fmt.Sprint(len(s))
}

// kubeClient is a client of the cluster the program runs in (or of KUBECONFIG).
func kubeClient() (client.Client, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the cluster's client configuration: %w", err)
	}
	cfg.Timeout = requestTimeout
	c, err := client.New(cfg, client.Options{Scheme: spokehealth.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("creating the cluster's client: %w", err)
	}
	return c, nil
}

// newSource reads the cluster through c and its alerts from the Prometheus of the options.
// When the Prometheus token cannot be read, the alerts count as not read, for that reason.
func newSource(c client.Reader, o healthOptions, stderr io.Writer) spokehealth.Source {
	p, err := prometheusFor(o, stderr)
	src := spokehealth.KubeSource{Client: c, Prometheus: p}
	if err != nil {
		return unreadAlerts{Source: src, err: err}
	}
	return src
}

// unreadAlerts is a Source whose alerts cannot be read, for err.
type unreadAlerts struct {
	spokehealth.Source
	err error
}

func (u unreadAlerts) Alerts(context.Context) ([]spokehealth.Alert, error) {
	return nil, u.err
}

// prometheusFor is the Prometheus of the options, with the token of the token file and
// trusting the CA of the CA file.
func prometheusFor(o healthOptions, stderr io.Writer) (*spokehealth.Prometheus, error) {
	token, err := os.ReadFile(filepath.Clean(o.tokenFile))
	if err != nil {
		return nil, fmt.Errorf("reading the Prometheus token: %w", err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: caPool(o.caFile, stderr)}
	return &spokehealth.Prometheus{
		URL:   o.prometheusURL,
		Token: strings.TrimSpace(string(token)),
		HTTP:  &http.Client{Timeout: requestTimeout, Transport: transport},
	}, nil
}

// caPool is a pool of the certificates of the PEM file, or nil, which means the system's
// pool, when the file cannot be read or holds no certificate; it then says so on stderr.
func caPool(file string, stderr io.Writer) *x509.CertPool {
	pem, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "precache health: using the system's certificate authorities: %v\n", err)
		return nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		_, _ = fmt.Fprintf(stderr, "precache health: using the system's certificate authorities: %s holds no PEM certificate\n", file)
		return nil
	}
	return pool
}
