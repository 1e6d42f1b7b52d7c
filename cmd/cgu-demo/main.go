// Command cgu-demo shows cgu-operator at work with no cluster at hand: it starts an embedded
// hub (a real kube-apiserver and etcd with the real policy propagator and placement
// controller), a fleet of simulated single-node OpenShift spokes, and the operator itself,
// applies the demo manifests of samples/demo, shows the plan, enables the rollout and draws
// its progress until it ends. `make demo` runs it; `make demo KIND=train` runs a release
// train across a global hub and two regional hubs instead (train.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cli"
)

// options are the demo's knobs, each a flag and a make variable.
type options struct {
	clusters        int
	maxConcurrency  int
	upgradeDuration time.Duration
	stall           string
	timeout         int
	keep            bool
	samples         string
	plain           bool
	// kind is what the demo runs: a ClusterGroupUpgrade (cgu), an ImageBasedGroupUpgrade
	// (ibgu), a ManagedClustersUpgrade (mcu) or a ReleaseTrain across hubs (train).
	kind string
	// fail is a cluster whose Prep fails (ibgu).
	fail string
	// mode is spec.remediationStrategy.mode: Batches (TALM's), Window or Progressive; empty
	// keeps the sample's.
	mode string
	// dashboardPort is where kubectl cgu's dashboard of the demo is served: 0 picks a free
	// port, a negative one serves none.
	dashboardPort int
	// allClusters lists every cluster of each batch in the plan and the summary; without
	// it a batch of more than listBound clusters is abbreviated to its runs of names.
	allClusters bool
}

// The demo's kinds, and their manifests.
const (
	kindCGU     = "cgu"
	kindIBGU    = "ibgu"
	kindMCU     = "mcu"
	kindTrain   = "train"
	samplesCGU  = "samples/demo"
	samplesIBGU = "samples/demo-ibgu"
	samplesMCU  = "samples/demo-mcu"
)

func parseFlags(args []string) (options, error) {
	o := options{}
	fs := flag.NewFlagSet("cgu-demo", flag.ContinueOnError)
	fs.IntVar(&o.clusters, "clusters", 12, "Simulated clusters in the fleet (at least 3; sno-01 and sno-02 are the canaries); with --kind=train, on each regional hub (20 unless set).")
	fs.IntVar(&o.maxConcurrency, "max-concurrency", 4, "Clusters per batch after the canaries.")
	fs.DurationVar(&o.upgradeDuration, "upgrade-duration", 8*time.Second, "How long a simulated cluster takes to upgrade.")
	fs.StringVar(&o.stall, "stall", "", `A cluster whose upgrade never finishes (for example sno-05; sno-005 of 100 clusters or more), to show a batch timeout; with --kind=train, how many of hub-west's clusters stall (for example 3), to show the ring's failure budget.`)
	fs.IntVar(&o.timeout, "timeout", 0, "The rollout's timeout in minutes (0 keeps the sample's 6).")
	fs.BoolVar(&o.keep, "keep", false, "Keep the hub running after the rollout and print its KUBECONFIG, until Ctrl-C.")
	fs.StringVar(&o.samples, "samples", "", "Directory of the demo manifests (default "+samplesCGU+", "+samplesIBGU+" with --kind=ibgu, "+samplesMCU+" with --kind=mcu).")
	fs.StringVar(&o.kind, "kind", kindCGU, "What to roll out: cgu (a ClusterGroupUpgrade of an upgrade policy), ibgu (an image-based group upgrade), mcu (a release-named upgrade of a mixed fleet) or train (a release train across a global hub and two regional hubs).")
	fs.StringVar(&o.fail, "fail", "", "With --kind=ibgu, a cluster whose Prep fails (for example sno-05), to show AbortOnFailure.")
	fs.StringVar(&o.mode, "mode", "", "How the clusters after the canaries are remediated: Batches (TALM's, the sample's), Window or Progressive (stages of 1, 2, 4, ...).")
	fs.BoolVar(&o.plain, "plain", false, "Print plain lines even on a terminal.")
	fs.BoolVar(&o.allClusters, "all-clusters", false,
		"List every cluster of each batch in the plan and the summary (a batch of more than 8 is abbreviated to its count and runs of names, sno-003..sno-042, otherwise).")
	fs.IntVar(&o.dashboardPort, "dashboard-port", cli.DefaultDashboardPort,
		"Serve kubectl cgu's dashboard of the demo on this port of 127.0.0.1 (0 picks a free one, -1 serves none).")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.kind == kindTrain && !flagSet(fs, "clusters") {
		o.clusters = trainClusters
	}
	if err := o.check(); err != nil {
		return o, err
	}
	if o.samples == "" {
		o.samples = map[string]string{kindCGU: samplesCGU, kindIBGU: samplesIBGU, kindMCU: samplesMCU}[o.kind]
	}
	o.stall, _ = o.fleetCluster(o.stall)
	o.fail, _ = o.fleetCluster(o.fail)
	return o, nil
}

// flagSet tells whether a flag was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// check refuses options out of range, or that do not go together.
func (o options) check() error {
	switch {
	case o.clusters < 3:
		return fmt.Errorf("--clusters must be at least 3, got %d", o.clusters)
	case o.maxConcurrency < 0:
		return fmt.Errorf("--max-concurrency must not be negative, got %d", o.maxConcurrency)
	case o.upgradeDuration < 0:
		return fmt.Errorf("--upgrade-duration must not be negative, got %s", o.upgradeDuration)
	case o.timeout < 0:
		return fmt.Errorf("--timeout must not be negative, got %d", o.timeout)
	case o.mode != "" && !slices.Contains([]ranv1alpha1.RolloutMode{ranv1alpha1.ModeBatches, ranv1alpha1.ModeWindow, ranv1alpha1.ModeProgressive}, ranv1alpha1.RolloutMode(o.mode)):
		return fmt.Errorf("--mode must be Batches, Window or Progressive, got %q", o.mode)
	case o.dashboardPort > 65535:
		return fmt.Errorf("--dashboard-port must be at most 65535, got %d", o.dashboardPort)
	}
	if o.kind != kindTrain {
		if err := o.checkCluster("--stall", o.stall); err != nil {
			return err
		}
	}
	return o.checkKind()
}

// checkCluster refuses a flag's cluster that is not one of the fleet's.
func (o options) checkCluster(flag, name string) error {
	if _, ok := o.fleetCluster(name); name != "" && !ok {
		return fmt.Errorf("%s %q is not one of %s to %s", flag, name, o.clusterName(1), o.clusterName(o.clusters))
	}
	return nil
}

// checkKind refuses a kind the demo does not run, and options for the other kind.
func (o options) checkKind() error {
	switch o.kind {
	case kindCGU:
		if o.fail != "" {
			return fmt.Errorf("--fail is for --kind=ibgu; a ClusterGroupUpgrade's cluster stalls with --stall")
		}
	case kindIBGU:
		if err := o.checkCluster("--fail", o.fail); err != nil {
			return err
		}
		if o.mode != "" {
			return fmt.Errorf("--mode is for --kind=cgu; an image-based group upgrade's steps run in batches")
		}
	case kindMCU:
		switch {
		case o.fail != "":
			return fmt.Errorf("--fail is for --kind=ibgu; a release-named upgrade's cluster stalls with --stall")
		case o.mode != "":
			return fmt.Errorf("--mode is for --kind=cgu; a release-named upgrade runs in batches")
		}
	case kindTrain:
		return o.checkTrain()
	default:
		return fmt.Errorf("--kind must be cgu, ibgu, mcu or train, got %q", o.kind)
	}
	return nil
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cgu-demo:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, opts, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run plays the demo and returns the exit code: 0 when the rollout completed.
func run(ctx context.Context, opts options, stdout, stderr io.Writer) int {
	out := newTerminal(stdout, stderr, opts.plain)
	out.allClusters = opts.allClusters
	if opts.kind == kindTrain {
		return runTrain(ctx, opts, out)
	}
	d, err := startDemo(ctx, opts, out)
	if d != nil {
		defer d.stop(out)
	}
	if err != nil {
		out.fail("%v", err)
		return 1
	}
	var code int
	switch opts.kind {
	case kindIBGU, kindMCU:
		play := d.playIBGU
		if opts.kind == kindMCU {
			play = d.playMCU
		}
		if code, err = play(ctx); err != nil {
			out.fail("%v", err)
			return 1
		}
	default:
		result, err := d.play(ctx)
		if err != nil {
			out.fail("%v", err)
			return 1
		}
		code = out.summary(result)
	}
	if opts.keep {
		d.keep(ctx, out)
	}
	return code
}
