package fidelity_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

func TestFidelity(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Simulator fidelity suite")
}

// The scenario's fleet: three clusters on different versions, the same on both hubs.
const (
	policyNS   = "policies"
	fleetLabel = "fleet"
	fleetName  = "fidelity"
	channel    = "stable-4.16"
	target     = "4.16.12"
	policyName = "platform-upgrade"
)

var clusters = []struct{ name, version string }{
	{"fid-1", target}, // already updated to the target: spec.desiredUpdate is set before the policy
	{"fid-2", "4.16.10"},
	{"fid-3", "4.16.11"},
}

// behaviour is the simulated cluster-version operator's on every spoke. An update that
// completes at once is the hardest timing for the simulator: the round that completes it comes
// right after its own status write, while its cache of replicated policies may still be stale,
// so its next write can fail on a conflict and the messages must be emitted again. (Slower
// updates, where the policy sees the update Partial, are covered by tests/sim and
// tests/world/realspoke.)
var behaviour = sim.Behaviour{Duration: 0}

var scaleMode, realMode *mode

var _ = BeforeSuite(func(ctx SpecContext) {
	log := suite.Logging()

	// The two modes start side by side; a real spoke takes about five seconds.
	var wg sync.WaitGroup
	var scaleErr, realErr error
	began := time.Now()
	wg.Go(func() { scaleMode, scaleErr = startScale(ctx, log.WithName("scale")) })
	wg.Go(func() { realMode, realErr = startReal(ctx, log.WithName("real")) })
	wg.Wait()
	Expect(errors.Join(scaleErr, realErr)).NotTo(HaveOccurred())
	AddReportEntry("start-up", fmt.Sprintf("both modes in %s, side by side; scale: %s; real: %s",
		since(began), strings.Join(scaleMode.startup, ", "), strings.Join(realMode.startup, ", ")))
}, NodeTimeout(3*time.Minute))

var _ = AfterSuite(func() {
	for _, m := range []*mode{realMode, scaleMode} {
		if m != nil {
			Expect(m.stop()).To(Succeed(), "stopping the %s mode", m.name)
		}
	}
	procs, err := testenv.ControlPlaneProcesses()
	Expect(err).NotTo(HaveOccurred())
	Expect(procs).To(BeEmpty(), "no kube-apiserver or etcd is left running")
})
