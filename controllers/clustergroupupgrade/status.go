package clustergroupupgrade

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/controllers/internal/reconciled"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// EventRemediationError is the reason of the event of a write to the hub that failed. The
// events of a rollout's transitions have TALM's reasons (pkg/talm, emitted in
// events.go).
const EventRemediationError = "RemediationFailed"

// eventAction is the action of every event: what the operator was doing.
const eventAction = "Rollout"

// patchStatus writes the status the decision computed, when it changed; a change that is
// only clusters moving on waits for the status's pace (deferred is then true: the hub does
// not hold the decision's status yet), decided by cgu.Decide (Intents.StatusPaced) or here.
func (r *Reconciler) patchStatus(ctx context.Context, s *scope) (deferred bool, err error) {
	st := &s.in.Status // the decision's own value: nothing else holds it
	if equality.Semantic.DeepEqual(*st, s.before) {
		return false, nil
	}
	if s.in.StatusPaced {
		// Decided against the pace the gather read, TALM's fields left as read: written,
		// whole, by the pass once the pace is over.
		s.lookAgain(max(s.progressDue.Sub(r.lagNow()), time.Millisecond))
		return true, nil
	}
	if rollout.StatusProgressOnly(&s.before, st, s.cgu.Spec.BatchSoak != nil) && s.deferWrite(r.expect.progressDue(s.cgu), r.lagNow()) {
		return true, nil
	}
	// A whole-status update, checked against the resourceVersion read: the status is
	// computed from everything read since, and is written whole or not at all.
	s.cgu.Status = *st
	if err := r.Client.Status().Update(ctx, s.cgu); err != nil {
		return false, fmt.Errorf("patching status: %w", err)
	}
	r.expect.wrote(s.cgu, r.lagNow(), statusSize(s.cgu.Status))
	if s.in.Enforcement.Starts {
		r.expect.started(s.cgu, r.lagNow())
	}
	return false, nil
}

// patchFailure writes, after a phase failed, the status as read with the Reconciled
// condition False naming the failure: the status never goes on saying what was true before
// without saying that the operator could not do its work. Conflicts (retried at once) and a
// cache behind the operator's own writes (a wait) are not failures.
func (r *Reconciler) patchFailure(ctx context.Context, s *scope, err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	st := s.before.DeepCopy()
	talm.SetCondition(&st.Conditions, reconciled.Failed(err, s.cgu.Generation))
	if equality.Semantic.DeepEqual(*st, s.before) {
		return nil
	}
	updated := s.cgu.DeepCopy()
	updated.Status = *st
	if werr := r.Client.Status().Update(ctx, updated); werr != nil {
		return fmt.Errorf("writing the failure to status: %w", werr)
	}
	r.expect.wrote(updated, r.lagNow(), statusSize(updated.Status))
	return nil
}

// failed reports an error of a phase that writes to the hub; a conflict with a newer
// version of an object is only retried.
func (r *Reconciler) failed(s *scope, err error) {
	if s.decided && !apierrors.IsConflict(err) {
		r.event(s, corev1.EventTypeWarning, EventRemediationError, "%s", rollout.Truncate(err.Error(), ranv1alpha1.MessageLimit))
	}
}
