// Command manager runs cgu-operator on an Open Cluster Management hub.
package main

import (
	"flag"
	"fmt"
	"os"
	_ "time/tzdata" // maintenance windows name IANA time zones; the image has no zoneinfo

	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
)

func main() {
	opts := operator.DefaultOptions()
	opts.BindFlags(flag.CommandLine)
	zapOpts := zap.Options{Development: false}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	logger := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go (leader election, caches) logs through the same sink

	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "cgu-operator:", err)
		os.Exit(1)
	}
}

func run(opts operator.Options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	mgr, err := operator.New(cfg, opts)
	if err != nil {
		return err
	}
	ctrl.Log.Info("Starting manager", "leaderElection", opts.LeaderElect, "workers", opts.Workers)
	return mgr.Start(ctrl.SetupSignalHandler())
}
