package configpolicy

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
)

// clusterVersion is a ClusterVersion at 4.16.10 with the status fields a real one carries.
const clusterVersion = `
apiVersion: config.openshift.io/v1
kind: ClusterVersion
metadata: {name: version, generation: 2}
spec:
  clusterID: 8c3f0b52-4d3e-4c4a-9d1e-1a2b3c4d5e6f
  channel: stable-4.16
  desiredUpdate: {version: 4.16.10, image: "quay.io/openshift-release-dev/ocp-release@sha256:aaa", force: false}
status:
  observedGeneration: 2
  versionHash: abcdEFGH123=
  desired: {version: 4.16.10, image: "quay.io/openshift-release-dev/ocp-release@sha256:aaa", channels: [stable-4.16, fast-4.16]}
  history:
  - {state: Completed, version: 4.16.10, image: "quay.io/openshift-release-dev/ocp-release@sha256:aaa",
     startedTime: "2025-10-01T10:00:00Z", completionTime: "2025-10-01T11:00:00Z", verified: true}
  - {state: Completed, version: 4.16.8, image: "quay.io/openshift-release-dev/ocp-release@sha256:888",
     startedTime: "2025-09-01T10:00:00Z", completionTime: "2025-09-01T11:00:00Z", verified: false}
  availableUpdates:
  - {version: 4.16.11, image: "quay.io/openshift-release-dev/ocp-release@sha256:bbb", channels: [stable-4.16]}
  - {version: 4.16.12, image: "quay.io/openshift-release-dev/ocp-release@sha256:ccc", channels: [stable-4.16]}
  conditions:
  - {type: Available, status: "True", lastTransitionTime: "2025-10-01T11:00:00Z", message: Done applying 4.16.10}
  - {type: Failing, status: "False", lastTransitionTime: "2025-10-01T11:00:00Z"}
  - {type: Progressing, status: "False", lastTransitionTime: "2025-10-01T11:00:00Z", message: Cluster version is 4.16.10}
  - {type: RetrievedUpdates, status: "True", lastTransitionTime: "2025-10-01T09:00:00Z"}
`

// desiredVersionTemplate asks for spec.desiredUpdate.version 4.16.12.
const desiredVersionTemplate = `
- complianceType: musthave
  objectDefinition:
    apiVersion: config.openshift.io/v1
    kind: ClusterVersion
    metadata: {name: version}
    spec: {desiredUpdate: {version: 4.16.12}}`

// completedHistoryTemplate waits for a Completed 4.16.12 entry in status.history.
const completedHistoryTemplate = `
- complianceType: musthave
  objectDefinition:
    apiVersion: config.openshift.io/v1
    kind: ClusterVersion
    metadata: {name: version}
    status: {history: [{state: Completed, version: 4.16.12}]}`

func TestEvaluateClusterVersionStatus(t *testing.T) {
	withHistory := func(state string) string {
		return `{apiVersion: config.openshift.io/v1, kind: ClusterVersion, metadata: {name: version},
			spec: {clusterID: x}, status: {history: [
			{state: ` + state + `, version: 4.16.12, startedTime: "2025-11-21T10:00:00Z", verified: false},
			{state: Completed, version: 4.16.10, startedTime: "2025-10-01T10:00:00Z", verified: true}]}}`
	}

	cases := map[string]evalCase{
		"history Partial": {
			spec:       "remediationAction: inform\nobject-templates:" + completedHistoryTemplate,
			objects:    []string{withHistory("Partial")},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - clusterversions [version] found but not as specified",
		},
		"history Completed": {
			spec:       "remediationAction: inform\nobject-templates:" + completedHistoryTemplate,
			objects:    []string{withHistory("Completed")},
			compliance: configpolicyv1.Compliant,
			message:    "Compliant; notification - clusterversions [version] found as specified",
		},
		"enforce cannot fix status": {
			spec:       "remediationAction: enforce\nobject-templates:" + completedHistoryTemplate,
			objects:    []string{withHistory("Partial")},
			compliance: configpolicyv1.NonCompliant,
			message:    "NonCompliant; violation - clusterversions [version] found but not as specified",
			after: func(g Gomega, get getter) {
				history := get(clusterVersionGVK, "", "version").Object["status"].(map[string]any)["history"].([]any)
				g.Expect(history[0].(map[string]any)["state"]).To(Equal("Partial"))
			},
		},
		"creating an object whose template states status": {
			spec:        "remediationAction: enforce\nobject-templates:" + completedHistoryTemplate,
			compliance:  configpolicyv1.NonCompliant,
			message:     "NonCompliant; violation - clusterversions [version] was created successfully, the status of the object will be verified in the next evaluation",
			transitions: []string{"clusterversions [version] not found"},
			after: func(g Gomega, get getter) {
				g.Expect(get(clusterVersionGVK, "", "version")).NotTo(BeNil())
			},
		},
	}

	runEvalCases(t, cases)
}

// TestClusterVersionUpgrade runs an upgrade policy with two ConfigurationPolicies, "desired"
// (enforce) and "completed" (inform), while the test plays the cluster-version operator, and checks
// every step against the real controller.
func TestClusterVersionUpgrade(t *testing.T) {
	g := NewWithT(t)

	desired := configurationPolicy(t, "remediationAction: enforce\nobject-templates:"+desiredVersionTemplate)
	desired.Name = "desired"
	completed := configurationPolicy(t, "remediationAction: inform\nobject-templates:"+completedHistoryTemplate)
	completed.Name = "completed"

	objs := objects(t, clusterVersion)
	store := newTestStore(t, objs)
	controller := newOracle(t, store.mapper, objs, desired, completed)
	w := upgradeWorld{t: t, g: g, store: store, real: controller, policies: []*configpolicyv1.ConfigurationPolicy{desired, completed}}

	// The operator has not acted yet: the enforce policy sets the desired version.
	w.evaluate(
		"Compliant; notification - clusterversions [version] was updated successfully",
		"NonCompliant; violation - clusterversions [version] found but not as specified",
	)
	w.g.Expect(w.emitted[0]).To(Equal([]string{
		"NonCompliant; violation - clusterversions [version] found but not as specified",
		"Compliant; notification - clusterversions [version] was updated successfully",
	}))
	w.g.Expect(w.clusterVersion().Object["spec"]).To(HaveKeyWithValue("desiredUpdate", map[string]any{
		"version": "4.16.12", "image": "quay.io/openshift-release-dev/ocp-release@sha256:aaa", "force": false,
	}))
	w.g.Expect(w.replicated()).To(Equal(policyv1.NonCompliant))

	// The operator starts the update.
	w.operator(func(status map[string]any) {
		history := status["history"].([]any)
		status["history"] = append([]any{map[string]any{
			"state": "Partial", "version": "4.16.12", "image": "quay.io/openshift-release-dev/ocp-release@sha256:ccc",
			"startedTime": "2025-11-21T12:00:00Z", "completionTime": nil, "verified": true,
		}}, history...)
	})
	w.evaluate(
		"Compliant; notification - clusterversions [version] found as specified",
		"NonCompliant; violation - clusterversions [version] found but not as specified",
	)
	w.g.Expect(w.emitted[0]).To(Equal([]string{"Compliant; notification - clusterversions [version] found as specified"}))
	w.g.Expect(w.emitted[1]).To(BeEmpty())
	w.g.Expect(w.replicated()).To(Equal(policyv1.NonCompliant))

	// The operator completes it.
	w.operator(func(status map[string]any) {
		latest := status["history"].([]any)[0].(map[string]any)
		latest["state"] = "Completed"
		latest["completionTime"] = "2025-11-21T13:00:00Z"
	})
	w.evaluate(
		"Compliant; notification - clusterversions [version] found as specified",
		"Compliant; notification - clusterversions [version] found as specified",
	)
	w.g.Expect(w.emitted[0]).To(BeEmpty())
	w.g.Expect(w.emitted[1]).To(Equal([]string{"Compliant; notification - clusterversions [version] found as specified"}))
	w.g.Expect(w.replicated()).To(Equal(policyv1.Compliant))
}

// upgradeWorld evaluates the same policies with the evaluator and the real controller, each on its
// own copy of the cluster.
type upgradeWorld struct {
	t        *testing.T
	g        Gomega
	store    *MapStore
	real     *oracle
	policies []*configpolicyv1.ConfigurationPolicy
	results  []Result
	emitted  [][]string
	history  [][]string
}

// evaluate evaluates every policy once and expects the given messages, in policy order.
func (w *upgradeWorld) evaluate(messages ...string) {
	w.t.Helper()

	if w.results == nil {
		w.results = make([]Result, len(w.policies))
		w.history = make([][]string, len(w.policies))
	}

	w.emitted = make([][]string, len(w.policies))

	for i, policy := range w.policies {
		res := Evaluate(policy, w.store, testNow)
		w.g.Expect(res.Message).To(Equal(messages[i]), policy.Name)

		status, sent := w.real.evaluate(w.t, policy.Name)
		w.g.Expect(resultConditions(res)).To(Equal(oracleConditions(status)), "real conditions of "+policy.Name)

		w.emitted[i] = orEmpty(EmittedMessages(w.results[i], res, false))
		w.g.Expect(w.emitted[i]).To(Equal(sent), "real messages of "+policy.Name)

		// status-sync keeps the newest message first.
		for _, msg := range w.emitted[i] {
			w.history[i] = append([]string{msg}, w.history[i]...)
		}

		w.results[i] = res
	}

	w.g.Expect(w.clusterVersion().Object["spec"]).To(Equal(
		w.real.get(clusterVersionGVK, "", "version").Object["spec"]), "real cluster version spec")
}

// replicated is the replicated policy's compliance computed from the templates' newest messages.
func (w *upgradeWorld) replicated() policyv1.ComplianceState {
	states := make([]policyv1.ComplianceState, len(w.history))
	for i, h := range w.history {
		states[i] = TemplateCompliance(h[0])
	}

	return ReplicatedCompliance("", states...)
}

func (w *upgradeWorld) clusterVersion() *unstructured.Unstructured {
	obj, err := w.store.Get(clusterVersionGVK, "", "version")
	must(w.t, err)

	return obj
}

// operator changes the ClusterVersion status in both clusters, as the cluster-version operator
// would.
func (w *upgradeWorld) operator(change func(status map[string]any)) {
	w.t.Helper()

	mine := w.clusterVersion().DeepCopy()
	change(mine.Object["status"].(map[string]any))
	must(w.t, w.store.Update(mine))

	theirs := w.real.get(clusterVersionGVK, "", "version")
	change(theirs.Object["status"].(map[string]any))
	w.real.updateStatus(w.t, theirs)
}
