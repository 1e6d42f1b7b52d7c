package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// The demo end to end, as `make demo` runs it, on a small fleet: it completes and exits 0,
// and with a stalled cluster it ends TimedOut, says so, and exits 1.
func TestDemo(t *testing.T) {
	cases := map[string]struct {
		opts     options
		code     int
		contains []string
	}{
		"a rollout that completes": {
			opts: options{clusters: 5, maxConcurrency: 2, upgradeDuration: time.Second, samples: "../../samples/demo", plain: true},
			code: 0,
			contains: []string{
				"==> Dashboard: http://127.0.0.1:",
				"The plan of demo/demo-upgrade, visible while spec.enable is false: 5 clusters in 4 batches (2 canary)",
				"Batch 1/4 canary     sno-01", "Batch 3/4            sno-03 sno-04",
				"Batch 4/4 ended: 1 of 1 clusters completed",
				"5 of 5 clusters upgraded to 4.16.12, 0 timed out", "The rollout completed.",
				"oc get cgu:           STATE Completed",
				"Progressing=False Completed, Succeeded=True Completed",
				"remediationPlan:      [sno-01] [sno-02] [sno-03 sno-04] [sno-05]", "clusters:             5 complete",
			},
		},
		"a stalled cluster times its batch out": {
			opts: options{clusters: 3, maxConcurrency: 1, upgradeDuration: time.Second, stall: "sno-03", timeout: 1,
				samples: "../../samples/demo", plain: true},
			code: 1,
			contains: []string{"sno-03 TimedOut upgrade-4.16.12", "2 of 3 clusters upgraded to 4.16.12, 1 timed out",
				"cgu-demo: the rollout ended TimedOut", "oc get cgu:           STATE TimedOut", "clusters:             2 complete, 1 timedout"},
		},
	}
	cases["a progressive rollout"] = struct {
		opts     options
		code     int
		contains []string
	}{
		opts: options{clusters: 7, maxConcurrency: 4, upgradeDuration: time.Second, mode: string(ranv1alpha1.ModeProgressive),
			samples: "../../samples/demo", plain: true},
		code: 0,
		contains: []string{
			"Batch 3/3            sno-03 sno-04 sno-05 sno-06 sno-07 (stages of 1, 2, 4 clusters, growing after each healthy one)",
			"7 of 7 clusters upgraded to 4.16.12, 0 timed out", "The rollout completed.",
		},
	}
	cases["an image-based group upgrade, one cluster failing Prep"] = struct {
		opts     options
		code     int
		contains []string
	}{
		opts: options{clusters: 4, maxConcurrency: 2, upgradeDuration: time.Second, kind: kindIBGU, fail: "sno-02",
			samples: "../../samples/demo-ibgu", plain: true},
		code: 0,
		contains: []string{
			"The plan of demo/demo-ibu: [Prep] -> [Upgrade] -> [AbortOnFailure] -> [FinalizeUpgrade]",
			"Step 0 (Prep) started: ClusterGroupUpgrade demo-ibu-prep-0",
			"sno-02 Prep failed: failed to pull the seed image: unauthorized (the demo's --fail)",
			"sno-02 AbortOnFailure completed", "sno-04 FinalizeUpgrade completed",
			"Step 3 (FinalizeUpgrade) ended Completed: 3 of 3 clusters completed, 0 failed, 0 timed out",
			"Plan:         Completed: All plan steps completed",
			"  1     Upgrade          2    Completed  3/3 completed            demo-ibu-upgrade-1",
			"The plan completed.",
		},
	}
	cases["a release-named upgrade of a mixed fleet"] = struct {
		opts     options
		code     int
		contains []string
	}{
		// Upgrades of the demo's default length, as make demo KIND=mcu runs them.
		opts: options{clusters: 6, maxConcurrency: 3, upgradeDuration: 8 * time.Second, kind: kindMCU,
			samples: "../../samples/demo-mcu", plain: true},
		code: 0,
		contains: []string{
			"Planned: update 1 to 4.15.40 (2 clusters), update 1 to 4.16.12 (4 clusters), update 2 to 4.16.12 (2 clusters); ClusterGroupUpgrade to-4.16.12 rolls it out",
			"6/6 on 4.16.12, 0 upgrading, 0 failed, 0 held",
			"Release:      4.16.12 in channel eus-4.16",
			"Every cluster runs 4.16.12.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			code := run(ctx, tc.opts, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if code != tc.code {
				t.Fatalf("exit code %d, want %d; output:\n%s", code, tc.code, out)
			}
			for _, want := range tc.contains {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// The train demo end to end, as `make demo KIND=train` runs it, on three clusters per
// regional hub, one of hub-west's stalling: 4.16.12 goes through ring pilot and on to ring
// regions, 4.16.13, published meanwhile, enters ring pilot behind it and follows it into ring
// regions; both are delivered, the stalled cluster within ring regions' budget. About a
// minute, most of it starting the three hubs.
func TestTrainDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := options{clusters: 3, maxConcurrency: 2, upgradeDuration: time.Second, stall: "1", kind: kindTrain, plain: true, dashboardPort: -1}
	code := run(ctx, opts, &stdout, &stderr)
	out := stdout.String() + stderr.String()
	if code != 0 {
		t.Fatalf("exit code %d, want 0; output:\n%s", code, out)
	}
	// In the order they happen: 4.16.13 enters the pilot while 4.16.12 is still in ring
	// regions, and is delivered after it.
	steps := []string{
		"] 4.16.12 found in stable-4.16", "4.16.12 entered ring pilot", "4.16.12 soaks in ring pilot for 4h: 1 of 1 clusters run it",
		"==> 4.16.13 is published in stable-4.16",
		"==> The demo clock moves on 30m to Sat 08:30: the train's next read of stable-4.16", "] 4.16.13 found in stable-4.16",
		"==> The demo clock moves on 3h30m to Sat 12:00: the end of 4.16.12's soak in ring pilot",
		"4.16.12 entered ring regions", "4.16.13 entered ring pilot",
		"==> The demo clock moves on 2h to Sat 14:00: the timeout of batch 1 of edge-4.16-regions-4.16.12 on hub-west",
		"4.16.13 qualified in ring pilot", "4.16.12 delivered: qualified in every ring", "4.16.13 entered ring regions",
		"4.16.13 delivered: qualified in every ring", "The train delivered 4.16.13.",
	}
	at := 0
	for _, step := range steps {
		i := strings.Index(out[at:], step)
		if i < 0 {
			t.Fatalf("output lacks %q after %q:\n%s", step, out[:at], out)
		}
		at += i + len(step)
	}
	matchGolden(t, "train-final", finalTrainView(t, out))
}

// finalTrainView is the view the train demo prints as the train ended, from the line after
// its heading to the releases' endings. The ledger keeps the counts each ring judged a
// release on: the deletion of 4.16.12's rollout in ring regions, hub by hub once 4.16.13
// entered it, does not change them.
func finalTrainView(t *testing.T, out string) string {
	t.Helper()
	_, view, ok := strings.Cut(out, "==> The train as it ended")
	if !ok {
		t.Fatalf("no final view in:\n%s", out)
	}
	var kept []string
	for _, line := range strings.Split(view, "\n")[1:] {
		if ending.MatchString(line) {
			break
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n") + "\n"
}

// ending matches the lines that follow the final view: how each release ended.
var ending = regexp.MustCompile(`^    \d+\.\d+\.\d+ (delivered|stopped|superseded) `)

func TestFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		err  string
		// stall is the stalled cluster as the demo names it.
		stall string
		// clusters is the fleet's size, per regional hub for a train; 0 leaves it unchecked.
		clusters int
	}{
		"a stall in a fleet of 300":       {args: []string{"--clusters=300", "--stall=sno-150"}, stall: "sno-150"},
		"a stall padded to another width": {args: []string{"--clusters=300", "--stall=sno-05"}, stall: "sno-005"},
		"a stall in a fleet of 3500":      {args: []string{"--clusters=3500", "--stall=sno-5"}, stall: "sno-0005"},
		"a stall outside a fleet of 300": {args: []string{"--clusters=300", "--stall=sno-301"},
			err: `--stall "sno-301" is not one of sno-001 to sno-300`},
		"a stall that names no number": {args: []string{"--stall=sno-x1"}, err: `--stall "sno-x1" is not one of sno-01 to sno-12`},
		"a stall numbered zero":        {args: []string{"--stall=sno-00"}, err: `--stall "sno-00" is not one of sno-01 to sno-12`},
		"a failing cluster of 1000": {args: []string{"--clusters=1000", "--kind=ibgu", "--fail=sno-1001"},
			err: `--fail "sno-1001" is not one of sno-0001 to sno-1000`},
		"defaults":           {clusters: 12},
		"too few clusters":   {args: []string{"--clusters=2"}, err: "--clusters must be at least 3, got 2"},
		"unknown stall":      {args: []string{"--stall=sno-99"}, err: `--stall "sno-99" is not one of sno-01 to sno-12`},
		"negative timeout":   {args: []string{"--timeout=-1"}, err: "--timeout must not be negative, got -1"},
		"stall in the fleet": {args: []string{"--clusters=5", "--stall=sno-05"}, stall: "sno-05"},
		"an IBGU failing":    {args: []string{"--kind=ibgu", "--fail=sno-03"}},
		"unknown kind":       {args: []string{"--kind=policy"}, err: `--kind must be cgu, ibgu, mcu or train, got "policy"`},
		"fail without ibgu":  {args: []string{"--fail=sno-03"}, err: "--fail is for --kind=ibgu; a ClusterGroupUpgrade's cluster stalls with --stall"},
		"unknown failing":    {args: []string{"--kind=ibgu", "--fail=sno-99"}, err: `--fail "sno-99" is not one of sno-01 to sno-12`},
		"a window":           {args: []string{"--mode=Window"}},
		"unknown mode":       {args: []string{"--mode=Waves"}, err: `--mode must be Batches, Window or Progressive, got "Waves"`},
		"a mode for an IBGU": {args: []string{"--kind=ibgu", "--mode=Window"}, err: "--mode is for --kind=cgu; an image-based group upgrade's steps run in batches"},
		"an MCU":             {args: []string{"--kind=mcu"}},
		"a mode for an MCU":  {args: []string{"--kind=mcu", "--mode=Window"}, err: "--mode is for --kind=cgu; a release-named upgrade runs in batches"},
		"a train":            {args: []string{"--kind=train"}, clusters: trainClusters},
		"a train of 5 a hub": {args: []string{"--kind=train", "--clusters=5"}, clusters: 5},
		"a train stalling 3": {args: []string{"--kind=train", "--stall=3"}, stall: "3", clusters: trainClusters},
		"a train stalling a cluster": {args: []string{"--kind=train", "--stall=sno-03"},
			err: `--stall with --kind=train is how many of hub-west's 20 clusters stall, got "sno-03"`},
		"a train stalling more than hub-west has": {args: []string{"--kind=train", "--clusters=5", "--stall=6"},
			err: `--stall with --kind=train is how many of hub-west's 5 clusters stall, got "6"`},
		"a train stalling -1": {args: []string{"--kind=train", "--stall=-1"},
			err: `--stall with --kind=train is how many of hub-west's 20 clusters stall, got "-1"`},
		"a train failing": {args: []string{"--kind=train", "--fail=sno-03"}, err: "--fail is for --kind=ibgu; a train's clusters stall with --stall=N"},
		"a train's mode":  {args: []string{"--kind=train", "--mode=Window"}, err: "--mode is for --kind=cgu; a train's rings run in batches"},
		"a train's timeout": {args: []string{"--kind=train", "--timeout=3"},
			err: "--timeout is for --kind=cgu; a train's stalled clusters time out after their rollout's 2h per update"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := parseFlags(tc.args)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("error %v, want %q", err, tc.err)
			case err == nil && o.stall != tc.stall:
				t.Fatalf("stalls %q, want %q", o.stall, tc.stall)
			case err == nil && tc.clusters != 0 && o.clusters != tc.clusters:
				t.Fatalf("%d clusters, want %d", o.clusters, tc.clusters)
			}
		})
	}
}

// The samples name their canaries sno-01 and sno-02; a fleet of 100 clusters or more names
// them sno-001 and sno-002, and the demo renames them to match.
func TestCanariesNamedAsTheFleet(t *testing.T) {
	cases := map[string]struct {
		kind, samples string
		canaries      []string
		path          func(*unstructured.Unstructured) ([]string, error)
	}{
		"a ClusterGroupUpgrade's canaries": {kind: kindCGU, samples: "../../samples/demo", canaries: []string{"sno-001", "sno-002"},
			path: func(o *unstructured.Unstructured) ([]string, error) {
				v, _, err := unstructured.NestedStringSlice(o.Object, "spec", "remediationStrategy", "canaries")
				return v, err
			}},
		"a ManagedClustersUpgrade's canary selector": {kind: kindMCU, samples: "../../samples/demo-mcu", canaries: []string{"sno-001"},
			path: func(o *unstructured.Unstructured) ([]string, error) {
				e, _, err := unstructured.NestedSlice(o.Object, "spec", "upgradeStrategy", "canaryClusters", "clusterSelector", "matchExpressions")
				if err != nil || len(e) != 1 {
					return nil, fmt.Errorf("match expressions %v: %w", e, err)
				}
				v, _, err := unstructured.NestedStringSlice(e[0].(map[string]any), "values")
				return v, err
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := &demo{opts: options{clusters: 300, maxConcurrency: 40, kind: tc.kind, samples: tc.samples}}
			objs, err := readManifests(tc.samples)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if err := d.take(o); err != nil {
					t.Fatal(err)
				}
				if o.GetName() != d.cgu.Name || o.GetKind() == "Policy" {
					continue
				}
				got, err := tc.path(o)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.canaries) {
					t.Errorf("canaries %v, want %v", got, tc.canaries)
				}
				return
			}
			t.Fatalf("%s holds no %s", tc.samples, tc.kind)
		})
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 59 * time.Second: "0:59", 61 * time.Second: "1:01", 3723 * time.Second: "1:02:03", -5 * time.Second: "0:00",
	} {
		if got := clock(d); got != want {
			t.Errorf("clock(%s) = %q, want %q", d, got, want)
		}
	}
}

// One frame can see the last clusters complete, their batch end and the rollout complete:
// the lines come in that order, as they happened.
func TestPrintChangesInTheOrderTheyHappened(t *testing.T) {
	var out bytes.Buffer
	term := newTerminal(&out, &out, true)
	start := time.Now()
	batch := func(index int, finished bool, states ...ranv1alpha1.ClusterState) batchView {
		b := batchView{index: index}
		if len(states) > 0 {
			b.started, b.deadline = start, start.Add(time.Minute)
		}
		if finished {
			b.finished = start.Add(time.Second)
		}
		for i, st := range states {
			b.clusters = append(b.clusters, clusterView{name: fmt.Sprintf("sno-%d%d", index, i), state: st, policy: "upgrade"})
		}
		return b
	}
	cgu := &ranv1alpha1.ClusterGroupUpgrade{Status: ranv1alpha1.ClusterGroupUpgradeStatus{State: ranv1alpha1.StateNotCompleted, Message: "Rolling out"}}
	term.printChanges(snapshot{cgu: cgu, batches: []batchView{batch(1, false, ranv1alpha1.ClusterInProgress), batch(2, false)}}, 0) // batch 2 has not started
	cgu = cgu.DeepCopy()
	cgu.Status.State, cgu.Status.Message = ranv1alpha1.StateCompleted, "All clusters are compliant"
	out.Reset()
	term.printChanges(snapshot{cgu: cgu, batches: []batchView{
		batch(1, true, ranv1alpha1.ClusterCompleted), batch(2, true, ranv1alpha1.ClusterCompleted, ranv1alpha1.ClusterCompleted),
	}}, 5*time.Second)
	want := []string{
		"sno-10 Completed", "Batch 1/2 ended", "Batch 2/2 started", "sno-20 Completed", "sno-21 Completed", "Batch 2/2 ended",
		"Completed: All clusters are compliant",
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("printed %d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d is %q, want it to contain %q; all:\n%s", i+1, lines[i], w, out.String())
		}
	}
}
