package operator

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func parse(args ...string) (Options, error) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.Validate()
}

func TestDefaults(t *testing.T) {
	o, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if !o.LeaderElect || !o.SecureMetrics || o.MetricsAddr != ":8443" || o.ProbeAddr != ":8081" {
		t.Errorf("production defaults changed: %+v", o)
	}
	if o.QPS != 50 || o.Burst != 100 || o.Workers != 4 || o.GracefulShutdown != 30*time.Second ||
		o.UpdateService != "https://api.openshift.com/api/upgrades_info/v1/graph" {
		t.Errorf("client and worker defaults changed: %+v", o)
	}
	if o.DefaultEnforcement != EnforcementAuto {
		t.Errorf("default enforcement %q, want auto (Override where the hub has binding overrides)", o.DefaultEnforcement)
	}
	if !o.ZTP || o.ZTPSettle != time.Minute {
		t.Errorf("ZTP defaults changed: ztp %v, ztp-settle %s; want on (TALM always runs it) after 1m", o.ZTP, o.ZTPSettle)
	}
}

func TestFlags(t *testing.T) {
	o, err := parse("--leader-elect=false", "--metrics-secure=false", "--metrics-bind-address=0",
		"--kube-api-qps=12.5", "--kube-api-burst=30", "--workers=8", "--graceful-shutdown-timeout=5s", "--max-clusters-in-progress=200",
		"--leader-election-namespace=cgu", "--update-service=http://osus.hub.example.com/api/upgrades_info/v1/graph",
		"--spoke-image=registry.example.com/spoke:1", "--max-concurrent-precaching=20", "--precache-timeout=90m",
		"--ztp=false", "--ztp-settle=15s", "--default-enforcement=Copy")
	if err != nil {
		t.Fatal(err)
	}
	want := Options{MetricsAddr: "0", ProbeAddr: ":8081", LeaderElectionNamespace: "cgu",
		QPS: 12.5, Burst: 30, Workers: 8, GracefulShutdown: 5 * time.Second, MaxClustersInProgress: 200,
		UpdateService: "http://osus.hub.example.com/api/upgrades_info/v1/graph", SpokeImage: "registry.example.com/spoke:1",
		MaxConcurrentPrecaching: 20, PrecacheTimeout: 90 * time.Minute, ZTPSettle: 15 * time.Second,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second, DefaultEnforcement: "Copy"}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("got %+v, want %+v", o, want)
	}
}

func TestInvalidOptions(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"zero qps":              {[]string{"--kube-api-qps=0"}, "must be a positive number"},
		"qps not a number":      {[]string{"--kube-api-qps=fast"}, "must be a positive number"},
		"zero burst":            {[]string{"--kube-api-burst=0"}, "kube-api-burst must be at least 1"},
		"no workers":            {[]string{"--workers=0"}, "workers must be at least 1"},
		"negative shutdown":     {[]string{"--graceful-shutdown-timeout=-1s"}, "must not be negative"},
		"negative cap":          {[]string{"--max-clusters-in-progress=-1"}, "max-clusters-in-progress must not be negative, got -1"},
		"no spoke image":        {[]string{"--spoke-image="}, "spoke-image must not be empty"},
		"zero precache timeout": {[]string{"--precache-timeout=0s"}, "precache-timeout must be positive"},
		"negative precache cap": {[]string{"--max-concurrent-precaching=-1"}, "max-concurrent-precaching must not be negative"},
		"negative ztp settle":   {[]string{"--ztp-settle=-1s"}, "ztp-settle must not be negative, got -1s"},
		"unknown enforcement":   {[]string{"--default-enforcement=copy"}, `default-enforcement must be auto, Copy or Override, got "copy"`},
		"ztp not a boolean":     {[]string{"--ztp=maybe"}, "invalid boolean value"},
		"update service":        {[]string{"--update-service=osus.example.com"}, `update-service must be an http or https URL, got "osus.example.com"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parse(tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLeaderElectionTiming(t *testing.T) {
	cases := map[string]struct {
		lease, renew, retry time.Duration
		valid               bool
	}{
		"defaults":             {15 * time.Second, 10 * time.Second, 2 * time.Second, true},
		"shortened":            {3 * time.Second, 2 * time.Second, 500 * time.Millisecond, true},
		"unset":                {0, 0, 0, true},
		"renew past the lease": {2 * time.Second, 3 * time.Second, time.Second, false},
		"retry past renewing":  {3 * time.Second, time.Second, 2 * time.Second, false},
		"negative":             {-time.Second, 0, 0, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = tc.lease, tc.renew, tc.retry
			if err := o.Validate(); (err == nil) != tc.valid {
				t.Errorf("Validate() = %v, want valid %v", err, tc.valid)
			}
		})
	}
}

func TestLeaderElectionFlags(t *testing.T) {
	o, err := parse("--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms")
	if err != nil {
		t.Fatal(err)
	}
	if o.LeaseDuration != 3*time.Second || o.RenewDeadline != 2*time.Second || o.RetryPeriod != 500*time.Millisecond {
		t.Errorf("lease %s, renew %s, retry %s", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	}
	if _, err := parse("--leader-elect-lease-duration=1s", "--leader-elect-renew-deadline=2s"); err == nil {
		t.Error("a renew deadline past the lease was accepted")
	}
}
