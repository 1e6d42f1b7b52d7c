package clustergroupupgrade

import (
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/policies"
	"github.com/cgu-operator/cgu-operator/pkg/spokejob"
)

// What every step of a reconcile uses, and that calls none of them: the clock the cache's lag
// is measured on, the writers of enforcement and cleanup.

// lagNow is the time the wait for the cache (cacheLag) is measured in: real time, since it
// bounds how long the API server takes to deliver a watch event, while the rollout's Clock
// may be a test's fake clock that does not move on its own.
func (r *Reconciler) lagNow() time.Time { return time.Now() }

func (r *Reconciler) cleaner() ownership.Cleaner {
	return ownership.Cleaner{Client: r.Client, Copies: r.Copies, Unserved: r.Unserved,
		Teardown: spokejob.Runner{Client: r.Client}.Teardown}
}

func (r *Reconciler) writer() policies.Writer {
	return policies.Writer{Client: r.Client, Reader: r.Reader, Copies: r.Copies, Scheme: r.Scheme,
		Unserved: r.Unserved, Tenancy: r.Tenancy}
}
