// Package clustergroupupgrade is the ClusterGroupUpgrade reconciler. The other reconcilers
// have a package each beside it: imagebasedgroupupgrade and ztp.
//
// A reconcile of a ClusterGroupUpgrade runs its phases in one order (phases in
// controller.go) over one scope (scope.go): gather reads what the decision needs, from the
// cache and without writing (the gather* functions, one file per concern: phases.go,
// prestart.go, checks.go, health.go, works.go, overlaps.go); decide builds plain facts and
// calls the pure code in pkg/ (pkg/gates, pkg/rollout), and decides the spoke-side objects to
// make (spoke.go); apply makes every write through the writers in pkg/ (the apply* functions);
// the status is computed once and written once (status.go, talm.go), failures included.
// Expected waits end a reconcile with a RequeueAfter, not an error. Events (events.go,
// recorder.go) and info logs (log.go) mark the transitions a write carried; watches.go and
// expect.go say what queues a ClusterGroupUpgrade. common.go holds what every step uses. No
// two files call each other both ways (hack/filecalls).
//
// The package's tests are the operator's suite on the hub test world (suite_test.go): the
// rollouts of every kind, and the ImageBasedGroupUpgrade scenarios (ibgu_test.go), which run
// on ClusterGroupUpgrades and share the suite's hub.
package clustergroupupgrade
