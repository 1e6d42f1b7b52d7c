package fidelity_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/world"
)

// The compliance messages of the upgrade policy's template.
const (
	compliant    = "Compliant; notification - clusterversions [version] found as specified"
	nonCompliant = "NonCompliant; violation - clusterversions [version] found but not as specified"
)

var _ = Describe("Simulated and real spokes", Ordered, func() {
	var modes []*mode

	BeforeAll(func() { modes = []*mode{scaleMode, realMode} })

	It("report the same status for an inform ClusterVersion policy", func(ctx SpecContext) {
		By("Given fid-1 already asks for " + target + " and runs it, fid-2 and fid-3 run older versions")
		for _, m := range modes {
			Expect(m.spokes.setDesiredUpdate(ctx, "fid-1", target)).To(Succeed(), m.name)
		}

		By("When an inform policy for " + target + " is placed on the three clusters")
		for _, m := range modes {
			placePolicy(ctx, m.hub, world.UpgradePolicy(policyNS, policyName, target, policyv1.Inform))
		}

		By("Then both hubs settle with fid-1 Compliant and the others NonCompliant")
		want := map[string]policyv1.ComplianceState{
			"fid-1": policyv1.Compliant, "fid-2": policyv1.NonCompliant, "fid-3": policyv1.NonCompliant,
		}
		scaleStatus := settle(ctx, scaleMode, want)
		realStatus := settle(ctx, realMode, want)
		AddReportEntry("inform: scale mode", scaleStatus.String())
		AddReportEntry("inform: real mode", realStatus.String())

		By("And their root and replicated policy statuses are the same, field by field")
		Expect(realStatus).To(BeComparableTo(scaleStatus, asideTimesAndEvents))
		Expect(realStatus.messages("fid-1")).To(Equal([]string{compliant}))
		Expect(realStatus.messages("fid-2")).To(Equal([]string{nonCompliant}))
	})

	It("report the same status once the policy is enforced and the updates completed", func(ctx SpecContext) {
		By("When the policy is switched to enforce")
		for _, m := range modes {
			setRemediation(ctx, m.hub, policyName, policyv1.Enforce)
		}

		By("Then both hubs settle with every cluster Compliant")
		want := map[string]policyv1.ComplianceState{
			"fid-1": policyv1.Compliant, "fid-2": policyv1.Compliant, "fid-3": policyv1.Compliant,
		}
		scaleStatus := settle(ctx, scaleMode, want)
		realStatus := settle(ctx, realMode, want)
		AddReportEntry("enforce: scale mode", scaleStatus.String())
		AddReportEntry("enforce: real mode", realStatus.String())

		// The histories are compared whole: in both modes an entry marks a change of compliance
		// or of the policy's spec (the switch to enforce), never a mere re-evaluation, so the
		// Partial step of the update, however long, adds none. Over runs with update durations
		// from 0 to 3 s both modes gave, newest first, fid-1 [Compliant, Compliant] and fid-2
		// and fid-3 [Compliant, NonCompliant, NonCompliant].
		By("And their root and replicated policy statuses are the same, field by field")
		Expect(realStatus).To(BeComparableTo(scaleStatus, asideTimesAndEvents))
		Expect(realStatus.messages("fid-1")).To(Equal([]string{compliant, compliant}))
		Expect(realStatus.messages("fid-2")).To(Equal([]string{compliant, nonCompliant, nonCompliant}))

		By("And the simulated cluster-version operator completed the same updates on both kinds of spoke")
		for _, c := range clusters {
			scaleCV, err := scaleMode.spokes.clusterVersion(ctx, c.name)
			Expect(err).NotTo(HaveOccurred())
			realCV, err := realMode.spokes.clusterVersion(ctx, c.name)
			Expect(err).NotTo(HaveOccurred())
			Expect(updateSteps(realCV)).To(Equal(updateSteps(scaleCV)), c.name)
			Expect(realCV.Status.History[0].State).To(Equal(configv1.CompletedUpdate), c.name)
			Expect(realCV.Status.History[0].Version).To(Equal(target), c.name)
		}
	})
})
