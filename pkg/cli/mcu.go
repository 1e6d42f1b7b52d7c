package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/mcu"
)

// heldShown bounds the held clusters `mcu NAME` lists.
const heldShown = 20

func newMCUCommand(e *env) *cobra.Command {
	v := &kindView[*ranv1alpha1.ManagedClustersUpgrade]{env: e, kind: "ManagedClustersUpgrade", plural: "ManagedClustersUpgrades",
		get: func() *ranv1alpha1.ManagedClustersUpgrade { return &ranv1alpha1.ManagedClustersUpgrade{} },
		list: func(ctx context.Context, c client.Client, opts ...client.ListOption) ([]*ranv1alpha1.ManagedClustersUpgrade, error) {
			var list ranv1alpha1.ManagedClustersUpgradeList
			err := c.List(ctx, &list, opts...)
			return pointers(list.Items), err
		},
		printable: func(m *ranv1alpha1.ManagedClustersUpgrade) any {
			return printableCopy(m, ranv1alpha1.GroupVersion, "ManagedClustersUpgrade")
		},
		show: func(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade, _ time.Time) error {
			return writeMCU(w, p, m)
		},
		table: writeMCUList,
	}
	return v.command("mcu [NAME]", "Show ManagedClustersUpgrades: the release, the plan's updates, the summaries and the held clusters",
		`Without NAME, list the ManagedClustersUpgrades of the namespace (-n, or the
kubeconfig's), or of every namespace with -A: the release, where the rollout stands, the
clusters selected, complete, failed and held, its ClusterGroupUpgrade and its age.

With NAME, show one: the release and channel, where it stands and why, its
ClusterGroupUpgrade (kubectl cgu status NAME shows its batches), the updates of the plan
(a cluster two minors behind takes two), the summaries of the canaries, of every cluster
and of the pre- and post-upgrade actions, and the held clusters with the reason (the first
20).

With -o json or -o yaml, print the object (or a List of them); -o name, -o jsonpath=...
and -o go-template=... print them as kubectl does.`,
		`  kubectl cgu mcu -n fleet-upgrades
  kubectl cgu mcu to-4.16.20 -n fleet-upgrades
  kubectl cgu mcu -A -o yaml`)
}

// mcuStateColor colours a rollout's state: Complete green, InProgress cyan, Failed red, a
// refusal or a wait yellow.
func mcuStateColor(state string) string {
	switch state {
	case "Complete":
		return ansiGreen
	case "InProgress":
		return ansiCyan
	case "Failed":
		return ansiRed
	case "-":
		return ""
	}
	return ansiYellow
}

func writeMCUList(w io.Writer, p painter, items []*ranv1alpha1.ManagedClustersUpgrade, namespaces bool, now time.Time) error {
	t := &table{header: []string{"NAME", "VERSION", "STATE", "SELECTED", "COMPLETE", "FAILED", "HELD", "UPGRADE", "AGE"}}
	if namespaces {
		t.header = append([]string{"NAMESPACE"}, t.header...)
	}
	for _, m := range items {
		var row []cell
		if namespaces {
			row = append(row, plain(m.Namespace))
		}
		state, _ := mcu.StateOf(m)
		s := m.Status.ClustersSummary
		if s == nil {
			s = &ranv1alpha1.ClustersSummary{}
		}
		t.add(append(row, plain(m.Name), plain(m.Spec.ClusterVersion.Version), cell{text: state, color: mcuStateColor(state)},
			plain(fmt.Sprint(s.Total)), plain(fmt.Sprint(s.Complete)), plain(fmt.Sprint(s.Failed)), plain(fmt.Sprint(s.Held)),
			plain(orDash(m.Status.Upgrade)), plain(age(m.CreationTimestamp.Time, now)))...)
	}
	return t.write(w, p, "")
}

// ShowManagedClustersUpgrade writes, without colour, what `kubectl cgu mcu NAME` shows of m
// (the demo prints it).
func ShowManagedClustersUpgrade(w io.Writer, m *ranv1alpha1.ManagedClustersUpgrade) error {
	return writeMCU(w, painter{}, m)
}

// writeMCU writes one ManagedClustersUpgrade: its release and state, the plan's updates,
// the summaries and the held clusters.
func writeMCU(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade) error {
	for _, write := range []func() error{
		func() error { return writeMCUHeader(w, p, m) },
		func() error { return writeMCUStages(w, p, m) },
		func() error { return writeMCUSummaries(w, p, m) },
		func() error { return writeMCUCapacity(w, p, m) },
		func() error { return writeMCUHeld(w, p, m) },
	} {
		if err := write(); err != nil {
			return err
		}
	}
	return nil
}

func writeMCUHeader(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade) error {
	var b strings.Builder
	cv := m.Spec.ClusterVersion
	state, why := mcu.StateOf(m)
	fmt.Fprintf(&b, "Name:         %s/%s\n", m.Namespace, m.Name)
	fmt.Fprintf(&b, "Release:      %s in channel %s\n", cv.Version, cv.Channel)
	fmt.Fprintf(&b, "State:        %s", p.paint(mcuStateColor(state), state))
	if why != "" {
		fmt.Fprintf(&b, ": %s", why)
	}
	b.WriteString("\n")
	if m.Status.Upgrade != "" {
		fmt.Fprintf(&b, "Upgrade:      ClusterGroupUpgrade %s (kubectl cgu status %s -n %s)\n", m.Status.Upgrade, m.Status.Upgrade, m.Namespace)
	}
	for _, r := range m.Spec.AcceptedRisks {
		until := "the rollout's life"
		if r.Until != nil {
			until = r.Until.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(&b, "Risk:         %s, accepted by %s until %s\n", r.Name, r.AcceptedBy, until)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMCUStages(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade) error {
	if len(m.Status.Stages) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "\nUpdates (a cluster's n-th update in stage n):\n"); err != nil {
		return err
	}
	t := &table{header: []string{"STAGE", "TO", "CLUSTERS", "POLICY", "ACCEPTED RISKS"}}
	for _, s := range m.Status.Stages {
		t.add(plain(fmt.Sprint(s.Index)), plain(s.Version), plain(fmt.Sprint(s.Clusters)), plain(s.Policy), plain(orDash(strings.Join(s.Risks, ", "))))
	}
	return t.write(w, p, "  ")
}

func writeMCUSummaries(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade) error {
	st := m.Status
	if st.ClustersSummary == nil {
		return nil
	}
	if _, err := io.WriteString(w, "\nClusters:\n"); err != nil {
		return err
	}
	t := &table{header: []string{"", "TOTAL", "STARTED", "UPGRADING", "COMPLETE", "FAILED", "PENDING", "HELD"}}
	for _, row := range []struct {
		name string
		s    *ranv1alpha1.ClustersSummary
	}{{"canaries", st.CanaryClustersSummary}, {"all", st.ClustersSummary}} {
		if row.s == nil {
			continue
		}
		failed := plain(fmt.Sprint(row.s.Failed))
		if row.s.Failed > 0 {
			failed.color = ansiRed
		}
		t.add(plain(row.name), plain(fmt.Sprint(row.s.Total)), plain(fmt.Sprint(row.s.Initialized)), plain(fmt.Sprint(row.s.PartialUpgrade)),
			plain(fmt.Sprint(row.s.Complete)), failed, plain(fmt.Sprint(row.s.Pending)), plain(fmt.Sprint(row.s.Held)))
	}
	if err := t.write(w, p, "  "); err != nil {
		return err
	}
	if st.PreUpgradeActionSummary == nil && st.PostUpgradeActionSummary == nil {
		return nil
	}
	if _, err := io.WriteString(w, "\nActions (ManifestWorks):\n"); err != nil {
		return err
	}
	a := &table{header: []string{"", "TOTAL", "APPLIED", "AVAILABLE", "PROGRESSING", "DEGRADED"}}
	for _, row := range []struct {
		name string
		s    *ranv1alpha1.ActionSummary
	}{{"pre-upgrade", st.PreUpgradeActionSummary}, {"post-upgrade", st.PostUpgradeActionSummary}} {
		if row.s == nil {
			continue
		}
		degraded := plain(fmt.Sprint(row.s.Degraded))
		if row.s.Degraded > 0 {
			degraded.color = ansiRed
		}
		a.add(plain(row.name), plain(fmt.Sprint(row.s.Total)), plain(fmt.Sprint(row.s.Applied)), plain(fmt.Sprint(row.s.Available)),
			plain(fmt.Sprint(row.s.Progressing)), degraded)
	}
	return a.write(w, p, "  ")
}

// writeMCUCapacity writes where the worker capacity of the multi-node clusters stands.
func writeMCUCapacity(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade) error {
	c := m.Status.WorkerCapacity
	if c == nil {
		return nil
	}
	notReady := plain(fmt.Sprint(c.NotReady))
	if c.NotReady > 0 {
		notReady.color = ansiYellow
	}
	if _, err := io.WriteString(w, "\nWorker capacity (multi-node clusters; not ready: upgraded without the new machines):\n"); err != nil {
		return err
	}
	t := &table{header: []string{"TOTAL", "ADDED", "NOT READY", "REMOVED"}}
	t.add(plain(fmt.Sprint(c.Total)), plain(fmt.Sprint(c.Added)), notReady, plain(fmt.Sprint(c.Removed)))
	return t.write(w, p, "  ")
}

// writeMCUHeld lists the first heldShown clusters the plan holds.
func writeMCUHeld(w io.Writer, p painter, m *ranv1alpha1.ManagedClustersUpgrade) error {
	held := m.Status.Held
	total := len(held) + m.Status.HeldNotShown
	if total == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nHeld clusters (%d):\n", total); err != nil {
		return err
	}
	t := &table{header: []string{"CLUSTER", "REASON", "MESSAGE"}}
	for _, h := range held[:min(len(held), heldShown)] {
		t.add(plain(h.Cluster), cell{text: h.Reason, color: ansiYellow}, plain(firstLine(h.Message)))
	}
	if err := t.write(w, p, "  "); err != nil {
		return err
	}
	if total > heldShown {
		_, err := fmt.Fprintf(w, "  ... and %d more: kubectl get mcu %s -n %s -o yaml\n", total-heldShown, m.Name, m.Namespace)
		return err
	}
	return nil
}
