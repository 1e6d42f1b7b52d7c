package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
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

func TestFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		err  string
	}{
		"defaults":           {},
		"too few clusters":   {args: []string{"--clusters=2"}, err: "--clusters must be at least 3, got 2"},
		"unknown stall":      {args: []string{"--stall=sno-99"}, err: `--stall "sno-99" is not one of sno-01 to sno-12`},
		"negative timeout":   {args: []string{"--timeout=-1"}, err: "--timeout must not be negative, got -1"},
		"stall in the fleet": {args: []string{"--clusters=5", "--stall=sno-05"}},
		"an IBGU failing":    {args: []string{"--kind=ibgu", "--fail=sno-03"}},
		"unknown kind":       {args: []string{"--kind=policy"}, err: `--kind must be cgu or ibgu, got "policy"`},
		"fail without ibgu":  {args: []string{"--fail=sno-03"}, err: "--fail is for --kind=ibgu; a ClusterGroupUpgrade's cluster stalls with --stall"},
		"unknown failing":    {args: []string{"--kind=ibgu", "--fail=sno-99"}, err: `--fail "sno-99" is not one of sno-01 to sno-12`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseFlags(tc.args)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.err != "" && (err == nil || err.Error() != tc.err):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
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
