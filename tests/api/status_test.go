package api_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

const statusNS = "status"

func newCGU(name string) *ranv1alpha1.ClusterGroupUpgrade {
	return &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: statusNS},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			Clusters:            []string{"a", "b"},
			ManagedPolicies:     []string{"p"},
			RemediationStrategy: &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 1},
		},
	}
}

var _ = Describe("ClusterGroupUpgrade status", func() {
	BeforeEach(func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, statusNS)).To(Succeed())
	})

	It("is shown by `oc get cgu` in TALM's Age, State and Details columns, with ours in -o wide", func(ctx SpecContext) {
		cgu := newCGU("columns")
		Expect(k8s.Create(ctx, cgu)).To(Succeed())
		now := metav1.Now()
		cgu.Status = ranv1alpha1.ClusterGroupUpgradeStatus{
			State:    ranv1alpha1.StateNotCompleted,
			Message:  "Batch 2 of 5: waiting for 3 clusters",
			Progress: ranv1alpha1.Progress{Batch: "2/5", Clusters: "30/100"},
			Conditions: []metav1.Condition{
				{Type: ranv1alpha1.ConditionClustersSelected, Status: metav1.ConditionTrue, Reason: ranv1alpha1.ReasonClusterSelectionCompleted, Message: "selected", LastTransitionTime: now},
				{Type: ranv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: ranv1alpha1.ReasonInProgress, Message: "Remediating non-compliant policies", LastTransitionTime: now},
			},
		}
		Expect(k8s.Status().Update(ctx, cgu)).To(Succeed())

		table := getTable(ctx, "/apis/ran.openshift.io/v1alpha1/namespaces/"+statusNS+"/clustergroupupgrades/columns")
		var shown, wide []string
		for _, c := range table.ColumnDefinitions {
			if c.Priority == 0 {
				shown = append(shown, c.Name)
			} else {
				wide = append(wide, c.Name)
			}
		}
		Expect(shown).To(Equal([]string{"Name", "Age", "State", "Details"}))
		Expect(wide).To(Equal([]string{"Rollout", "Batch", "Clusters"}))
		Expect(table.Rows).To(HaveLen(1))
		cells := table.Rows[0].Cells
		Expect(cells[0]).To(Equal("columns"))
		Expect(cells[2:]).To(Equal([]any{"InProgress", "Remediating non-compliant policies", "NotCompleted", "2/5", "30/100"}))
	})

	It("accepts only the five documented states", func(ctx SpecContext) {
		cgu := newCGU("states")
		Expect(k8s.Create(ctx, cgu)).To(Succeed())
		for _, state := range []ranv1alpha1.UpgradeState{
			ranv1alpha1.StateNotStarted, ranv1alpha1.StateCannotStart, ranv1alpha1.StateNotCompleted,
			ranv1alpha1.StateTimedOut, ranv1alpha1.StateCompleted,
		} {
			cgu.Status.State = state
			Expect(k8s.Status().Update(ctx, cgu)).To(Succeed(), "state %s", state)
		}
		cgu.Status.State = "UpgradeCompleted"
		err := k8s.Status().Update(ctx, cgu)
		Expect(err).To(MatchError(ContainSubstring(`status.state: Unsupported value: "UpgradeCompleted"`)))
	})

	It("keeps spec.enforcement to the recorded mode once the rollout started", func(ctx SpecContext) {
		cgu := newCGU("mode-frozen")
		Expect(k8s.Create(ctx, cgu)).To(Succeed())
		By("before the start, the mode may change")
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		Expect(k8s.Update(ctx, cgu)).To(Succeed())
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementOverride
		Expect(k8s.Update(ctx, cgu)).To(Succeed())

		By("once started in Override, Copy is refused")
		cgu.Status = ranv1alpha1.ClusterGroupUpgradeStatus{StartedAt: &metav1.Time{Time: time.Now()}, Enforcement: ranv1alpha1.EnforcementOverride}
		Expect(k8s.Status().Update(ctx, cgu)).To(Succeed())
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		Expect(k8s.Update(ctx, cgu)).To(MatchError(ContainSubstring("spec.enforcement cannot change once the rollout started: status.enforcement is the mode it runs in")))

		By("removing it, or naming the recorded mode again, is accepted")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cgu), cgu)).To(Succeed())
		cgu.Spec.Enforcement = ""
		Expect(k8s.Update(ctx, cgu)).To(Succeed())
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementOverride
		Expect(k8s.Update(ctx, cgu)).To(Succeed())
		cgu.Spec.Enforcement = ranv1alpha1.EnforcementCopy
		Expect(k8s.Update(ctx, cgu)).To(MatchError(ContainSubstring("spec.enforcement cannot change")))
	})

	It("holds at most 250 clusters of the current batch", func(ctx SpecContext) {
		cgu := newCGU("too-many")
		Expect(k8s.Create(ctx, cgu)).To(Succeed())
		cgu.Status.CurrentBatch = &ranv1alpha1.BatchStatus{Index: 1}
		for i := range ranv1alpha1.ClusterDetailLimit + 1 {
			cgu.Status.CurrentBatch.Clusters = append(cgu.Status.CurrentBatch.Clusters,
				ranv1alpha1.ClusterProgress{Name: clusterName(i), State: ranv1alpha1.ClusterInProgress})
		}
		err := k8s.Status().Update(ctx, cgu)
		Expect(err).To(MatchError(ContainSubstring("status.currentBatch.clusters: Too many: 251: must have at most 250 items")))
	})

	// The API server tracks who owns each field of an object it stores (managedFields) and
	// reads, merges and writes that record at every update. A per-cluster map tracked key by
	// key made the record as large as the map, and every status update paid for both.
	It("tracks the per-cluster maps each as one field, so that managed fields stay small", func(ctx SpecContext) {
		cgu := newCGU("per-cluster")
		Expect(k8s.Create(ctx, cgu)).To(Succeed())
		progress := map[string]*ranv1alpha1.ClusterRemediationProgress{}
		states := map[string]string{}
		index := 1
		for i := range ranv1alpha1.ClusterDetailLimit {
			progress[clusterName(i)] = &ranv1alpha1.ClusterRemediationProgress{State: string(ranv1alpha1.ClusterInProgress), PolicyIndex: &index}
			states[clusterName(i)] = "Active"
		}
		cgu.Status.Status.CurrentBatchRemediationProgress = progress
		cgu.Status.Precaching = &ranv1alpha1.PrecachingStatus{Status: states}
		cgu.Status.Backup = &ranv1alpha1.BackupStatus{Status: states}
		Expect(k8s.Status().Update(ctx, cgu)).To(Succeed())
		Expect(managedFieldsSize(cgu.ManagedFields)).To(BeNumerically("<", 2048), "the managed fields of 3 x %d clusters", len(progress))
	})
})

var _ = Describe("ClusterGroupUpgradeBatch", func() {
	It("keeps its spec frozen once written", func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, statusNS)).To(Succeed())
		batch := &ranv1alpha1.ClusterGroupUpgradeBatch{
			ObjectMeta: metav1.ObjectMeta{Name: "frozen-1-0", Namespace: statusNS},
			Spec: ranv1alpha1.ClusterGroupUpgradeBatchSpec{
				Upgrade: "frozen", Index: 1, Clusters: []string{"a", "b"},
			},
		}
		Expect(k8s.Create(ctx, batch)).To(Succeed())

		batch.Spec.Clusters = []string{"a", "c"}
		Expect(k8s.Update(ctx, batch)).To(MatchError(ContainSubstring("spec is immutable: the plan is frozen once written")))

		fresh := &ranv1alpha1.ClusterGroupUpgradeBatch{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(batch), fresh)).To(Succeed())
		fresh.Status.Clusters = []ranv1alpha1.ClusterProgress{{
			Name: "a", State: ranv1alpha1.ClusterCompleted, Since: &metav1.Time{Time: time.Now()},
		}}
		Expect(k8s.Status().Update(ctx, fresh)).To(Succeed(), "progress is recorded in status")
	})

	It("rejects a part larger than 250 clusters", func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, statusNS)).To(Succeed())
		batch := &ranv1alpha1.ClusterGroupUpgradeBatch{
			ObjectMeta: metav1.ObjectMeta{Name: "large-1-0", Namespace: statusNS},
			Spec:       ranv1alpha1.ClusterGroupUpgradeBatchSpec{Upgrade: "large", Index: 1},
		}
		for i := range ranv1alpha1.ClusterDetailLimit + 1 {
			batch.Spec.Clusters = append(batch.Spec.Clusters, clusterName(i))
		}
		Expect(k8s.Create(ctx, batch)).To(MatchError(ContainSubstring("spec.clusters: Too many: 251: must have at most 250 items")))
	})

	It("tracks its clusters' progress as one field, so that managed fields stay small", func(ctx SpecContext) {
		Expect(ensureNamespace(ctx, statusNS)).To(Succeed())
		batch := &ranv1alpha1.ClusterGroupUpgradeBatch{
			ObjectMeta: metav1.ObjectMeta{Name: "tracked-1-0", Namespace: statusNS},
			Spec:       ranv1alpha1.ClusterGroupUpgradeBatchSpec{Upgrade: "tracked", Index: 1},
		}
		for i := range ranv1alpha1.ClusterDetailLimit {
			batch.Spec.Clusters = append(batch.Spec.Clusters, clusterName(i))
		}
		Expect(k8s.Create(ctx, batch)).To(Succeed())
		for _, c := range batch.Spec.Clusters {
			batch.Status.Clusters = append(batch.Status.Clusters, ranv1alpha1.ClusterProgress{
				Name: c, State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "p", Since: &metav1.Time{Time: time.Now()}})
		}
		Expect(k8s.Status().Update(ctx, batch)).To(Succeed())
		Expect(managedFieldsSize(batch.ManagedFields)).To(BeNumerically("<", 2048), "the managed fields of %d clusters", len(batch.Status.Clusters))
	})
})

// managedFieldsSize is the length in JSON of an object's managed fields as the API server
// returned them.
func managedFieldsSize(fields []metav1.ManagedFieldsEntry) int {
	raw, err := json.Marshal(fields)
	Expect(err).NotTo(HaveOccurred())
	return len(raw)
}

func clusterName(i int) string {
	return fmt.Sprintf("cluster-%04d", i)
}

// getTable reads an object the way kubectl get does: as a server-side Table.
func getTable(ctx SpecContext, path string) *metav1.Table {
	rc, err := rest.RESTClientFor(restConfigFor())
	Expect(err).NotTo(HaveOccurred())
	raw, err := rc.Get().AbsPath(path).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	table := &metav1.Table{}
	Expect(json.Unmarshal(raw, table)).To(Succeed())
	return table
}

func restConfigFor() *rest.Config {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &ranv1alpha1.GroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return c
}
