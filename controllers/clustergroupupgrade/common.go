package clustergroupupgrade

import (
	"context"
	"time"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
	"github.com/cgu-operator/cgu-operator/pkg/talmjob"
)

// What every step of a reconcile uses, and that calls none of them: the clock the cache's lag
// is measured on, the writers of enforcement and cleanup.

// lagNow is the time the wait for the cache (cacheLag) is measured in: real time, since it
// bounds how long the API server takes to deliver a watch event, while the rollout's Clock
// may be a test's fake clock that does not move on its own.
func (r *Reconciler) lagNow() time.Time { return time.Now() }

func (r *Reconciler) cleaner() ownership.Cleaner {
	return ownership.Cleaner{Client: r.Client, Copies: r.Copies, Unserved: r.Unserved, Teardown: r.teardown, Clock: r.Clock}
}

// teardown removes from the spokes what the rollout's jobs left there: the spoke jobs'
// objects (spokejob), and the pre-caching and backup Jobs that had not succeeded with their
// namespaces (talmjob), as TALM's cleanup does.
func (r *Reconciler) teardown(ctx context.Context, views []viewv1beta1.ManagedClusterView) error {
	runner := spokejob.Runner{Client: r.Client}
	if err := runner.Teardown(ctx, views); err != nil {
		return err
	}
	actions := talmjob.TeardownActions(views, spokejob.TeardownLabels("talm"))
	w := spokeobjects.Writer{Client: r.Client}
	for _, a := range actions { // made anew: one of the name may have been answered already
		if err := w.Delete(ctx, &actionv1beta1.ManagedClusterAction{ObjectMeta: metav1.ObjectMeta{Namespace: a.Namespace, Name: a.Name}}); err != nil {
			return err
		}
	}
	return runner.CreateTeardown(ctx, actions)
}

func (r *Reconciler) writer() policies.Writer {
	return policies.Writer{Client: r.Client, Reader: r.Reader, Copies: r.Copies, Scheme: r.Scheme,
		Unserved: r.Unserved, Tenancy: r.Tenancy}
}
