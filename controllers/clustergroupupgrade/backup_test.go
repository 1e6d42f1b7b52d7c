package clustergroupupgrade_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/backup"
	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
	"github.com/cgu-operator/cgu-operator/pkg/prestart"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

// recordingHost records the node commands a restore runs.
type recordingHost struct{ commands []string }

func (h *recordingHost) Run(_ context.Context, name string, args ...string) error {
	h.commands = append(h.commands, strings.Join(append([]string{name}, args...), " "))
	return nil
}

var _ = Describe("Backup before the upgrade", func() {
	It("backs every cluster up first, and leaves out of the plan a cluster whose backup failed", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "backup", 3)
		p := placeUpgradePolicy(ctx, "backup", 3)
		noRoom := clusters[1]
		fleet.SetNodeFreeSpace(noRoom, 1<<30) // less than the 10 GiB margin

		cgu := newCGU("cgu-backup", "upgrade", clusters, 2, p.Name)
		cgu.Spec.Backup, cgu.Spec.Enable = true, ptr.To(true)
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(2 * settle).Should(ContainElement("BackupSuceeded True PartiallyDone"))
		Eventually(state(ctx, cgu)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))

		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.Backup.Status).To(Equal(map[string]string{
			clusters[0]: backup.Kind.Word(prestart.Succeeded), noRoom: backup.Kind.Word(prestart.Failed), clusters[2]: backup.Kind.Word(prestart.Succeeded)}))
		Expect(st.Backup.StartedAt).NotTo(BeNil())
		Expect(st.RemediationPlan).To(Equal([][]string{{clusters[0]}, {clusters[2]}}),
			"the cluster without a backup is not upgraded; its batch goes on without it, as with pre-caching")
		Expect(desired(noRoom)(Default)).To(BeEmpty())
		Expect(version(clusters[0])(Default)).To(Equal(harness.To))

		By("the backup on the node: what a restore needs, from the spoke program's own code")
		for _, c := range []string{clusters[0], clusters[2]} {
			dir := filepath.Join(fleet.NodeRoot(c), recovery.DefaultDir)
			for _, part := range []string{recovery.ManifestFile, recovery.PartCluster, recovery.PartEtc, recovery.PartLocal, recovery.PartKubelet, recovery.PartExtras} {
				_, err := os.Stat(filepath.Join(dir, part))
				Expect(err).NotTo(HaveOccurred(), "%s of %s", part, c)
			}
		}
		_, err := os.Stat(filepath.Join(fleet.NodeRoot(noRoom), recovery.DefaultDir, recovery.ManifestFile))
		Expect(err).To(HaveOccurred(), "nothing is written without room")

		By("the restore procedure on that node, as an administrator runs it (the node's commands recorded)")
		root := fleet.NodeRoot(clusters[0])
		hostname := filepath.Join(root, "etc/hostname")
		Expect(os.WriteFile(hostname, []byte("changed by the upgrade\n"), 0o600)).To(Succeed())
		host := &recordingHost{}
		opts := recovery.Options{Root: root, Dir: recovery.DefaultDir, Host: host}
		first, err := recovery.Restore(ctx, opts, "", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(first.Next).To(ContainSubstring("reboot"))
		Expect(os.ReadFile(hostname)).To(Equal([]byte(clusters[0] + "\n")))
		second, err := recovery.Restore(ctx, opts, "", false)
		Expect(err).NotTo(HaveOccurred())
		Expect(second.Done).To(Equal([]string{recovery.StepStarted, recovery.StepRestoreFiles, recovery.StepRestoreCluster}))
		Expect(host.commands).To(ContainElement("/usr/local/bin/cluster-restore.sh /var/recovery/cluster"))
	})

	It("does not start when every backup failed", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "backupfail", 2)
		p := placeUpgradePolicy(ctx, "backupfail", 2)
		for _, c := range clusters {
			fleet.SetNodeFreeSpace(c, 1<<30)
		}
		cgu := newCGU("cgu-backupfail", "upgrade", clusters, 2, p.Name)
		cgu.Spec.Backup, cgu.Spec.Enable = true, ptr.To(true)
		fleet.MustCreate(ctx, cgu)
		Eventually(talmConditions(ctx, cgu)).WithTimeout(2 * settle).Should(ContainElement("BackupSuceeded False Failed"))
		Eventually(fleet.Stored(ctx, cgu)).WithTimeout(settle).Should(And(
			HaveField("Status.State", ranv1alpha1.StateCannotStart),
			HaveField("Status.Message", ContainSubstring("The backup failed or timed out on all 2 clusters"))))
		Consistently(desired(clusters[0])).WithTimeout(2 * time.Second).Should(BeEmpty())
	})

	It("times the backups out after 20 minutes, as TALM, and upgrades the clusters backed up", func(ctx SpecContext) {
		clusters := joinFleet(ctx, "backuplate", 2)
		p := placeUpgradePolicy(ctx, "backuplate", 2)
		late := clusters[1]
		fleet.StallBackup(late)
		cgu := newCGU("cgu-backuplate", "upgrade", clusters, 2, p.Name)
		cgu.Spec.Backup, cgu.Spec.Enable = true, ptr.To(true)
		fleet.MustCreate(ctx, cgu)
		Eventually(func(g Gomega) map[string]string {
			b := fleet.Stored(ctx, cgu)(g).Status.Backup
			g.Expect(b).NotTo(BeNil())
			return b.Status
		}).WithTimeout(2 * settle).Should(Equal(map[string]string{clusters[0]: backup.Kind.Word(prestart.Succeeded), late: backup.Kind.Word(prestart.Active)}))
		Expect(fleet.Stored(ctx, cgu)(Default).Status).To(And(
			HaveField("State", ranv1alpha1.StateNotStarted),
			HaveField("Message", ContainSubstring("Waits for the backup of the clusters to end"))))

		advance(ctx, backup.Overall, cgu)
		Eventually(state(ctx, cgu)).WithTimeout(3 * settle).Should(Equal(ranv1alpha1.StateCompleted))
		st := fleet.Stored(ctx, cgu)(Default).Status
		Expect(st.Backup.Status).To(HaveKeyWithValue(late, backup.Kind.Word(prestart.Timeout)))
		Expect(st.RemediationPlan).To(Equal([][]string{{clusters[0]}}))
	})
})
