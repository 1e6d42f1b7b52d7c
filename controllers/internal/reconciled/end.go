package reconciled

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
)

// CacheRetry bounds the wait for the cache to show a newer object after a write conflict.
const CacheRetry = time.Second

// End ends a pass with its one status write. A pass that failed on a write conflict looks
// again once the cache has caught up, writing nothing; any other pass calls write (failed
// says whether the pass failed, and the status written must then carry Failed(err)). A pass
// that failed goes back to the workqueue; one that succeeded looks again after after (zero:
// when an event comes).
func End(ctx context.Context, err error, after time.Duration, write func(failed bool) error) (ctrl.Result, error) {
	if apierrors.IsConflict(err) {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting", "for", "a newer version of an object to reach the cache", "conflict", err)
		return ctrl.Result{RequeueAfter: CacheRetry}, nil
	}
	if werr := write(err != nil); werr != nil {
		if apierrors.IsConflict(werr) && err == nil {
			return ctrl.Result{RequeueAfter: CacheRetry}, nil
		}
		return ctrl.Result{}, errors.Join(err, fmt.Errorf("writing the status: %w", werr))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

// Same reports whether two statuses write the same JSON: a status that would not change is
// not written.
func Same(read, decided any) bool {
	x, errA := json.Marshal(read)
	y, errB := json.Marshal(decided)
	return errA == nil && errB == nil && string(x) == string(y)
}
