// Package operator builds and runs the cgu-operator manager. The production binary
// (cmd/manager), the demo and the tests start the operator through the same New function.
package operator

import (
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/clock"

	"github.com/cgu-operator/cgu-operator/pkg/tenancy"
	"github.com/cgu-operator/cgu-operator/pkg/updateservice"
	"github.com/cgu-operator/cgu-operator/pkg/ztp"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Options configure the manager. Defaults are those of the production deployment.
type Options struct {
	// MetricsAddr is where the metrics endpoint listens; "0" turns it off.
	MetricsAddr string
	// SecureMetrics serves metrics over HTTPS, with authentication and authorization of
	// each scrape through TokenReview and SubjectAccessReview.
	SecureMetrics bool
	// ProbeAddr is where /healthz and /readyz listen; "0" turns them off.
	ProbeAddr string
	// LeaderElect makes one replica at a time active.
	LeaderElect bool
	// LeaderElectionNamespace holds the leader lease; empty means the namespace the
	// manager runs in.
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod time the leader election: how long a
	// lease holds without renewal, how long the leader keeps trying to renew before it
	// gives up leading, and how often candidates try. The defaults are controller-runtime's;
	// zero means controller-runtime's default. A shorter lease hands over sooner after a
	// crash, at the cost of more lease writes.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// QPS and Burst bound the client's request rate to the kube-apiserver.
	QPS   float32
	Burst int
	// Workers is the number of ClusterGroupUpgrades reconciled at once.
	Workers int
	// MaxClustersInProgress caps the clusters under remediation across every
	// ClusterGroupUpgrade of the hub; zero means no cap.
	MaxClustersInProgress int
	// UpdateService is the graph API of the update service that y-stream upgrade checks
	// read when neither the ClusterGroupUpgrade nor the cluster's spec.upstream names one.
	UpdateService string
	// MaxConcurrentPrecaching caps the clusters pre-caching at once across every
	// ClusterGroupUpgrade of the hub; zero means no cap.
	MaxConcurrentPrecaching int
	// PrecacheTimeout bounds each cluster's precache Job; past it the cluster's pre-caching
	// times out.
	PrecacheTimeout time.Duration
	// SpokeImage is the image of the spoke program (precache/), which the health checks
	// and the precache Jobs run on managed clusters.
	SpokeImage string
	// GracefulShutdown bounds how long the manager waits for running work on stop.
	GracefulShutdown time.Duration
	// ZTP runs the ZTP controller: a ManagedCluster that becomes Available without the
	// ztp-done label gets a ClusterGroupUpgrade through its wave policies (docs/ztp.md).
	ZTP bool
	// ZTPSettle is how long a cluster must have been Available before the ZTP controller
	// reads its policies, so that the propagator has replicated them all.
	ZTPSettle time.Duration
	// PolicyNamespaces restricts the namespaces whose managed policies a ClusterGroupUpgrade
	// may enforce, ZTP's included; empty (the default) allows every namespace, as TALM
	// does, where ZTP keeps ClusterGroupUpgrades and policies in different namespaces.
	PolicyNamespaces []string
	// DefaultEnforcement is how a ClusterGroupUpgrade without spec.enforcement enforces
	// its policies: EnforcementAuto (the default) picks Override when the hub's
	// PlacementBinding API has binding overrides (ACM 2.9 and later, as TALM 4.16 and later
	// use them), Copy otherwise; Copy or Override forces one.
	DefaultEnforcement string
	// Tenancy turns on tenancy mode (docs/reliability.md): a ClusterGroupUpgrade selects
	// only clusters of the ManagedClusterSets bound to its namespace, enforces only its
	// namespace's policies, and writes only label and annotation keys starting with
	// TenancyLabelPrefix (none when it is empty); the operator binds no cluster set for it.
	// Off by default, as TALM has no such mode.
	Tenancy            bool
	TenancyLabelPrefix string
	// TenancyExemptNamespaces are namespaces whose ClusterGroupUpgrades act as with tenancy
	// off (the platform team's); the ZTP controller's namespace is exempt when ZTP runs.
	TenancyExemptNamespaces []string
	// AlertmanagerURL is the Alertmanager v2 API on which rollouts with spec.silenceAlerts
	// silence their upgrading clusters' alerts (the hub's, as ACM Observability runs it);
	// empty: none, and such rollouts are refused. AlertmanagerSecret names a Secret
	// ("namespace/name") with `token` and `ca.crt`, either or both; TLS is always verified.
	AlertmanagerURL, AlertmanagerSecret string
	// Clock tells the controllers the time; nil is the real clock. Tests and the demo
	// inject theirs; there is no flag.
	Clock clock.PassiveClock
	// SkipNameValidation lets one process build more than one manager (controller-runtime
	// refuses two controllers of the same name in a process, for their metrics); only the
	// tests of the demo do. There is no flag.
	SkipNameValidation bool
}

// DefaultSpokeImage is the spoke program's image of this release (Dockerfile.precache).
const DefaultSpokeImage = "quay.io/cgu-operator/cgu-operator-precache:latest"

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		MetricsAddr:             ":8443",
		SecureMetrics:           true,
		ProbeAddr:               ":8081",
		LeaderElect:             true,
		LeaseDuration:           15 * time.Second,
		RenewDeadline:           10 * time.Second,
		RetryPeriod:             2 * time.Second,
		QPS:                     50,
		Burst:                   100,
		Workers:                 4,
		UpdateService:           updateservice.DefaultURL,
		SpokeImage:              DefaultSpokeImage,
		MaxConcurrentPrecaching: 100,
		PrecacheTimeout:         2 * time.Hour,
		GracefulShutdown:        30 * time.Second,
		ZTP:                     true,
		ZTPSettle:               time.Minute,
		DefaultEnforcement:      EnforcementAuto,
	}
}

// BindFlags registers a flag for each option on fs, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr,
		`Address the metrics endpoint binds to; "0" disables it.`)
	fs.BoolVar(&o.SecureMetrics, "metrics-secure", o.SecureMetrics,
		"Serve metrics over HTTPS with authentication and authorization; false serves plain HTTP.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", o.ProbeAddr,
		`Address the /healthz and /readyz endpoints bind to; "0" disables them.`)
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"Elect a leader so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"Namespace of the leader election lease; empty means the namespace the manager runs in.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration,
		"How long the leader lease holds without renewal: a crashed leader is replaced after about this long.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline,
		"How long the leader keeps trying to renew its lease before it stops leading.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod,
		"How often candidates try to take the lease, and the leader to renew it.")
	qps := float64(o.QPS)
	fs.Func("kube-api-qps", fmt.Sprintf("Sustained requests per second to the kube-apiserver (default %g).", qps),
		func(s string) error {
			var v float64
			if _, err := fmt.Sscanf(s, "%g", &v); err != nil || v <= 0 {
				return fmt.Errorf("must be a positive number, got %q", s)
			}
			o.QPS = float32(v)
			return nil
		})
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Requests allowed in a burst above kube-api-qps.")
	fs.IntVar(&o.Workers, "workers", o.Workers, "ClusterGroupUpgrades reconciled at once.")
	fs.IntVar(&o.MaxClustersInProgress, "max-clusters-in-progress", o.MaxClustersInProgress,
		"Clusters under remediation at once across every ClusterGroupUpgrade of the hub; 0 means no cap.")
	fs.StringVar(&o.UpdateService, "update-service", o.UpdateService,
		"Graph API of the update service for y-stream upgrade checks, when neither the ClusterGroupUpgrade nor the cluster's ClusterVersion spec.upstream names one.")
	fs.IntVar(&o.MaxConcurrentPrecaching, "max-concurrent-precaching", o.MaxConcurrentPrecaching,
		"Clusters pre-caching at once across every ClusterGroupUpgrade of the hub; 0 means no cap.")
	fs.DurationVar(&o.PrecacheTimeout, "precache-timeout", o.PrecacheTimeout,
		"How long each cluster's precache Job may run before its pre-caching times out.")
	fs.StringVar(&o.SpokeImage, "spoke-image", o.SpokeImage,
		"Image of the spoke program that health check and precache Jobs run on managed clusters.")
	fs.DurationVar(&o.GracefulShutdown, "graceful-shutdown-timeout", o.GracefulShutdown,
		"How long to wait for running work when stopping.")
	fs.StringVar(&o.AlertmanagerURL, "alertmanager-url", o.AlertmanagerURL,
		"Alertmanager on which ClusterGroupUpgrades with spec.silenceAlerts silence their upgrading clusters' alerts; empty: none.")
	fs.StringVar(&o.AlertmanagerSecret, "alertmanager-secret", o.AlertmanagerSecret,
		"namespace/name of a Secret with the Alertmanager's token and ca.crt, either or both.")
	fs.BoolVar(&o.ZTP, "ztp", o.ZTP,
		"Run the ZTP controller: clusters that become Available without the ztp-done label go through their ztp-deploy-wave policies.")
	fs.DurationVar(&o.ZTPSettle, "ztp-settle", o.ZTPSettle,
		"How long a cluster must have been Available before the ZTP controller reads its policies.")
	fs.StringVar(&o.DefaultEnforcement, "default-enforcement", o.DefaultEnforcement,
		"How a ClusterGroupUpgrade without spec.enforcement enforces its policies: auto (Override when the hub's PlacementBinding has binding overrides, else Copy), Copy or Override.")
	fs.BoolVar(&o.Tenancy, "tenancy", o.Tenancy,
		"Tenancy mode: a ClusterGroupUpgrade selects only clusters of the ManagedClusterSets bound to its namespace, enforces only its namespace's policies, and labels only under --tenancy-label-prefix.")
	fs.StringVar(&o.TenancyLabelPrefix, "tenancy-label-prefix", o.TenancyLabelPrefix,
		"In tenancy mode, the prefix of every label and annotation key a ClusterGroupUpgrade's cluster actions may write or remove; empty allows none.")
	fs.Func("tenancy-exempt-namespaces",
		"Comma-separated namespaces whose ClusterGroupUpgrades act as with tenancy off (the ZTP controller's is exempt when it runs). May be repeated.",
		func(s string) error {
			o.TenancyExemptNamespaces = appendNamespaces(o.TenancyExemptNamespaces, s)
			return nil
		})
	fs.Func("policy-namespaces",
		"Comma-separated namespaces whose managed policies a ClusterGroupUpgrade may enforce; empty allows every namespace. May be repeated.",
		func(s string) error {
			o.PolicyNamespaces = appendNamespaces(o.PolicyNamespaces, s)
			return nil
		})
}

// appendNamespaces adds the namespaces of a comma-separated list not in list yet.
func appendNamespaces(list []string, s string) []string {
	for ns := range strings.SplitSeq(s, ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(list, ns) {
			list = append(list, ns)
		}
	}
	return list
}

// TenancyRules are the tenancy rules the options ask for.
func (o Options) TenancyRules() tenancy.Rules {
	exempt := slices.Clone(o.TenancyExemptNamespaces)
	if o.ZTP && !slices.Contains(exempt, ztp.Namespace) {
		exempt = append(exempt, ztp.Namespace)
	}
	return tenancy.Rules{On: o.Tenancy, LabelPrefix: o.TenancyLabelPrefix, Exempt: exempt}
}

// EnforcementAuto lets the operator pick the default enforcement from the hub's API.
const EnforcementAuto = "auto"

// Validate reports options that cannot work.
func (o Options) Validate() error {
	if err := o.validateLease(); err != nil {
		return err
	}
	switch {
	case o.QPS <= 0:
		return fmt.Errorf("kube-api-qps must be positive, got %g", o.QPS)
	case o.Burst < 1:
		return fmt.Errorf("kube-api-burst must be at least 1, got %d", o.Burst)
	case o.Workers < 1:
		return fmt.Errorf("workers must be at least 1, got %d", o.Workers)
	case o.MaxClustersInProgress < 0:
		return fmt.Errorf("max-clusters-in-progress must not be negative, got %d", o.MaxClustersInProgress)
	case !validURL(o.UpdateService):
		return fmt.Errorf("update-service must be an http or https URL, got %q", o.UpdateService)
	case o.MaxConcurrentPrecaching < 0:
		return fmt.Errorf("max-concurrent-precaching must not be negative, got %d", o.MaxConcurrentPrecaching)
	case o.PrecacheTimeout <= 0:
		return fmt.Errorf("precache-timeout must be positive, got %s", o.PrecacheTimeout)
	case o.SpokeImage == "":
		return fmt.Errorf("spoke-image must not be empty")
	case o.GracefulShutdown < 0:
		return fmt.Errorf("graceful-shutdown-timeout must not be negative, got %s", o.GracefulShutdown)
	case o.ZTPSettle < 0:
		return fmt.Errorf("ztp-settle must not be negative, got %s", o.ZTPSettle)
	case !slices.Contains([]string{"", EnforcementAuto, string(ranv1alpha1.EnforcementCopy), string(ranv1alpha1.EnforcementOverride)}, o.DefaultEnforcement):
		return fmt.Errorf("default-enforcement must be auto, Copy or Override, got %q", o.DefaultEnforcement)
	}
	if err := validateNamespaces("policy-namespaces", o.PolicyNamespaces); err != nil {
		return err
	}
	if err := o.validateAlertmanager(); err != nil {
		return err
	}
	return o.validateTenancy()
}

// validateAlertmanager refuses an Alertmanager URL that is not http(s), and a Secret that is
// not namespace/name.
func (o Options) validateAlertmanager() error {
	if o.AlertmanagerURL != "" && !validURL(o.AlertmanagerURL) {
		return fmt.Errorf("alertmanager-url must be an http or https URL, got %q", o.AlertmanagerURL)
	}
	if ns, name, ok := strings.Cut(o.AlertmanagerSecret, "/"); o.AlertmanagerSecret != "" && (!ok || ns == "" || name == "" || strings.Contains(name, "/")) {
		return fmt.Errorf("alertmanager-secret must be namespace/name, got %q", o.AlertmanagerSecret)
	}
	return nil
}

// validateTenancy refuses a label prefix no key can start with, and exempt entries that
// cannot name a namespace.
func (o Options) validateTenancy() error {
	if p := o.TenancyLabelPrefix; p != "" && len(validation.IsQualifiedName(p+"x")) > 0 {
		return fmt.Errorf("tenancy-label-prefix: %q does not begin a label key (as %q or %q)", p, "example.com/", "team-a-")
	}
	return validateNamespaces("tenancy-exempt-namespaces", o.TenancyExemptNamespaces)
}

// validateNamespaces refuses an entry of a namespace list that cannot name a namespace.
func validateNamespaces(flag string, list []string) error {
	for _, n := range list {
		if len(validation.IsDNS1123Label(n)) > 0 {
			return fmt.Errorf("%s: %q is not a namespace name", flag, n)
		}
	}
	return nil
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validateLease checks the leader election timings: none negative, and when all are set,
// retry period < renew deadline < lease duration.
func (o Options) validateLease() error {
	set := o.RetryPeriod > 0 && o.RenewDeadline > 0 && o.LeaseDuration > 0
	if o.RetryPeriod < 0 || o.RenewDeadline < 0 || o.LeaseDuration < 0 ||
		set && (o.RenewDeadline <= o.RetryPeriod || o.LeaseDuration <= o.RenewDeadline) {
		return fmt.Errorf("leader election needs 0 < retry period (%s) < renew deadline (%s) < lease duration (%s)",
			o.RetryPeriod, o.RenewDeadline, o.LeaseDuration)
	}
	return nil
}
