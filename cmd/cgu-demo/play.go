package main

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/timeout"
)

// frameRate is how often the display redraws: it shows elapsed time and deadlines, which
// move without any event.
const frameRate = 200 * time.Millisecond

// result is how the rollout ended.
type result struct {
	last    snapshot
	elapsed time.Duration
}

// play shows the plan, enables the rollout and draws it until it ends.
func (d *demo) play(ctx context.Context) (result, error) {
	cgu, err := d.waitForPlan(ctx)
	if err != nil {
		return result{}, err
	}
	if d.preview, err = d.previewBatches(ctx, cgu); err != nil {
		return result{}, err
	}
	d.term.plan(cgu, d.preview)
	d.term.step("Enabling the rollout (spec.enable: true)")
	if err := d.enable(ctx); err != nil {
		return result{}, err
	}
	start := time.Now()
	limit := time.Duration(timeoutMinutes(cgu))*time.Minute + time.Minute
	ticker := time.NewTicker(frameRate)
	defer ticker.Stop()
	for {
		s, err := d.snapshot(ctx)
		if err != nil {
			return result{}, err
		}
		d.term.frame(s, time.Since(start))
		if s.ended() {
			d.term.finish(s)
			return result{last: s, elapsed: time.Since(start)}, nil
		}
		if time.Since(start) > limit {
			d.term.finish(s)
			return result{}, fmt.Errorf("the rollout did not end within its timeout and a minute; state %s: %s",
				s.cgu.Status.State, s.cgu.Status.Message)
		}
		select {
		case <-ctx.Done():
			d.term.finish(s)
			return result{}, fmt.Errorf("interrupted")
		case <-ticker.C:
		}
	}
}

// waitForPlan waits until the operator shows the plan of the disabled CGU, or says why it
// cannot.
func (d *demo) waitForPlan(ctx context.Context) (*ranv1alpha1.ClusterGroupUpgrade, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ticker := time.NewTicker(frameRate)
	defer ticker.Stop()
	for {
		s, err := d.snapshot(ctx)
		if err == nil {
			st := s.cgu.Status
			for _, kind := range []string{ranv1alpha1.ConditionClustersSelected, ranv1alpha1.ConditionValidated} {
				if c := meta.FindStatusCondition(st.Conditions, kind); c != nil && c.Status == metav1.ConditionFalse {
					return nil, fmt.Errorf("the ClusterGroupUpgrade is not valid: %s: %s", c.Reason, c.Message)
				}
			}
			if st.Plan != nil && st.Plan.Clusters == d.opts.clusters {
				return s.cgu, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the operator did not plan the rollout within a minute (see the log)")
		case <-ticker.C:
		}
	}
}

// previewBatches reads the plan the operator would freeze now, with the operator's own
// rules (pkg/preview, as `kubectl cgu plan` does), for display before the start.
func (d *demo) previewBatches(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade) ([]batchView, error) {
	res, err := preview.Build(ctx, d.hub.Client, cgu)
	if err != nil {
		return nil, err
	}
	if res.Problem != nil {
		return nil, fmt.Errorf("the plan cannot be built: %s: %s", res.Problem.Reason, res.Problem.Message)
	}
	out := make([]batchView, len(res.Plan.Batches))
	for i, b := range res.Plan.Batches {
		out[i] = batchOf(i+1, b, nil, cgu.Name)
	}
	return out, nil
}

func timeoutMinutes(cgu *ranv1alpha1.ClusterGroupUpgrade) int {
	if rs := cgu.Spec.RemediationStrategy; rs != nil && rs.Timeout > 0 {
		return rs.Timeout
	}
	return ranv1alpha1.DefaultTimeoutMinutes
}

// overallDeadline is when the rollout runs out of time.
func overallDeadline(cgu *ranv1alpha1.ClusterGroupUpgrade) time.Time {
	if cgu.Status.StartedAt == nil {
		return time.Time{}
	}
	return timeout.Overall(cgu.Status.StartedAt.Time, timeoutMinutes(cgu))
}
