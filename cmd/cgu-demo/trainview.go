package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/pkg/words"
	"github.com/cgu-operator/cgu-operator/tests/harness"
)

// draw prints what changed since the last frame: when the train took a step (a release found,
// entering a ring, soaking, judged, delivered or stopped), the step and the whole view; in
// between, a line for each ring whose rollout's counts moved.
func (td *trainDemo) draw(before *ranv1alpha1.ReleaseTrain, s trainSnapshot) {
	stamp := fmt.Sprintf("[%s, %s real]", at(s.now), clock(time.Since(td.start)))
	steps := changes(before, s.train)
	if len(steps) > 0 {
		td.term.step("%s %s", stamp, steps[0])
		for _, line := range steps[1:] {
			fmt.Fprintln(td.term.w, td.term.style(bold, "    "+line))
		}
		fmt.Fprint(td.term.w, trainView(s))
	}
	for _, rs := range s.train.Status.Rings {
		line, ok := progress(s, rs)
		if !ok {
			continue
		}
		if len(steps) > 0 {
			td.term.printed["ring-"+rs.Name] = line // the view shows it
			continue
		}
		td.term.printOnce("ring-"+rs.Name, line, "    %s %s", stamp, line)
	}
}

// progress writes the counts of a ring whose release rolls out: the ledger's, which sum the
// hubs', then each hub's.
func progress(s trainSnapshot, rs ranv1alpha1.RingStatus) (string, bool) {
	r := ledgerRelease(s.train, rs.Release)
	if r == nil {
		return "", false
	}
	lr := ledgerRing(r, rs.Name)
	if lr == nil || lr.State != ranv1alpha1.RingRolling {
		return "", false
	}
	return fmt.Sprintf("%s %s: %d/%d run it, %d failed (%s)", rs.Name, rs.Release, lr.Complete, lr.Clusters, lr.Failed, byHub(s, rs)), true
}

// changes says what happened to the train between two of its statuses, in the order it
// happens: for each release, oldest first, its finding, each ring it entered and where it
// stands there, and then its own state once it is no longer rolling out.
func changes(before, after *ranv1alpha1.ReleaseTrain) []string {
	var out []string
	ledger := after.Status.Ledger
	for i := len(ledger) - 1; i >= 0; i-- {
		r := &ledger[i]
		var old *ranv1alpha1.LedgerRelease
		if before != nil {
			old = ledgerRelease(before, r.Version)
		}
		if old == nil {
			out = append(out, fmt.Sprintf("%s found in %s", r.Version, after.Spec.Releases.Channel))
			old = &ranv1alpha1.LedgerRelease{}
		}
		for _, lr := range r.Rings {
			was := ledgerRing(old, lr.Name)
			if was == nil {
				out = append(out, fmt.Sprintf("%s entered ring %s", r.Version, lr.Name))
				was = &ranv1alpha1.LedgerRing{State: ranv1alpha1.RingRolling}
			}
			if lr.State != was.State {
				out = append(out, ringStep(after, r.Version, lr))
			}
		}
		if r.State != old.State && r.State != ranv1alpha1.ReleaseRolling {
			state := strings.ToLower(string(r.State))
			out = append(out, fmt.Sprintf("%s %s: %s", r.Version, state, strings.TrimPrefix(r.Message, state+": ")))
		}
	}
	return out
}

// ringStep writes a release's new state in a ring.
func ringStep(t *ranv1alpha1.ReleaseTrain, version string, lr ranv1alpha1.LedgerRing) string {
	switch lr.State {
	case ranv1alpha1.RingSoaking:
		soak := time.Duration(0)
		if spec := ringSpec(t, lr.Name); spec != nil {
			soak = soakOf(spec)
		}
		return fmt.Sprintf("%s soaks in ring %s for %s: %d of %d clusters run it", version, lr.Name, words.Duration(soak), lr.Complete, lr.Clusters)
	case ranv1alpha1.RingQualified:
		return fmt.Sprintf("%s qualified in ring %s", version, lr.Name)
	case ranv1alpha1.RingFailed:
		return fmt.Sprintf("%s failed ring %s", version, lr.Name)
	}
	return fmt.Sprintf("%s is %s in ring %s", version, lr.State, lr.Name)
}

// trainView writes the train as it stands: each ring with the release it runs or last ran,
// the release's state there, its clusters in all (the ledger's, which sum the hubs'
// feedback) and by regional hub; then the ledger, newest first.
func trainView(s trainSnapshot) string {
	var b strings.Builder
	t := s.train
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "    RING\tHUBS\tRELEASE\tSTATE\tRUN IT\tFAILED\tBY HUB")
	for _, rs := range t.Status.Rings {
		spec := ringSpec(t, rs.Name)
		if spec == nil {
			continue
		}
		hubs := strings.Join(spec.Hubs, ", ")
		r := ledgerRelease(t, rs.Release)
		var lr *ranv1alpha1.LedgerRing
		if r != nil {
			lr = ledgerRing(r, rs.Name)
		}
		if lr == nil {
			fmt.Fprintf(w, "    %s\t%s\t-\tidle\t-\t-\t-\n", rs.Name, hubs)
			continue
		}
		fmt.Fprintf(w, "    %s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", rs.Name, hubs, rs.Release, ringState(s, spec, rs, lr),
			lr.Complete, lr.Clusters, budget(lr.Failed, spec.Qualification.MaxFailed), byHub(s, rs))
	}
	_ = w.Flush()
	for _, rs := range t.Status.Rings {
		if rs.Message != "" {
			fmt.Fprintf(&b, "    ring %s is blocked: %s\n", rs.Name, rs.Message)
		}
	}
	b.WriteString("    LEDGER, newest first\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, r := range t.Status.Ledger {
		fmt.Fprintf(w, "    %s\t%s\t%s\n", r.Version, r.State, r.Message)
		fmt.Fprintf(w, "    \t\t%s\n", ledgerLine(r))
	}
	_ = w.Flush()
	return b.String()
}

// budget writes a ring's failed clusters and the budget its qualification allows.
func budget(failed int, allowed int32) string {
	if allowed == 0 {
		return fmt.Sprintf("%d, none allowed", failed)
	}
	return fmt.Sprintf("%d of %d allowed", failed, allowed)
}

// ringState writes where a release stands in a ring: its state, a soak's time left, and the
// hubs that do not report.
func ringState(s trainSnapshot, spec *ranv1alpha1.TrainRing, rs ranv1alpha1.RingStatus, lr *ranv1alpha1.LedgerRing) string {
	state := string(lr.State)
	if lr.State == ranv1alpha1.RingSoaking && lr.SoakingSince != nil {
		state += fmt.Sprintf(", %s left", words.Duration(lr.SoakingSince.Add(soakOf(spec)).Sub(s.now)))
	}
	if len(rs.Unreachable) > 0 {
		state += fmt.Sprintf(", %s not reporting", strings.Join(rs.Unreachable, ", "))
	}
	return state
}

// byHub writes what each regional hub of a ring reports of its rollout: the feedback of its
// ManifestWork.
func byHub(s trainSnapshot, rs ranv1alpha1.RingStatus) string {
	spec := ringSpec(s.train, rs.Name)
	if spec == nil {
		return ""
	}
	parts := make([]string, 0, len(spec.Hubs))
	for _, hub := range spec.Hubs {
		pt, ok := s.reports[rs.Rollout][hub]
		switch {
		case !ok || !pt.Reported:
			parts = append(parts, hub+" -")
		case pt.Failed > 0:
			parts = append(parts, fmt.Sprintf("%s %d/%d, %d failed", hub, pt.Complete, pt.Total-pt.Held, pt.Failed))
		default:
			parts = append(parts, fmt.Sprintf("%s %d/%d", hub, pt.Complete, pt.Total-pt.Held))
		}
	}
	return strings.Join(parts, "; ")
}

// ledgerLine writes a release's way through the rings, on the demo clock.
func ledgerLine(r ranv1alpha1.LedgerRelease) string {
	parts := []string{"found " + at(r.FoundAt.Time)}
	for _, lr := range r.Rings {
		var when string
		switch {
		case lr.DecidedAt != nil:
			when = at(lr.DecidedAt.Time)
		case lr.SoakingSince != nil:
			when = "since " + at(lr.SoakingSince.Time)
		default:
			when = "since " + at(lr.StartedAt.Time)
		}
		part := fmt.Sprintf("%s %s %s (%d/%d", lr.Name, lr.State, when, lr.Complete, lr.Clusters)
		if lr.Failed > 0 {
			part += fmt.Sprintf(", %d failed", lr.Failed)
		}
		parts = append(parts, part+")")
	}
	return strings.Join(parts, "; ")
}

// ending prints the train as it ended and how long each release took on the demo clock, and
// returns the exit code: 0 when the newest release was delivered.
func (td *trainDemo) ending(s trainSnapshot) int {
	t := s.train
	last := harness.Epoch
	for _, r := range t.Status.Ledger {
		for _, lr := range r.Rings {
			if lr.DecidedAt != nil && lr.DecidedAt.After(last) {
				last = lr.DecidedAt.Time
			}
		}
	}
	td.term.step("The train as it ended: %s on the demo clock after it was created (%s real)",
		words.Duration(last.Sub(harness.Epoch)), clock(time.Since(td.start)))
	fmt.Fprint(td.term.w, trainView(s))
	total := 0
	for _, r := range td.hubs {
		total += len(r.clusters)
	}
	ledger := t.Status.Ledger
	for i := len(ledger) - 1; i >= 0; i-- {
		fmt.Fprintf(td.term.w, "    %s\n", releaseEnding(ledger[i], total))
	}
	newest := ledger[0]
	if newest.State != ranv1alpha1.ReleaseDelivered {
		td.term.fail("%s %s", newest.Version, newest.Message)
		return 1
	}
	fmt.Fprintln(td.term.w, td.term.style(green, fmt.Sprintf("The train delivered %s.", newest.Version)))
	return 0
}

// releaseEnding writes how a release ended: where, when, on how many of the clusters.
func releaseEnding(r ranv1alpha1.LedgerRelease, total int) string {
	running, failed := 0, 0
	end := r.FoundAt.Time
	for _, lr := range r.Rings {
		running += lr.Complete
		failed += lr.Failed
		if lr.DecidedAt != nil && lr.DecidedAt.After(end) {
			end = lr.DecidedAt.Time
		}
	}
	line := fmt.Sprintf("%s %s %s after it was found", r.Version, strings.ToLower(string(r.State)), words.Duration(end.Sub(r.FoundAt.Time)))
	if len(r.Rings) > 0 {
		line += fmt.Sprintf(": %d of the %d clusters took it, %d failed", running, total, failed)
	}
	return line
}

// at writes a moment of the demo clock.
func at(t time.Time) string {
	return t.UTC().Format(clockLayout)
}

// keepTrain says how to reach the hubs the demo leaves running.
func (t *terminal) keepTrain(path string, key client.ObjectKey, regional map[string]string, dashboards []string) {
	t.step("The global hub, the regional hubs and their dashboards keep running until Ctrl-C. In another terminal:")
	fmt.Fprintf(t.w, "    export KUBECONFIG=%s   # the global hub\n", path)
	fmt.Fprintf(t.w, "    kubectl get train -n %s\n", key.Namespace)
	fmt.Fprintf(t.w, "    kubectl get manifestwork -A -l %s=%s\n", train.LabelTrain, names.LabelValue(key.Name))
	fmt.Fprintln(t.w, "    make plugin && PATH=$PWD/bin:$PATH")
	fmt.Fprintf(t.w, "    kubectl cgu train %s -n %s\n", key.Name, key.Namespace)
	hubs := make([]string, 0, len(regional))
	for hub := range regional {
		hubs = append(hubs, hub)
	}
	sort.Strings(hubs)
	for _, hub := range hubs {
		fmt.Fprintf(t.w, "    KUBECONFIG=%s kubectl get mcu,cgu -n %s   # %s\n", regional[hub], key.Namespace, hub)
	}
	if len(dashboards) > 0 {
		fmt.Fprintf(t.w, "    dashboards: %s\n", strings.Join(dashboards, ", "))
	}
}
