package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/story"
)

// addClusterStoryFlag registers --managed-cluster, which turns the status of a rollout into
// the story of one of its clusters. kubectl's own --cluster names a kubeconfig cluster.
func addClusterStoryFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVar(target, "managed-cluster", "",
		"Show one managed cluster's story in the rollout instead: its state and since when, its policies in order, "+
			"what it waits for, its ClusterVersion, its events and its time against the rollout's median "+
			"(-o json or yaml: the story, not the ClusterGroupUpgrade)")
}

// writeClusterStory reads and writes the story of cluster in cgu's rollout: for people, or
// as JSON or YAML with output. A cluster the rollout does not select is a usage error.
func writeClusterStory(ctx context.Context, w io.Writer, p painter, r client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade,
	cluster string, now time.Time, output string) error {
	f, err := story.GatherFor(ctx, r, cgu, cluster, now)
	var s story.Story
	if err == nil {
		s, err = story.Tell(f)
	}
	var notSelected *story.NotSelectedError
	switch {
	case errors.As(err, &notSelected):
		return usageError("%w", err)
	case err != nil:
		return hubError(err)
	case output != outputTable:
		return printData(w, output, s)
	}
	return writeStory(w, p, s, now)
}

// writeStory writes a cluster's story for people, its fields aligned as the status's.
func writeStory(w io.Writer, p painter, s story.Story, now time.Time) error {
	var b strings.Builder
	field(&b, "Cluster", s.Cluster+" in "+s.Upgrade)
	field(&b, "Batch", storyBatch(s.Batch, now))
	state := p.state(string(s.State))
	if s.Since != nil {
		state += " since " + ago(s.Since.Time, now)
	}
	field(&b, "State", state)
	if s.Reason != "" {
		field(&b, "Reason", reasonAndMessage(s.Reason, strings.TrimPrefix(s.Explanation, s.Reason)))
	}
	field(&b, "Waiting for", s.WaitsFor)
	field(&b, "Time", s.Timing.Text)
	if s.Precache != "" {
		field(&b, "Pre-caching", s.Precache)
	}
	if s.Backup != "" {
		field(&b, "Backup", s.Backup)
	}
	writeSpoke(&b, s.Spoke, now)
	if err := writeStoryPolicies(&b, p, s.Policies); err != nil {
		return err
	}
	if err := writeStoryEvents(&b, p, s.Events, now); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// storyBatch is "3 of 5 (canary), started 4m ago" and where the rollout is, when elsewhere.
func storyBatch(bt story.Batch, now time.Time) string {
	line := fmt.Sprintf("%d", bt.Index)
	if bt.Of > 0 {
		line += fmt.Sprintf(" of %d", bt.Of)
	}
	if bt.Canary {
		line += " (canary)"
	}
	if bt.Stage > 0 {
		line += fmt.Sprintf(", stage %d", bt.Stage)
	}
	if bt.StartedAt != nil {
		line += ", started " + ago(bt.StartedAt.Time, now)
	}
	if bt.FinishedAt != nil {
		line += ", ended " + ago(bt.FinishedAt.Time, now)
	}
	switch {
	case bt.Current == 0:
		line += "; the rollout has not started"
	case bt.Current != bt.Index:
		line += fmt.Sprintf("; the rollout is on batch %d", bt.Current)
	}
	return line
}

// writeSpoke writes what the cluster's ClusterVersion reports.
func writeSpoke(b *strings.Builder, sp story.Spoke, now time.Time) {
	if !sp.Answered {
		field(b, "Spoke", "no ClusterVersion: "+sp.Problem)
		return
	}
	line := "desired " + orDash(sp.Desired)
	if u := sp.Latest; u != nil {
		line += fmt.Sprintf("; latest update %s %s, started %s", u.Version, u.State, ago(u.StartedAt.Time, now))
		if u.CompletedAt != nil {
			line += ", completed " + ago(u.CompletedAt.Time, now)
		}
	}
	field(b, "Spoke", line)
	if sp.Progressing != "" {
		field(b, "Progressing", sp.Progressing)
	}
	if sp.Failing != "" {
		field(b, "Failing", sp.Failing)
	}
}

// writeStoryPolicies writes the policies in order with their compliance and what the
// cluster does with them.
func writeStoryPolicies(b *strings.Builder, p painter, policies []story.Policy) error {
	if len(policies) == 0 {
		return nil
	}
	b.WriteString("\nPolicies, in order:\n")
	t := &table{header: []string{"POLICY", "COMPLIANCE", "ON THE CLUSTER"}}
	for _, pol := range policies {
		name := pol.Name
		if pol.Namespace != "" {
			name = pol.Namespace + "/" + pol.Name
		}
		compliance := pol.Compliance
		switch {
		case pol.Step:
			compliance = "-"
		case !pol.Placed:
			compliance = "-"
		case compliance == "":
			compliance = "not reported"
		}
		t.add(plain(name), cell{text: compliance, color: complianceColor(compliance)}, plain(orDash(strings.Join(policyNotes(pol), ", "))))
	}
	return t.write(b, p, "  ")
}

// policyNotes say what the cluster does with a policy.
func policyNotes(pol story.Policy) []string {
	var notes []string
	if pol.Step {
		notes = append(notes, "ManifestWork step")
	}
	if pol.Current {
		notes = append(notes, "current")
	}
	if pol.Enforced {
		notes = append(notes, "enforced")
	}
	if pol.SoftTimedOut {
		notes = append(notes, "passed on its soft timeout")
	}
	if pol.CompliantBefore {
		notes = append(notes, "compliant before the rollout: not enforced")
	}
	if !pol.Step && !pol.Placed && pol.Problem == "" {
		notes = append(notes, "not placed on the cluster")
	}
	if pol.Problem != "" {
		notes = append(notes, "its replica "+pol.Problem)
	}
	return notes
}

func complianceColor(compliance string) string {
	switch compliance {
	case "Compliant":
		return ansiGreen
	case "NonCompliant":
		return ansiYellow
	}
	return ""
}

// writeStoryEvents writes the events that name the cluster, newest first.
func writeStoryEvents(b *strings.Builder, p painter, events []story.Event, now time.Time) error {
	if len(events) == 0 {
		b.WriteString("\nEvents: no event of the rollout names the cluster\n")
		return nil
	}
	b.WriteString("\nEvents, newest first:\n")
	t := &table{header: []string{"LAST SEEN", "TYPE", "REASON", "MESSAGE"}}
	for _, e := range events {
		kind := plain(e.Type)
		if e.Type == corev1.EventTypeWarning {
			kind.color = ansiYellow
		}
		t.add(plain(ago(e.Time, now)), kind, plain(e.Reason), plain(e.Message))
	}
	return t.write(b, p, "  ")
}
