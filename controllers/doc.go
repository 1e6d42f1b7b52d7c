// Package controllers holds the ClusterGroupUpgrade reconciler (clustergroupupgrade_*.go).
// The other reconcilers have a package each, in the same shape (gather, a pure Decide in
// pkg/, apply, one status write): imagebasedgroupupgrade/ and ztp/.
//
// A reconcile of a ClusterGroupUpgrade runs its phases in one order (phases in
// clustergroupupgrade_controller.go): gather reads what the decision needs, from the cache
// and without writing (the gather* functions, one file per concern: _phases.go, _precache.go,
// _checks.go, _health.go, _works.go, _overlaps.go); decide builds plain facts and calls the
// pure code in pkg/ (pkg/gates, pkg/rollout), and decides the spoke-side objects to make
// (_spoke.go); apply makes every write through the adapters in pkg/ (the apply* functions);
// the status is computed once and written once (_status.go, _talm.go), failures included.
// Expected waits end a reconcile with a RequeueAfter, not an error. Events (_events.go) and
// info logs (_log.go) mark the transitions a write carried; _watches.go and _expect.go say
// what queues a ClusterGroupUpgrade.
package controllers
