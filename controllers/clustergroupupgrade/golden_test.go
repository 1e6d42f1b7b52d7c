package clustergroupupgrade_test

import (
	"bytes"
	"os"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/yaml"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// goldenDoc holds the golden `oc get cgu -o yaml` of each stage of a small rollout, in
// blocks that open with a `<!-- golden:NAME -->` line followed by a fenced yaml block.
// CGU_UPDATE_GOLDEN=1 rewrites the blocks from what the rollout shows.
const goldenDoc = "../../docs/talm-compatibility.md"

var goldenBlock = regexp.MustCompile("(?s)(<!-- golden:([a-z0-9-]+) -->\n```yaml\n)(.*?)(```)")

// goldenYAML is a CGU as `oc get -o yaml` prints it, without what differs from one run to the
// next: the object's identity and write history, and every time, which reads <time>.
func goldenYAML(cgu *ranv1alpha1.ClusterGroupUpgrade) string {
	GinkgoHelper()
	c := cgu.DeepCopy()
	c.APIVersion, c.Kind = ranv1alpha1.GroupVersion.String(), "ClusterGroupUpgrade"
	c.UID, c.ResourceVersion, c.ManagedFields = "", "", nil
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	Expect(err).NotTo(HaveOccurred())
	out, err := yaml.Marshal(withoutTimes(obj))
	Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// withoutTimes replaces every RFC 3339 time in v with <time>.
func withoutTimes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = withoutTimes(e)
		}
	case []any:
		for i, e := range t {
			t[i] = withoutTimes(e)
		}
	case string:
		if _, err := time.Parse(time.RFC3339, t); err == nil {
			return "<time>"
		}
	}
	return v
}

// checkGolden compares each stage's YAML with its block in goldenDoc, or rewrites the
// blocks when CGU_UPDATE_GOLDEN=1.
func checkGolden(stages map[string]string) {
	GinkgoHelper()
	doc, err := os.ReadFile(goldenDoc)
	Expect(err).NotTo(HaveOccurred())
	found := map[string]bool{}
	updated := goldenBlock.ReplaceAllFunc(doc, func(block []byte) []byte {
		m := goldenBlock.FindSubmatch(block)
		name := string(m[2])
		found[name] = true
		want, ok := stages[name]
		if !ok {
			return block
		}
		return bytes.Join([][]byte{m[1], []byte(want), m[4]}, nil)
	})
	for name := range stages {
		Expect(found).To(HaveKey(name), "%s has no block <!-- golden:%s -->", goldenDoc, name)
	}
	if os.Getenv("CGU_UPDATE_GOLDEN") == "1" {
		Expect(os.WriteFile(goldenDoc, updated, 0o644)).To(Succeed())
		return
	}
	Expect(string(updated)).To(Equal(string(doc)),
		"the golden YAML in %s differs from what the rollout shows; run the spec with CGU_UPDATE_GOLDEN=1 and review the diff", goldenDoc)
}

var _ = Describe("The golden `oc get cgu -o yaml` of docs/talm-compatibility.md", func() {
	It("is what a small rollout shows at each stage", func(ctx SpecContext) {
		all, err := fleet.JoinFleetWith(ctx, "golden", 3, func(s *sim.SpokeSpec) {
			if s.Name == "golden-3" {
				s.Version = harness.To
			}
		})
		Expect(err).NotTo(HaveOccurred())
		Expect(simulator.Mutate(all[2], upgradedEarlier())).To(Succeed())
		p := placeUpgradePolicy(ctx, "golden", 3)
		Eventually(rootCompliance(ctx, p.Name)).WithTimeout(settle).Should(HaveKeyWithValue(all[2], policyv1.Compliant))
		for _, c := range all[:2] {
			stall(c)
		}

		cgu := newCGU("cgu-golden", "sno-upgrade", all, 1, p.Name)
		cgu.Spec.Actions = ranv1alpha1.Actions{
			BeforeEnable:    &ranv1alpha1.BeforeEnable{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-running": ""}}},
			AfterCompletion: &ranv1alpha1.AfterCompletion{ClusterActions: ranv1alpha1.ClusterActions{AddClusterLabels: map[string]ranv1alpha1.LabelValue{"ztp-done": ""}, RemoveClusterLabels: []string{"ztp-running"}}},
		}
		fleet.MustCreate(ctx, cgu)
		stages := map[string]string{}
		capture := func(name string, ready func(*ranv1alpha1.ClusterGroupUpgrade) bool) {
			GinkgoHelper()
			Eventually(func(g Gomega) bool { return ready(fleet.Stored(ctx, cgu)(g)) }).WithTimeout(2*settle).Should(BeTrue(), name)
			stages[name] = goldenYAML(fleet.Stored(ctx, cgu)(Default))
		}

		capture("not-enabled", func(c *ranv1alpha1.ClusterGroupUpgrade) bool {
			return len(c.Status.Conditions) == 3 && c.Status.State == ranv1alpha1.StateNotStarted
		})
		enable(ctx, cgu)
		inBatch := func(n int, cluster string) func(*ranv1alpha1.ClusterGroupUpgrade) bool {
			return func(c *ranv1alpha1.ClusterGroupUpgrade) bool {
				p := c.Status.Status.CurrentBatchRemediationProgress[cluster]
				return c.Status.Status.CurrentBatch == n && p != nil && p.State == ranv1alpha1.RemediationInProgress &&
					len(c.Status.Clusters) == n && desired(cluster)(Default) == to
			}
		}
		capture("batch-1", inBatch(1, all[0]))
		unstall(all[0])
		capture("batch-2", inBatch(2, all[1]))
		unstall(all[1])
		capture("completed", func(c *ranv1alpha1.ClusterGroupUpgrade) bool {
			return c.Status.State == ranv1alpha1.StateCompleted && len(c.Status.Placements) == 0
		})
		checkGolden(stages)
	})
})
