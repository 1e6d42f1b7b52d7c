// Package suite starts the hub world for a Ginkgo suite. It is apart from tests/harness,
// which the demo binary uses too, because Ginkgo registers its flags when imported.
package suite

import (
	"context"

	"github.com/go-logr/logr"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

// Start starts the hub, the simulator and the operator (harness.Start), and stops the hub
// when the suite ends, with the logging of Logging. Call it from BeforeSuite.
func Start(ctx context.Context) *harness.Env {
	return StartWith(ctx, nil)
}

// StartWith is Start with the operator's options changed by configure.
func StartWith(ctx context.Context, configure func(*operator.Options)) *harness.Env {
	log := Logging()
	env, err := harness.StartWith(ctx, log, configure)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() { gomega.Expect(env.Hub.Stop()).To(gomega.Succeed()) })
	return env
}

// Logging sends controller-runtime's log and klog's (the Open Cluster Management
// controllers') to GinkgoWriter, which shows a spec's log only when it fails, and returns the
// controller-runtime logger. That one is in zap's development mode; klog's is not, since
// development mode panics on a malformed key-value list, which some Open Cluster Management
// code logs.
func Logging() logr.Logger {
	log := zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true))
	ctrl.SetLogger(log)
	klog.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.ConsoleEncoder()).WithName("klog"))
	return log
}
