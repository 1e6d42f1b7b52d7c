package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
	"github.com/cgu-operator/cgu-operator/pkg/spokehealth"
)

// instantClock is the real clock whose After fires at once, so that retries do not wait.
type instantClock struct {
	clock.RealClock
}

func (instantClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

// pullWorld is what one run of the pull command works with: a registry with the fixture's
// images, a spec file, an OCI layout, a fake cluster counting the report's writes.
type pullWorld struct {
	fixture *pulltest.Fixture
	client  client.Client
	writes  int
	dir     string
	store   *pull.OCILayout
}

func newPullWorld(t *testing.T, funcs interceptor.Funcs) *pullWorld {
	t.Helper()
	w := &pullWorld{fixture: pulltest.NewFixture(t), dir: t.TempDir()}
	count := func(ctx context.Context, c client.WithWatch, obj client.Object, create bool) error {
		w.writes++
		if create {
			return c.Create(ctx, obj)
		}
		return c.Update(ctx, obj)
	}
	if funcs.Create == nil {
		funcs.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			return count(ctx, c, obj, true)
		}
	}
	if funcs.Update == nil {
		funcs.Update = func(ctx context.Context, c client.WithWatch, obj client.Object, _ ...client.UpdateOption) error {
			return count(ctx, c, obj, false)
		}
	}
	w.client = fake.NewClientBuilder().WithScheme(spokehealth.Scheme()).WithInterceptorFuncs(funcs).Build()
	store, err := pull.NewOCILayout(filepath.Join(w.dir, "store"))
	if err != nil {
		t.Fatalf("NewOCILayout() error: %v", err)
	}
	w.store = store
	return w
}

// writeSpec writes the spec as the ConfigMap the Job mounts would hold it.
func (w *pullWorld) writeSpec(t *testing.T, spec ranv1alpha1.PrecachingSpec) string {
	t.Helper()
	data, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	return w.writeFile(t, "spec.json", data)
}

func (w *pullWorld) writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	file := filepath.Join(w.dir, name)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func (w *pullWorld) options(spec string) pullOptions {
	return pullOptions{
		spec: spec, run: "run-1", store: "oci:" + w.store.Dir(), parallel: 4, gcThreshold: 0,
		reportNamespace: "cgu-spoke", reportConfigMap: "cgu-precache", terminationLog: filepath.Join(w.dir, "termination-log"),
	}
}

func (w *pullWorld) env() pullEnv {
	return pullEnv{client: w.client, source: pull.Remote{}, store: w.store, options: pull.Options{Clock: instantClock{}}}
}

// run runs the command and returns its exit code and output.
func (w *pullWorld) run(o pullOptions) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = runPull(context.Background(), w.env(), o, &out, &errOut)
	return code, out.String(), errOut.String()
}

// reported is the summary of the report ConfigMap.
func (w *pullWorld) reported(t *testing.T) precache.Summary {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := w.client.Get(context.Background(), client.ObjectKey{Namespace: "cgu-spoke", Name: "cgu-precache"}, cm); err != nil {
		t.Fatalf("reading the report ConfigMap: %v", err)
	}
	return decodeSummary(t, cm.Data[precache.SummaryKey])
}

// terminated is the summary of the termination log.
func (w *pullWorld) terminated(t *testing.T, o pullOptions) precache.Summary {
	t.Helper()
	data, err := os.ReadFile(o.terminationLog)
	if err != nil {
		t.Fatalf("reading the termination log: %v", err)
	}
	return decodeSummary(t, string(data))
}

func decodeSummary(t *testing.T, data string) precache.Summary {
	t.Helper()
	var s precache.Summary
	if err := json.Unmarshal([]byte(data), &s); err != nil {
		t.Fatalf("decoding the summary %q: %v", data, err)
	}
	return s
}

func TestRunPullSucceeds(t *testing.T) {
	w := newPullWorld(t, interceptor.Funcs{})
	o := w.options(w.writeSpec(t, w.fixture.Spec()))
	images := len(w.fixture.Want())

	code, stdout, stderr := w.run(o)
	if code != precache.ExitOK || stderr != "" {
		t.Fatalf("exit code %d, stderr %q; want %d and nothing", code, stderr, precache.ExitOK)
	}
	checkFirstRun(t, w, o, stdout)

	// A second run finds every image on the node.
	o.run = "run-2"
	if code, _, _ := w.run(o); code != precache.ExitOK {
		t.Fatalf("second run: exit code %d, want %d", code, precache.ExitOK)
	}
	if got := w.reported(t); got.Run != "run-2" || got.Present != images || got.Pulled != 0 {
		t.Errorf("second run reported %+v, want run-2 with %d present and none pulled", got, images)
	}
}

// checkFirstRun checks what the first run of the fixture's spec reported and printed.
func checkFirstRun(t *testing.T, w *pullWorld, o pullOptions, stdout string) {
	t.Helper()
	images := len(w.fixture.Want())
	want := precache.Summary{Run: "run-1", Phase: precache.PhaseSucceeded, Images: images, Pulled: images}
	got := w.reported(t)
	if got.Bytes <= 0 || got.Phase != want.Phase || got.Images != images || got.Pulled != images || got.Run != "run-1" {
		t.Errorf("reported %+v, want %+v with some bytes", got, want)
	}
	if term := w.terminated(t, o); !cmp.Equal(term, got) {
		t.Errorf("termination log %+v, want the reported %+v", term, got)
	}
	// Resolving, Pulling, and the end at least.
	if w.writes < 3 {
		t.Errorf("the report was written %d times, want at least 3", w.writes)
	}
	if !strings.HasPrefix(stdout, "Run run-1: 13 images on the node: 0 present, 13 pulled (") || strings.Count(stdout, "\n") != 1 {
		t.Errorf("stdout = %q, want one line of counts", stdout)
	}
}

// checkSucceeded checks the end of an exitCase that succeeds.
func checkSucceeded(t *testing.T, w *pullWorld, tc exitCase, got precache.Summary, stdout, stderr string) {
	t.Helper()
	if got.Phase != precache.PhaseSucceeded || stderr != "" || stdout == "" {
		t.Errorf("reported %+v, stderr %q; want Succeeded", got, stderr)
	}
	if n := w.fixture.Registry.Failed(); tc.registry != nil && n == 0 {
		t.Error("the registry failed no request; the case tests nothing")
	}
}

// exitCase is a spec and a registry, and how the pull command should end with them.
type exitCase struct {
	spec      func(*pulltest.Fixture) []byte
	registry  func(*pulltest.Registry)
	wantCode  int
	wantError string
	wantFail  bool // the summary names a failed image
}

func TestRunPullExitCodes(t *testing.T) {
	cases := map[string]exitCase{
		"an image does not exist": {
			spec: func(f *pulltest.Fixture) []byte {
				s := f.Spec()
				s.AdditionalImages = append(s.AdditionalImages, f.Registry.Ref("extra/tools", "deleted"))
				return marshal(s)
			},
			wantCode: precache.ExitUnrecoverable, wantError: "MANIFEST_UNKNOWN", wantFail: true,
		},
		"a package does not exist": {
			spec: func(f *pulltest.Fixture) []byte {
				s := f.Spec()
				s.OperatorsPackagesAndChannels = append(s.OperatorsPackagesAndChannels, "metallb-operator:stable")
				return marshal(s)
			},
			wantCode: precache.ExitUnrecoverable, wantError: `no index image has the package "metallb-operator"`,
		},
		"too little space": {
			spec: func(f *pulltest.Fixture) []byte {
				s := f.Spec()
				s.SpaceRequired = "1000Pi"
				return marshal(s)
			},
			wantCode: precache.ExitUnrecoverable, wantError: "too little space in the image store: ",
		},
		"the spec does not decode": {
			spec:     func(*pulltest.Fixture) []byte { return []byte(`{"platformImage": 4}`) },
			wantCode: precache.ExitUnrecoverable, wantError: "decoding the spec",
		},
		"the registry fails a few requests": {
			spec:     func(f *pulltest.Fixture) []byte { return marshal(f.Spec()) },
			registry: func(r *pulltest.Registry) { r.FailNext(3) },
			wantCode: precache.ExitOK,
		},
		"the registry is down": {
			spec:     func(f *pulltest.Fixture) []byte { return marshal(f.Spec()) },
			registry: func(r *pulltest.Registry) { r.FailAll(true) },
			wantCode: precache.ExitRetryable, wantError: "503 Service Unavailable",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newPullWorld(t, interceptor.Funcs{})
			o := w.options(w.writeFile(t, "spec.json", tc.spec(w.fixture)))
			if tc.registry != nil {
				tc.registry(w.fixture.Registry)
			}
			code, stdout, stderr := w.run(o)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.wantCode, stderr)
			}
			checkEnd(t, w, o, tc, stdout, stderr)
		})
	}
}

// checkEnd checks the summaries a run of an exitCase left and the line it printed.
func checkEnd(t *testing.T, w *pullWorld, o pullOptions, tc exitCase, stdout, stderr string) {
	t.Helper()
	got := w.reported(t)
	if term := w.terminated(t, o); term.Phase != got.Phase || term.Error != got.Error {
		t.Errorf("termination log %+v, want the reported %+v", term, got)
	}
	if tc.wantCode == precache.ExitOK {
		checkSucceeded(t, w, tc, got, stdout, stderr)
		return
	}
	if got.Phase != precache.PhaseFailed || !strings.Contains(got.Error, tc.wantError) || (len(got.Failed) > 0) != tc.wantFail {
		t.Errorf("reported %+v, want Failed saying %q, naming an image: %t", got, tc.wantError, tc.wantFail)
	}
	if !strings.HasPrefix(stderr, "precache pull: run run-1 failed (") || !strings.Contains(stderr, tc.wantError) || strings.Count(stderr, "\n") != 1 || stdout != "" {
		t.Errorf("stderr %q, stdout %q; want one line on stderr saying %q", stderr, stdout, tc.wantError)
	}
}

func marshal(spec ranv1alpha1.PrecachingSpec) []byte {
	data, err := json.Marshal(spec)
	if err != nil {
		panic(err)
	}
	return data
}

// The spec as TALM's spec ConfigMap mounts it, a file per key, pulls what the JSON spec
// pulls.
func TestRunPullFromTALMSpecDirectory(t *testing.T) {
	w := newPullWorld(t, interceptor.Funcs{})
	dir := filepath.Join(w.dir, "config")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for key, value := range precache.SpecData(w.fixture.Spec()) {
		if err := os.WriteFile(filepath.Join(dir, key), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := w.options(dir)
	code, stdout, stderr := w.run(o)
	if code != precache.ExitOK || stderr != "" {
		t.Fatalf("exit code %d, stderr %q; want %d and nothing", code, stderr, precache.ExitOK)
	}
	checkFirstRun(t, w, o, stdout)
}

func TestRunPullWithoutReport(t *testing.T) {
	w := newPullWorld(t, interceptor.Funcs{})
	o := w.options(w.writeSpec(t, w.fixture.Spec()))
	o.reportNamespace, o.reportConfigMap = "", ""
	env := w.env()
	env.client = nil
	var stdout, stderr bytes.Buffer
	if code := runPull(context.Background(), env, o, &stdout, &stderr); code != precache.ExitOK {
		t.Fatalf("exit code %d (stderr %q), want %d", code, stderr.String(), precache.ExitOK)
	}
	if got := w.terminated(t, o); got.Phase != precache.PhaseSucceeded || got.Pulled != 13 {
		t.Errorf("termination log %+v, want Succeeded with 13 pulled", got)
	}
	if w.writes != 0 {
		t.Errorf("the report was written %d times, want none", w.writes)
	}
}

func TestRunPullReportWriteFails(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cgu-precache", errors.New("no RBAC"))
	w := newPullWorld(t, interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return forbidden },
	})
	o := w.options(w.writeSpec(t, w.fixture.Spec()))
	o.terminationLog = filepath.Join(w.dir, "no-such-dir", "termination-log")
	code, stdout, stderr := w.run(o)
	if code != precache.ExitOK || stdout == "" {
		t.Errorf("exit code %d, stdout %q; want %d: the images are on the node", code, stdout, precache.ExitOK)
	}
	if !strings.Contains(stderr, "precache pull: writing ConfigMap cgu-spoke/cgu-precache: ") || !strings.Contains(stderr, "no RBAC") {
		t.Errorf("stderr %q, want the failed writes", stderr)
	}
}

func TestPullMainFlags(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(spec, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args     []string
		wantCode int
		want     string
	}{
		"help":             {args: []string{"pull", "-h"}, wantCode: precache.ExitOK, want: "-spec"},
		"no flags":         {args: []string{"pull"}, wantCode: precache.ExitUnrecoverable, want: "precache pull: missing required flags: --spec, --run, --store\n"},
		"unknown store":    {args: []string{"pull", "--spec", spec, "--run", "r", "--store", "docker"}, wantCode: precache.ExitUnrecoverable, want: `--store "docker": want "podman" or "oci:DIR"`},
		"half a report":    {args: []string{"pull", "--spec", spec, "--run", "r", "--store", "podman", "--report-namespace", "ns"}, wantCode: precache.ExitUnrecoverable, want: "--report-namespace and --report-configmap go together"},
		"no parallelism":   {args: []string{"pull", "--spec", spec, "--run", "r", "--store", "podman", "--parallel", "0"}, wantCode: precache.ExitUnrecoverable, want: "--parallel 0: want at least 1"},
		"missing authfile": {args: []string{"pull", "--spec", spec, "--run", "r", "--store", "podman", "--authfile", "/does/not/exist"}, wantCode: precache.ExitUnrecoverable, want: "reading the auth file"},
		"stray argument":   {args: []string{"pull", "--spec", spec, "--run", "r", "--store", "podman", "extra"}, wantCode: precache.ExitUnrecoverable, want: "unexpected arguments: extra"},
		"empty spec, OCI store, anonymous": {
			args:     []string{"pull", "--spec", spec, "--run", "r", "--store", "oci:" + filepath.Join(t.TempDir(), "store"), "--authfile", "", "--termination-log", ""},
			wantCode: precache.ExitOK, want: "Run r: 0 images on the node: 0 present, 0 pulled (0B), 0 excluded\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.wantCode || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
				t.Errorf("exit code %d, stdout %q, stderr %q; want %d and %q", code, stdout.String(), stderr.String(), tc.wantCode, tc.want)
			}
		})
	}
}
