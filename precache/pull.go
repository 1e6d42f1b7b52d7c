package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
)

const (
	// defaultAuthfile is the node's pull secret, which the kubelet pulls with.
	defaultAuthfile = "/var/lib/kubelet/config.json"
	// defaultTerminationLog is where Kubernetes reads a container's termination message.
	defaultTerminationLog = "/dev/termination-log"
	// ociStorePrefix starts the --store value of an OCI layout store.
	ociStorePrefix = "oci:"
)

// pullOptions are the flags of the pull command.
type pullOptions struct {
	spec            string
	run             string
	store           string
	authfile        string
	podman          string
	parallel        int
	gcThreshold     int
	reportNamespace string
	reportConfigMap string
	terminationLog  string
}

// parsePullFlags parses the flags of the pull command; it prints the usage to stderr on -h
// and on a flag it does not know.
func parsePullFlags(args []string, stderr io.Writer) (pullOptions, error) {
	var o pullOptions
	fs := flag.NewFlagSet("precache pull", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.spec, "spec", "", "The precaching spec (required): a JSON file, or the directory TALM's spec ConfigMap is mounted at (a file per key).")
	fs.StringVar(&o.run, "run", "", "The run the summary answers, as the hub names it (required).")
	fs.StringVar(&o.store, "store", "", `Where to pull: "podman" (the node's containers storage) or "oci:DIR" (an OCI layout directory) (required).`)
	fs.StringVar(&o.authfile, "authfile", defaultAuthfile, "Auth file (docker config format) to pull with; empty for anonymous pulls.")
	fs.StringVar(&o.podman, "podman", "podman", "The podman executable, for --store podman.")
	fs.IntVar(&o.parallel, "parallel", pull.DefaultParallel, "Images pulled at once.")
	fs.IntVar(&o.gcThreshold, "gc-threshold", pull.DefaultGCThresholdPercent, "The kubelet's image GC high threshold, in percent: the pull must not fill the store past it; 0 turns the check off.")
	fs.StringVar(&o.reportNamespace, "report-namespace", "", "Namespace of the report ConfigMap; with --report-configmap.")
	fs.StringVar(&o.reportConfigMap, "report-configmap", "", "Name of the report ConfigMap; with --report-namespace.")
	fs.StringVar(&o.terminationLog, "termination-log", defaultTerminationLog, "File the final summary is written to, as the container's termination message.")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return o, o.validate()
}

// validate names the required flags that are missing and the values that cannot work.
func (o pullOptions) validate() error {
	var missing []string
	for _, f := range []struct{ name, value string }{{"--spec", o.spec}, {"--run", o.run}, {"--store", o.store}} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing required flags: %s", strings.Join(missing, ", "))
	}
	if o.store != "podman" && (!strings.HasPrefix(o.store, ociStorePrefix) || o.store == ociStorePrefix) {
		return fmt.Errorf(`--store %q: want "podman" or "oci:DIR"`, o.store)
	}
	if (o.reportNamespace == "") != (o.reportConfigMap == "") {
		return errors.New("--report-namespace and --report-configmap go together")
	}
	if o.parallel < 1 {
		return fmt.Errorf("--parallel %d: want at least 1", o.parallel)
	}
	if o.gcThreshold < 0 || o.gcThreshold > 100 {
		return fmt.Errorf("--gc-threshold %d: want a percentage", o.gcThreshold)
	}
	return nil
}

// reporting tells whether the options name a report ConfigMap.
func (o pullOptions) reporting() bool {
	return o.reportConfigMap != ""
}

// pullEnv is what the pull command works with: the cluster (nil when it does not report),
// where images come from and go to, and the pull options the flags do not set.
type pullEnv struct {
	client  client.Client
	source  pull.Source
	store   pull.Store
	options pull.Options
}

// pullMain runs the pull command on the node and returns the exit code: precache.ExitOK,
// ExitRetryable or ExitUnrecoverable.
func pullMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parsePullFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return precache.ExitOK
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "precache pull:", err)
		return precache.ExitUnrecoverable
	}
	env, err := newPullEnv(o)
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "precache pull:", err)
		return precache.ExitUnrecoverable
	}
	return runPull(ctx, env, o, stdout, stderr)
}

// newPullEnv is the environment of the options: the in-cluster client when reporting, the
// registries with the auth file's credentials, the store of --store.
func newPullEnv(o pullOptions) (pullEnv, error) {
	var env pullEnv
	src := pull.Remote{}
	if o.authfile != "" {
		keychain, err := pull.AuthfileKeychain(o.authfile)
		if err != nil {
			return env, err
		}
		src.Keychain = keychain
	}
	env.source = src
	store, err := storeFor(o)
	if err != nil {
		return env, err
	}
	env.store = store
	if o.reporting() {
		if env.client, err = kubeClient(); err != nil {
			return env, err
		}
	}
	return env, nil
}

// storeFor is the store --store names, which validate checked.
func storeFor(o pullOptions) (pull.Store, error) {
	if o.store == "podman" {
		return pull.Podman{Binary: o.podman, Authfile: o.authfile}, nil
	}
	return pull.NewOCILayout(strings.TrimPrefix(o.store, ociStorePrefix))
}

// runPull resolves the spec, pulls, reports and returns the exit code of the final summary.
// It prints one line: the counts to stdout on success, the error to stderr on failure.
func runPull(ctx context.Context, env pullEnv, o pullOptions, stdout, stderr io.Writer) int {
	if err := o.validate(); err != nil {
		_, _ = fmt.Fprintln(stderr, "precache pull:", err)
		return precache.ExitUnrecoverable
	}
	r := reporter{client: env.client, command: "precache pull", namespace: o.reportNamespace, name: o.reportConfigMap,
		terminationLog: o.terminationLog, stderr: stderr}
	s := precachePull(ctx, env, o, func(s precache.Summary) { r.write(ctx, s) })
	r.final(ctx, s)
	if s.Phase == precache.PhaseSucceeded {
		_, _ = fmt.Fprintf(stdout, "Run %s: %d images on the node: %d present, %d pulled (%s), %d excluded\n",
			s.Run, s.Images, s.Present, s.Pulled, pull.FormatBytes(s.Bytes), s.Excluded)
	} else {
		_, _ = fmt.Fprintf(stderr, "precache pull: run %s failed (%s): %s\n", s.Run, retryability(s), s.Error)
	}
	return pull.ExitCode(s)
}

// precachePull reads the spec and runs it (pull.Run).
func precachePull(ctx context.Context, env pullEnv, o pullOptions, report func(precache.Summary)) precache.Summary {
	spec, err := readSpec(o.spec)
	if err != nil {
		s := precache.Summary{Run: o.run, Phase: precache.PhaseResolving}
		report(s)
		return pull.Failure(s, err)
	}
	opts := env.options
	opts.Run, opts.Source, opts.Parallel, opts.GCThresholdPercent = o.run, env.source, o.parallel, o.gcThreshold
	return pull.Run(ctx, spec, env.store, opts, report)
}

// readSpec reads the precaching spec from its JSON file.
func readSpec(file string) (ranv1alpha1.PrecachingSpec, error) {
	var spec ranv1alpha1.PrecachingSpec
	if info, err := os.Stat(file); err == nil && info.IsDir() {
		return readSpecDir(file)
	}
	data, err := os.ReadFile(filepath.Clean(file))
	if err != nil {
		return spec, fmt.Errorf("reading the spec: %w", err)
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		return spec, fmt.Errorf("decoding the spec %s: %w", file, err)
	}
	return spec, nil
}

// readSpecDir reads a spec from the directory TALM's spec ConfigMap is mounted at: a file
// for each of its keys; a missing key is empty.
func readSpecDir(dir string) (ranv1alpha1.PrecachingSpec, error) {
	data := map[string]string{}
	for _, key := range []string{precache.KeyPlatformImage, precache.KeyIndexes, precache.KeyPackages,
		precache.KeyExcludePatterns, precache.KeyAdditionalImages, precache.KeySpaceRequired} {
		raw, err := os.ReadFile(filepath.Join(dir, key))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return ranv1alpha1.PrecachingSpec{}, fmt.Errorf("reading the spec: %w", err)
		}
		data[key] = string(raw)
	}
	return precache.SpecFromData(data), nil
}

// retryability says in words whether a failed run may succeed when run again.
func retryability(s precache.Summary) string {
	if s.Retryable {
		return "retryable"
	}
	return "unrecoverable"
}

// reporter writes a command's summaries to its report ConfigMap, when it has one, and its
// final summary to the termination log.
type reporter struct {
	client client.Client
	// command names the command in error messages.
	command                         string
	namespace, name, terminationLog string
	stderr                          io.Writer
}

// final writes the final summary to the ConfigMap and the termination log. Failing to write
// the termination log is ignored: the file only exists in a container.
func (r reporter) final(ctx context.Context, s any) {
	r.write(context.WithoutCancel(ctx), s)
	if data, err := json.Marshal(s); err == nil && r.terminationLog != "" {
		_ = os.WriteFile(filepath.Clean(r.terminationLog), data, 0o600) //nolint:gosec // G703: the path is the program's own --termination-log flag, which the Job's spec sets.
	}
}

// write writes s to the report ConfigMap, when there is one. A failure is said on stderr and
// the run goes on: the termination message carries the final summary too.
func (r reporter) write(ctx context.Context, s any) {
	if r.name == "" || r.client == nil {
		return
	}
	cm, err := summaryConfigMap(r.namespace, r.name, s)
	if err == nil {
		err = writeConfigMap(ctx, r.client, cm)
	}
	if err != nil {
		_, _ = fmt.Fprintf(r.stderr, "%s: writing ConfigMap %s/%s: %v\n", r.command, r.namespace, r.name, err)
	}
}

// summaryConfigMap is the report ConfigMap holding s as JSON under precache.SummaryKey.
func summaryConfigMap(namespace, name string, s any) (*corev1.ConfigMap, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the summary: %w", err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string]string{precache.SummaryKey: string(data)},
	}, nil
}
