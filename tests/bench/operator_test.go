package bench_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// operatorRun is the operator's side of a benchmark: the operator runs in a process of its
// own (runChild), so that its memory is its own and its metrics its own registry's; the
// report comes back when it stops.
type operatorRun struct {
	cmd    *exec.Cmd
	dir    string
	exited chan error
}

// startOperator starts the operator on the hub in a child process (this test binary again,
// with childEnv naming a directory holding the hub's kubeconfig, childEnforcementEnv the
// mode) and returns once the child says its caches synced and it has made no request for
// two seconds.
func startOperator(ctx context.Context, f *fleet, mode ranv1alpha1.EnforcementMode) (*operatorRun, error) {
	dir, err := os.MkdirTemp("", "bench-operator-")
	if err != nil {
		return nil, err
	}
	if err := f.hub.WriteKubeconfig(filepath.Join(dir, "kubeconfig")); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+dir, childEnforcementEnv+"="+string(mode))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the operator process: %w", err)
	}
	run := &operatorRun{cmd: cmd, dir: dir, exited: make(chan error, 1)}
	synced := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == childSynced {
				close(synced)
			}
		}
		run.exited <- cmd.Wait()
	}()
	select {
	case <-synced:
		return run, nil
	case err := <-run.exited:
		return nil, fmt.Errorf("the operator process exited before its caches synced: %w", err)
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, ctx.Err()
	}
}

// stop stops the operator process (SIGTERM, as a pod's termination) and returns its report.
func (r *operatorRun) stop() (childReport, error) {
	defer os.RemoveAll(r.dir)
	var rep childReport
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return rep, err
	}
	select {
	case err := <-r.exited:
		if err != nil {
			return rep, fmt.Errorf("the operator process: %w", err)
		}
	case <-time.After(time.Minute):
		_ = r.cmd.Process.Kill()
		return rep, fmt.Errorf("the operator process did not stop within a minute")
	}
	data, err := os.ReadFile(filepath.Join(r.dir, childReportFile))
	if err != nil {
		return rep, err
	}
	return rep, json.Unmarshal(data, &rep)
}

// newUpgrade is the benchmark's ClusterGroupUpgrade: every cluster of the fleet by label,
// the managed policies in order, maxConcurrency clusters at a time in mode (empty: TALM's
// batches), enabled at once, with a timeout long enough never to matter.
func newUpgrade(f *fleet, maxConcurrency int, mode ranv1alpha1.RolloutMode) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: rolloutNamespace},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{fleetLabel: "bench"}}},
			ManagedPolicies:       f.policyNames(),
			RemediationStrategy:   &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: maxConcurrency, Timeout: 24 * 60, Mode: mode},
			Enable:                ptr.To(true),
		},
	}
}

// waitCompleted waits until the ClusterGroupUpgrade is Completed and returns when that was
// first seen. It watches the one object rather than reading it again and again: the floor
// driver has no such reader, and a GET of a large status every fraction of a second would
// load the API server of the operator's phase alone.
func waitCompleted(ctx context.Context, f *fleet, cgu *ranv1alpha1.ClusterGroupUpgrade) (time.Time, error) {
	wc, err := client.NewWithWatch(f.hub.Config, client.Options{Scheme: f.hub.Scheme})
	if err != nil {
		return time.Time{}, err
	}
	for {
		w, err := wc.Watch(ctx, &ranv1alpha1.ClusterGroupUpgradeList{}, client.InNamespace(cgu.Namespace),
			client.MatchingFields{"metadata.name": cgu.Name})
		if err != nil {
			return time.Time{}, err
		}
		at, done, err := completedIn(ctx, w)
		w.Stop()
		if done || err != nil {
			return at, err
		}
		// The watch ended (the API server closes watches after a while): watch again, from
		// the object as it is.
	}
}

// completedIn reads w until the ClusterGroupUpgrade is seen Completed (done), the watch
// ends (not done) or ctx is done.
func completedIn(ctx context.Context, w watch.Interface) (time.Time, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return time.Time{}, false, nil
			}
			if cur, isCGU := ev.Object.(*ranv1alpha1.ClusterGroupUpgrade); isCGU && cur.Status.State == ranv1alpha1.StateCompleted {
				return time.Now(), true, nil
			}
		}
	}
}

// planOf reads the frozen plan from the batch records, in order.
func planOf(ctx context.Context, f *fleet) ([][]string, error) {
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := f.hub.Client.List(ctx, &records, client.InNamespace(rolloutNamespace)); err != nil {
		return nil, err
	}
	slices.SortFunc(records.Items, func(a, b ranv1alpha1.ClusterGroupUpgradeBatch) int {
		if a.Spec.Index != b.Spec.Index {
			return a.Spec.Index - b.Spec.Index
		}
		return a.Spec.Part - b.Spec.Part
	})
	var out [][]string
	for _, r := range records.Items {
		if len(out) < r.Spec.Index {
			out = append(out, nil)
		}
		out[r.Spec.Index-1] = append(out[r.Spec.Index-1], r.Spec.Clusters...)
	}
	return out, nil
}

// waitCleanedUp waits until none of the rollout's Placements is left (rolloutObjects, in
// any namespace), so that the requests of the operator's cleanup are counted.
func waitCleanedUp(ctx context.Context, f *fleet) error {
	return waitUntil(ctx, 200*time.Millisecond, func() (bool, error) {
		var list clusterv1beta1.PlacementList
		if err := f.hub.Client.List(ctx, &list, client.MatchingLabelsSelector{Selector: rolloutObjects}); err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
}
