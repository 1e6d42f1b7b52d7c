package reliability_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

// otherWriter is the field manager of the client that edits the CGU beside the operator.
const otherWriter = "other-writer"

var _ = Describe("Another writer editing the CGU during the rollout", func() {
	It("is honoured (pause), keeps its labels, annotations and spec, and the status converges after a stale write", func(ctx SpecContext) {
		const clusters, concurrency, batches = 30, 10, 3
		names, cgu, log := upgradeRollout(ctx, "writer", clusters, concurrency, 2*time.Second)
		c := fleet.Hub.Client
		Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cgu.Namespace}})).To(Succeed())
		Expect(c.Create(ctx, cgu.DeepCopy(), client.FieldOwner(otherWriter))).To(Succeed())

		By("the other writer edits a label and an annotation every 100ms")
		var written atomic.Int64
		loop, stopLoop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Go(func() {
			defer GinkgoRecover()
			for n := 1; loop.Err() == nil; n++ {
				// The write itself is not cut by the stop: a request canceled in flight may
				// land on the server while the client reports the cancellation.
				if writeEdit(ctx, cgu, n) == nil {
					written.Store(int64(n))
				}
				select {
				case <-loop.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
		DeferCleanup(func() { stopLoop(); wg.Wait() })

		By("a status read during batch 1 is written back during batch 2")
		var stale *ranv1alpha1.ClusterGroupUpgrade
		Eventually(func(g Gomega) *ranv1alpha1.BatchStatus {
			stale = stored(ctx, cgu)(g)
			return stale.Status.CurrentBatch
		}).WithTimeout(settle).Should(HaveField("Index", 1))
		Eventually(log.started).WithTimeout(settle).Should(BeNumerically(">=", 2))
		Expect(c.Status().Update(ctx, stale.DeepCopy(), client.FieldOwner(otherWriter))).To(Satisfy(apierrors.IsConflict),
			"a write with the resourceVersion read is refused")
		Eventually(func(g Gomega) {
			cur := stored(ctx, cgu)(g)
			cur.Status = stale.Status
			g.Expect(c.Status().Update(ctx, cur, client.FieldOwner(otherWriter))).To(Succeed())
		}).Should(Succeed(), "a writer retrying on conflicts overwrites the status with the stale one")
		Eventually(func(g Gomega) int {
			st := stored(ctx, cgu)(g).Status
			g.Expect(st.CurrentBatch).NotTo(BeNil())
			return st.CurrentBatch.Index
		}).WithTimeout(settle).Should(BeNumerically(">=", 2), "the operator writes the status of the records again")

		By("the other writer pauses the rollout: no batch starts until it resumes")
		setPaused(ctx, cgu, true)
		Eventually(condition(ctx, cgu, ranv1alpha1.ConditionProgressing)).WithTimeout(settle).Should(HaveField("Reason", ranv1alpha1.ReasonPaused))
		held := log.started()
		Consistently(log.started).WithTimeout(3 * time.Second).Should(Equal(held))
		setPaused(ctx, cgu, false)

		Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
		stopLoop()
		wg.Wait()
		log.expectClean(batches)
		expectBatchesInOrder(ctx, cgu, names, batches, nil)
		expectUpgraded(names)
		Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
		expectNothingEnforcing(ctx, cgu, names)

		By("what the other writer wrote last is kept, and the operator owns no spec field")
		stopLoop() // the edit in flight lands first: the last one written is then the last stored
		wg.Wait()
		final := stored(ctx, cgu)(Default)
		last := strconv.FormatInt(written.Load(), 10)
		Expect(written.Load()).To(BeNumerically(">", 10))
		Expect(final.Labels).To(HaveKeyWithValue("writer.example.com/edit", last))
		Expect(final.Annotations).To(HaveKeyWithValue("writer.example.com/edit", last))
		Expect(final.Spec.Paused).To(BeFalse())
		Expect(final.Spec.ManagedPolicies).To(Equal(cgu.Spec.ManagedPolicies))
		expectOperatorOwnsOnlyStatus(final)
	})
})

// writeEdit sets the other writer's label and annotation to n, retrying on conflicts.
func writeEdit(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, n int) error {
	for {
		cur := &ranv1alpha1.ClusterGroupUpgrade{}
		if err := fleet.Hub.Client.Get(ctx, keyOf(cgu), cur); err != nil {
			return err
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Labels["writer.example.com/edit"] = strconv.Itoa(n)
		cur.Annotations["writer.example.com/edit"] = strconv.Itoa(n)
		err := fleet.Hub.Client.Update(ctx, cur, client.FieldOwner(otherWriter))
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

func setPaused(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, paused bool) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cur := stored(ctx, cgu)(g)
		cur.Spec.Paused = paused
		g.Expect(fleet.Hub.Client.Update(ctx, cur, client.FieldOwner(otherWriter))).To(Succeed())
	}).Should(Succeed())
}

// expectOperatorOwnsOnlyStatus checks the CGU's managed fields: every manager but the other
// writer owns the status and the finalizer, nothing else.
func expectOperatorOwnsOnlyStatus(cgu *ranv1alpha1.ClusterGroupUpgrade) {
	GinkgoHelper()
	operatorEntries := 0
	for _, e := range cgu.ManagedFields {
		if e.Manager == otherWriter {
			continue
		}
		operatorEntries++
		var fields map[string]any
		Expect(json.Unmarshal(e.FieldsV1.Raw, &fields)).To(Succeed())
		Expect(slices.Sorted(maps.Keys(fields))).To(BeElementOf([]string{"f:metadata"}, []string{"f:status"}, []string{"f:metadata", "f:status"}),
			"entry %s (%s, subresource %q) owns more than metadata and status", e.Manager, e.Operation, e.Subresource)
		if meta, ok := fields["f:metadata"].(map[string]any); ok {
			Expect(slices.Sorted(maps.Keys(meta))).To(Equal([]string{"f:finalizers"}), "entry %s owns metadata other than the finalizer", e.Manager)
		}
	}
	Expect(operatorEntries).To(BeNumerically(">", 0))
}

var _ = Describe("Two replicas with leader election", func() {
	It("run one leader; when it is killed the other takes over and completes, each batch once", func(ctx SpecContext) {
		replicas := startReplicas(ctx, 2)
		leaders := func() []*harness.Operator {
			var out []*harness.Operator
			for _, r := range replicas {
				if r.Leading() {
					out = append(out, r)
				}
			}
			return out
		}
		Eventually(leaders).WithTimeout(settle).Should(HaveLen(1))
		Consistently(leaders).WithTimeout(2 * time.Second).Should(HaveLen(1))
		leader := leaders()[0]
		follower := replicas[0]
		if follower == leader {
			follower = replicas[1]
		}
		holder := leaseHolder(ctx)
		Expect(holder).NotTo(BeEmpty())

		names, cgu, log := upgradeRollout(ctx, "leader", 30, 10, 2*time.Second)
		fleet.MustCreate(ctx, cgu)

		By("the leader runs batch 1; the other replica writes nothing")
		Eventually(log.started).WithTimeout(settle).Should(BeNumerically(">=", 2))
		Expect(leader.Writes()).To(BeNumerically(">", 0))
		Expect(follower.Writes()).To(BeZero())
		Expect(follower.Leading()).To(BeFalse())

		By("killing the leader: its lease expires and the other replica takes over")
		Expect(leader.Kill()).To(Succeed())
		Eventually(follower.Leading).WithTimeout(settle).Should(BeTrue())
		Expect(leaseHolder(ctx)).NotTo(Equal(holder))

		expectCompletedOnce(ctx, cgu, log, names, 3)
		Expect(follower.Writes()).To(BeNumerically(">", 0))
	})
})

// expectCompletedOnce waits for the rollout to complete, then checks that every batch ran
// once, in order, every cluster upgraded, and nothing is left enforcing.
func expectCompletedOnce(ctx context.Context, cgu *ranv1alpha1.ClusterGroupUpgrade, log *recordLog, names []string, batches int) {
	GinkgoHelper()
	Eventually(state(ctx, cgu)).WithTimeout(settle).Should(Equal(ranv1alpha1.StateCompleted))
	log.expectClean(batches)
	expectBatchesInOrder(ctx, cgu, names, batches, nil)
	expectEachBatchStartedOnce(ctx, cgu)
	expectUpgraded(names)
	Eventually(leftovers(ctx, cgu)).WithTimeout(settle).Should(BeZero())
	expectNothingEnforcing(ctx, cgu, names)
}

// startReplicas stops the suite's operator and starts n replicas with leader election (the
// lease in cgu-operator-system); when the spec ends they are healed and stopped and the
// suite's operator starts again.
func startReplicas(ctx context.Context, n int) []*harness.Operator {
	GinkgoHelper()
	replicas, err := fleet.StartReplicas(ctx, n, "cgu-operator-system")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		for _, r := range replicas {
			r.Heal()
			Expect(r.Stop()).To(Succeed())
		}
		_, err := fleet.StartOperator()
		Expect(err).NotTo(HaveOccurred())
	})
	return replicas
}

// leaseHolder returns the holder of the operator's leader lease in cgu-operator-system.
func leaseHolder(ctx context.Context) string {
	GinkgoHelper()
	lease := &coordinationv1.Lease{}
	Expect(fleet.Hub.Client.Get(ctx, client.ObjectKey{Namespace: "cgu-operator-system", Name: operator.LeaderElectionID}, lease)).To(Succeed())
	return ptr.Deref(lease.Spec.HolderIdentity, "")
}
