// Package clustergroupupgrade is the ClusterGroupUpgrade reconciler. The other reconcilers
// have a package each beside it: imagebasedgroupupgrade and ztp.
//
// A reconcile runs three typed steps (phases in controller.go). Gather (gather.go) fills one
// cgu.Facts with a gatherer, which holds readers only: each concern (the records, the start,
// others' clusters, the pre-start Jobs, the checks, health, ManifestWorks, InstallPlans)
// contributes its part and decides nothing. cgu.Decide (pkg/cgu, pure, table-tested) turns the
// facts into cgu.Intents: the mode, the plan and the clusters that leave it, every spoke Job,
// view, ManifestWork and approval, the records' progress, what to enforce, and the status.
// Apply (apply.go) makes every write through the writers in pkg/, one per kind of object; the
// status is written once, last (status.go), failures included. Expected waits end a
// reconcile with a RequeueAfter, not an error. Events (events.go, recorder.go) and info logs
// (log.go) mark the transitions a write carried, after it; watches.go, overlaps.go and
// expect.go say what queues a ClusterGroupUpgrade; scope.go carries a reconcile through its
// steps and common.go holds what every step uses. Calls run one way, down the steps, and no
// two files call each other both ways (hack/filecalls).
//
// The package's tests are the operator's suite on the hub test world (suite_test.go): the
// rollouts of every kind, and the ImageBasedGroupUpgrade scenarios (ibgu_test.go), which run
// on ClusterGroupUpgrades and share the suite's hub.
package clustergroupupgrade
