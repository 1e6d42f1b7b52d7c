package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/control"
	"github.com/cgu-operator/cgu-operator/pkg/words"
)

// Bounds of the runs of names a line of `train NAME` lists before it says how many more: the
// regional hubs that do not report, and the hubs, placements and cluster sets that say where
// a ring's clusters are.
const (
	unreachableShown = 20
	whereShown       = 5
)

// trainConditionOrder is the order a train's conditions are shown in, the API's.
var trainConditionOrder = []string{
	ranv1alpha1.TrainConditionSourceRead, ranv1alpha1.TrainConditionProgressing, ranv1alpha1.TrainConditionHubsReporting,
}

func newTrainCommand(e *env) *cobra.Command {
	v := &kindView[*ranv1alpha1.ReleaseTrain]{env: e, kind: "ReleaseTrain", plural: "ReleaseTrains",
		get: func() *ranv1alpha1.ReleaseTrain { return &ranv1alpha1.ReleaseTrain{} },
		list: func(ctx context.Context, c client.Client, opts ...client.ListOption) ([]*ranv1alpha1.ReleaseTrain, error) {
			var list ranv1alpha1.ReleaseTrainList
			err := c.List(ctx, &list, opts...)
			return pointers(list.Items), err
		},
		printable: func(t *ranv1alpha1.ReleaseTrain) any {
			return printableCopy(t, ranv1alpha1.GroupVersion, "ReleaseTrain")
		},
		show: func(w io.Writer, p painter, t *ranv1alpha1.ReleaseTrain, now time.Time) error {
			return writeTrain(w, p, t, now, e.width())
		},
		table: writeTrainList,
	}
	cmd := v.command("train [NAME]", "Show ReleaseTrains: each ring's release and where it stands, the ledger of releases",
		`Without NAME, list the ReleaseTrains of the namespace (-n, or the kubeconfig's), or of
every namespace with -A: the channel and its newest release, where the train stands (the
newest release on the move and its ring, or why none moves), its rings and its age.

With NAME, show one train ring by ring: the release each ring runs, where that release
stands there (Rolling, Soaking, Qualified or Failed), how many clusters run it out of those
its rollout upgrades, how many failed and the time left of a soak; what blocks a ring's
rollout for a person to fix, and the regional hubs that do not report (the first 20 runs of
names); where each ring's clusters are (this hub's selection, or its regional hubs). Then
the ledger, newest first: each release's state and why, and where it stands in each ring
it entered. Then the train's conditions.

With -o json or -o yaml, print the object (or a List of them); -o name, -o jsonpath=...
and -o go-template=... print them as kubectl does.

A release that waits for an approval enters the first ring once approved: kubectl cgu
train approve NAME VERSION.`,
		`  kubectl cgu train -n fleet-upgrades
  kubectl cgu train edge-4.16 -n fleet-upgrades
  kubectl cgu train approve edge-4.16 4.16.21 -n fleet-upgrades
  kubectl cgu train -A -o yaml`)
	cmd.AddCommand(newTrainApproveCommand(e))
	return cmd
}

// trainColor colours the state of a release on the train or in a ring: delivered or
// qualified green, on the move cyan, awaiting approval yellow, stopped or failed red.
func trainColor(state string) string {
	switch state {
	case string(ranv1alpha1.ReleaseDelivered), string(ranv1alpha1.RingQualified):
		return ansiGreen
	case string(ranv1alpha1.ReleaseRolling), string(ranv1alpha1.ReleaseWaiting), string(ranv1alpha1.RingSoaking):
		return ansiCyan
	case string(ranv1alpha1.ReleaseAwaitingApproval):
		return ansiYellow
	case string(ranv1alpha1.ReleaseStopped), string(ranv1alpha1.RingFailed):
		return ansiRed
	}
	return ""
}

func writeTrainList(w io.Writer, p painter, items []*ranv1alpha1.ReleaseTrain, namespaces bool, now time.Time) error {
	t := &table{header: []string{"NAME", "CHANNEL", "NEWEST", "PROGRESS", "RINGS", "AGE"}}
	if namespaces {
		t.header = append([]string{"NAMESPACE"}, t.header...)
	}
	for _, tr := range items {
		var row []cell
		if namespaces {
			row = append(row, plain(tr.Namespace))
		}
		t.add(append(row, plain(tr.Name), plain(tr.Spec.Releases.Channel), plain(orDash(tr.Status.Newest)), trainProgress(tr),
			plain(fmt.Sprint(len(tr.Spec.Rings))), plain(age(tr.CreationTimestamp.Time, now)))...)
	}
	return t.write(w, p, "")
}

// trainProgress says in a few words where a train stands: while releases move, the newest
// of them and its ring ("4.16.12 Soaking in lab", and how many more move); otherwise the
// reason of Progressing (AwaitingApproval, Paused, Idle).
func trainProgress(t *ranv1alpha1.ReleaseTrain) cell {
	c := meta.FindStatusCondition(t.Status.Conditions, ranv1alpha1.TrainConditionProgressing)
	switch {
	case c == nil:
		return plain("-")
	case c.Reason != ranv1alpha1.TrainReasonRolling:
		color := ansiYellow
		if c.Reason == ranv1alpha1.TrainReasonIdle {
			color = ""
		}
		return cell{text: c.Reason, color: color}
	}
	var moving []ranv1alpha1.LedgerRelease
	for _, r := range t.Status.Ledger {
		if r.State == ranv1alpha1.ReleaseRolling || r.State == ranv1alpha1.ReleaseWaiting {
			moving = append(moving, r)
		}
	}
	if len(moving) == 0 {
		return cell{text: c.Reason, color: ansiCyan}
	}
	text := whereReleaseIs(t, moving[0])
	if len(moving) > 1 {
		text += fmt.Sprintf(" (+%d more)", len(moving)-1)
	}
	return cell{text: text, color: ansiCyan}
}

// whereReleaseIs says where a release on the move stands: "4.16.12 Soaking in lab", or
// "4.16.12 waits for early".
func whereReleaseIs(t *ranv1alpha1.ReleaseTrain, r ranv1alpha1.LedgerRelease) string {
	if r.State == ranv1alpha1.ReleaseRolling && len(r.Rings) > 0 {
		last := r.Rings[len(r.Rings)-1]
		return fmt.Sprintf("%s %s in %s", r.Version, last.State, last.Name)
	}
	next := 0
	if len(r.Rings) > 0 {
		next = slices.IndexFunc(t.Spec.Rings, func(ring ranv1alpha1.TrainRing) bool { return ring.Name == r.Rings[len(r.Rings)-1].Name }) + 1
	}
	if next <= 0 || next >= len(t.Spec.Rings) {
		return fmt.Sprintf("%s %s", r.Version, r.State)
	}
	return fmt.Sprintf("%s waits for %s", r.Version, t.Spec.Rings[next].Name)
}

// writeTrain writes one train: where its releases come from, its rings, its ledger and its
// conditions; lines wrap at width.
func writeTrain(w io.Writer, p painter, t *ranv1alpha1.ReleaseTrain, now time.Time, width int) error {
	var b strings.Builder
	writeTrainHeader(&b, t, now, width)
	if err := writeTrainRings(&b, p, t, now, width); err != nil {
		return err
	}
	writeLedger(&b, p, t, width)
	writeConditions(&b, t.Status.Conditions, trainConditionOrder, width)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTrainHeader(b *strings.Builder, t *ranv1alpha1.ReleaseTrain, now time.Time, width int) {
	field(b, "Name", t.Namespace+"/"+t.Name)
	rel := t.Spec.Releases
	source := "newest " + orDash(t.Status.Newest)
	switch {
	case len(rel.Versions) > 0:
		source += fmt.Sprintf(" of the %s named by hand, paths in channel %s", words.Plural(len(rel.Versions), "version"), rel.Channel)
	case t.Status.CheckedAt != nil:
		every := "1h"
		if rel.CheckInterval != nil {
			every = words.Duration(rel.CheckInterval.Duration)
		}
		source += fmt.Sprintf(" in channel %s, read %s (every %s)", rel.Channel, ago(t.Status.CheckedAt.Time, now), every)
	default:
		source += " in channel " + rel.Channel + ", not read yet"
	}
	field(b, "Releases", source)
	if a := t.Spec.Approval; a != nil {
		approval := "not required"
		if a.Required {
			approval = "required; approved: " + orDash(strings.Join(a.Approved, ", "))
		}
		b.WriteString(strings.Join(wrapWords(fmt.Sprintf("%-*s", fieldWidth-1, "Approval:"), approval, width), "\n") + "\n")
	}
	if t.Spec.Paused {
		field(b, "Paused", "yes: no release enters a ring; running rollouts go on")
	}
}

// writeTrainRings writes each ring in the spec's order: the release it runs and where that
// stands there; under them, what blocks a ring's rollout and the regional hubs that do not
// report; then where each ring's clusters are.
func writeTrainRings(b *strings.Builder, p painter, t *ranv1alpha1.ReleaseTrain, now time.Time, width int) error {
	b.WriteString("\nRings:\n")
	tb := &table{header: []string{"RING", "RELEASE", "STATE", "COMPLETE", "FAILED", "SOAK LEFT"}}
	var notes []string
	for _, ring := range t.Spec.Rings {
		rs := ringStatus(t, ring.Name)
		tb.add(ringRow(t, ring, rs, now)...)
		if rs.Message != "" {
			notes = append(notes, ringNote(p, "Ring "+ring.Name+" blocked:", rs.Message, width))
		}
		if len(rs.Unreachable) > 0 {
			notes = append(notes, ringNote(p, "Ring "+ring.Name+" held, not reporting:",
				words.Abbreviate(rs.Unreachable, "hub", unreachableShown), width))
		}
	}
	if err := tb.write(b, p, "  "); err != nil {
		return err
	}
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	b.WriteString("\nClusters of the rings:\n")
	names := 0
	for _, ring := range t.Spec.Rings {
		names = max(names, utf8.RuneCountInString(ring.Name))
	}
	for _, ring := range t.Spec.Rings {
		b.WriteString(strings.Join(wrapWords(fmt.Sprintf("  %-*s ", names, ring.Name), ringWhere(ring), width), "\n") + "\n")
	}
	return nil
}

// ringRow is a ring's row: its release and where that stands there.
func ringRow(t *ranv1alpha1.ReleaseTrain, ring ranv1alpha1.TrainRing, rs ranv1alpha1.RingStatus, now time.Time) []cell {
	row := []cell{plain(ring.Name), plain(orDash(rs.Release))}
	lr := ledgerRing(t, rs.Release, ring.Name)
	if lr == nil {
		return append(row, plain("-"), plain("-"), plain("-"), plain("-"))
	}
	failed := plain(fmt.Sprint(lr.Failed))
	if lr.Failed > 0 {
		failed.color = ansiRed
	}
	return append(row, cell{text: string(lr.State), color: trainColor(string(lr.State))}, plain(fmt.Sprintf("%d/%d", lr.Complete, lr.Clusters)),
		failed, plain(soakLeft(ring, lr, now)))
}

// ringNote is a line under the rings, a label in yellow and a text that wraps under itself.
func ringNote(p painter, label, text string, width int) string {
	prefix := "  " + label
	lines := wrapWords(prefix, text, width)
	lines[0] = "  " + p.paint(ansiYellow, label) + lines[0][len(prefix):]
	return strings.Join(lines, "\n")
}

// ringStatus is what status.rings says of a ring; empty before the train wrote it.
func ringStatus(t *ranv1alpha1.ReleaseTrain, ring string) ranv1alpha1.RingStatus {
	for _, rs := range t.Status.Rings {
		if rs.Name == ring {
			return rs
		}
	}
	return ranv1alpha1.RingStatus{Name: ring}
}

// ledgerRing is the ledger's record of a release in a ring, nil when it has none.
func ledgerRing(t *ranv1alpha1.ReleaseTrain, version, ring string) *ranv1alpha1.LedgerRing {
	for i := range t.Status.Ledger {
		r := &t.Status.Ledger[i]
		if r.Version != version {
			continue
		}
		for j := range r.Rings {
			if r.Rings[j].Name == ring {
				return &r.Rings[j]
			}
		}
	}
	return nil
}

// soakLeft is the time left of a release's soak in a ring: the ring's soak less the time
// since it began soaking, "-" when it does not soak.
func soakLeft(ring ranv1alpha1.TrainRing, lr *ranv1alpha1.LedgerRing, now time.Time) string {
	if lr.State != ranv1alpha1.RingSoaking || lr.SoakingSince == nil {
		return "-"
	}
	var soak time.Duration
	if s := ring.Qualification.Soak; s != nil {
		soak = s.Duration
	}
	return words.Duration(soak - now.Sub(lr.SoakingSince.Time))
}

// ringWhere says where a ring's clusters are: its regional hubs, or this hub's selection.
func ringWhere(ring ranv1alpha1.TrainRing) string {
	if len(ring.Hubs) > 0 {
		return words.Abbreviate(ring.Hubs, "hub", whereShown)
	}
	var parts []string
	if len(ring.Placement) > 0 {
		names := make([]string, len(ring.Placement))
		for i, pl := range ring.Placement {
			names[i] = pl.Name
			if pl.Namespace != "" {
				names[i] = pl.Namespace + "/" + pl.Name
			}
		}
		parts = append(parts, words.Abbreviate(names, "placement", whereShown))
	}
	if s := ring.ClusterSelector; s != nil {
		if len(s.ClusterSets) > 0 {
			parts = append(parts, words.Abbreviate(s.ClusterSets, "cluster set", whereShown))
		}
		if len(s.MatchLabels)+len(s.MatchExpressions) > 0 {
			parts = append(parts, labelsText(ranv1alpha1.ClusterLabelSelector{MatchLabels: s.MatchLabels, MatchExpressions: s.MatchExpressions}))
		}
	}
	return "this hub: " + orDash(strings.Join(parts, "; "))
}

// labelsText writes a label selector as kubectl does, its requirements ", " apart so that a
// line may wrap between them.
func labelsText(s ranv1alpha1.ClusterLabelSelector) string {
	ls := s.LabelSelector()
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return metav1.FormatLabelSelector(&ls)
	}
	reqs, _ := sel.Requirements()
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.String()
	}
	return strings.Join(out, ", ")
}

// writeLedger writes the ledger, newest first: each release's version, state and message,
// and under them its rings' states and counts.
func writeLedger(b *strings.Builder, p painter, t *ranv1alpha1.ReleaseTrain, width int) {
	ledger := t.Status.Ledger
	if len(ledger) == 0 {
		b.WriteString("\nLedger: no release found yet\n")
		return
	}
	b.WriteString("\nLedger, newest first:\n")
	shown := ledger[:min(len(ledger), ranv1alpha1.TrainLedgerLimit)]
	versions, states := 0, 0
	for _, r := range shown {
		versions = max(versions, utf8.RuneCountInString(r.Version))
		states = max(states, len(r.State))
	}
	for _, r := range shown {
		head, pad := fmt.Sprintf("  %-*s  ", versions, r.Version), strings.Repeat(" ", states-len(r.State)+1)
		prefix := head + string(r.State) + pad
		lines := wrapWords(prefix, orDash(r.Message), width)
		lines[0] = head + p.paint(trainColor(string(r.State)), string(r.State)) + pad + lines[0][len(prefix):]
		if len(r.Rings) > 0 {
			items, visible := ledgerRings(p, r.Rings)
			lines = append(lines, words.Wrap(strings.Repeat(" ", utf8.RuneCountInString(prefix)), items, visible, width)...)
		}
		b.WriteString(strings.Join(lines, "\n") + "\n")
	}
	if rest := len(ledger) - len(shown); rest > 0 {
		fmt.Fprintf(b, "  ... and %d more: kubectl get train %s -n %s -o yaml\n", rest, t.Name, t.Namespace)
	}
}

// ledgerRings writes a release's rings compactly, "lab Qualified 3/3," "early Failed 1/4 (2
// failed)", with their widths on screen.
func ledgerRings(p painter, rings []ranv1alpha1.LedgerRing) (items []string, visible []int) {
	for i, lr := range rings {
		counts := fmt.Sprintf("%d/%d", lr.Complete, lr.Clusters)
		if lr.Failed > 0 {
			counts += fmt.Sprintf(" (%d failed)", lr.Failed)
		}
		if i < len(rings)-1 {
			counts += ","
		}
		items = append(items, lr.Name+" "+p.paint(trainColor(string(lr.State)), string(lr.State))+" "+counts)
		visible = append(visible, utf8.RuneCountInString(lr.Name+" "+string(lr.State)+" "+counts))
	}
	return items, visible
}

type trainApproveOptions struct {
	*env
	ahead bool
}

func newTrainApproveCommand(e *env) *cobra.Command {
	o := &trainApproveOptions{env: e}
	cmd := &cobra.Command{
		Use:   "approve NAME VERSION",
		Short: "Let a release that waits for an approval into a ReleaseTrain's first ring",
		Long: `Approve a release of a ReleaseTrain that requires approval (spec.approval.required): add
VERSION to spec.approval.approved, with a patch that keeps the approvals given at the same
time. The release stops waiting and enters the first ring once that ring is free; from there
qualification moves it on. Who may approve is who may patch the ReleaseTrain; the output
names you as the API server knows you. Under GitOps, when Git lists spec.approval.approved,
add the release there instead: self-heal would take this approval back.

Refused (exit code 2) when the train does not require approval, or when its ledger does not
hold VERSION as AwaitingApproval: the message says what the ledger shows. With --ahead,
approve a release the train has not found yet, so that it enters the first ring as soon as
the channel offers it. Approving a release approved already changes nothing.`,
		Example: `  kubectl cgu train approve edge-4.16 4.16.21 -n fleet-upgrades
  kubectl cgu train approve edge-4.16 4.16.22 --ahead -n fleet-upgrades`,
		Args: nameAndVersion,
		RunE: runE(o.run),
	}
	cmd.Flags().BoolVar(&o.ahead, "ahead", false, "Approve a release the train has not found yet, newer than every release it took")
	return cmd
}

// nameAndVersion accepts exactly the arguments NAME and VERSION.
func nameAndVersion(cmd *cobra.Command, args []string) error {
	if len(args) != 2 {
		return usageError("NAME and VERSION expected, got %s: %s NAME VERSION", words.Plural(len(args), "argument"), cmd.CommandPath())
	}
	return nil
}

func (o *trainApproveOptions) run(ctx context.Context, args []string) error {
	c, namespace, err := o.client()
	if err != nil {
		return err
	}
	name, version := namespace+"/"+args[0], args[1]
	a, err := control.ApproveRelease(ctx, c, client.ObjectKey{Namespace: namespace, Name: args[0]}, version, o.ahead)
	var refusal *control.RefusedError
	switch {
	case apierrors.IsNotFound(err):
		return &exitError{code: ExitNotFound, err: fmt.Errorf("ReleaseTrain %s not found", name)}
	case errors.As(err, &refusal):
		return usageError("%w", refusal)
	case err != nil:
		return err
	case a.Already:
		_, err = fmt.Fprintf(o.IOStreams.Out, "Already approved %s for %s\n", version, name)
	default:
		_, err = fmt.Fprintf(o.IOStreams.Out, "Approved %s for %s as %s\n", version, name, a.By)
	}
	return err
}
