package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/train"
	"github.com/cgu-operator/cgu-operator/pkg/words"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/sim"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/graphserver"
	"github.com/cgu-operator/cgu-operator/tests/world/hubagent"
)

// The train demo (--kind=train) runs what tests/trains runs: a global hub and two regional
// hubs, each a harness of its own (kube-apiserver, etcd, propagator, placement controller,
// simulated clusters, and cgu-operator on a fake clock), the regional hubs managed clusters
// of the global hub, each connected to it by a work agent. A ReleaseTrain on the global hub
// takes the channel's newest release through two rings:
//
//   - pilot: a fifth of hub-east's clusters, where a release soaks for pilotSoak;
//   - regions: the rest of hub-east and all of hub-west, where it soaks for regionsSoak with
//     at most regionsBudget clusters failed.
//
// The pilot is part of hub-east, not all of it, so that no cluster is in both rings and the
// regions ring has a rollout on each hub. While the first release soaks in the pilot, the
// demo publishes nextRelease: it enters the pilot behind the first, which moves on to the
// regions, so that both rings run at once.
const (
	trainName      = "edge-4.16"
	trainNamespace = "demo"
	hubEast        = "hub-east"
	hubWest        = "hub-west"
	ringPilot      = "pilot"
	ringRegions    = "regions"
	// ringLabel is the clusters' label the rings select by; its values are the rings' names.
	ringLabel = "ring"
	// betweenRelease is the release of the harness's channel between From and To.
	betweenRelease = "4.16.11"
	// nextRelease is the release the demo publishes part way.
	nextRelease = "4.16.13"
	// trainClusters is the clusters of each regional hub unless --clusters says otherwise.
	trainClusters = 20
	pilotSoak     = 4 * time.Hour
	regionsSoak   = 8 * time.Hour
	regionsBudget = 2
	checkInterval = 30 * time.Minute
	// trainLimit bounds the demo's real time.
	trainLimit = 20 * time.Minute
	// repoke is how long the demo waits for the train's pass after a poke before it pokes
	// again.
	repoke = 5 * time.Second
	// pokeAnnotation is the annotation a poke changes.
	pokeAnnotation = "demo.cgu-operator.io/poke"
	// clockLayout writes the demo clock: the harness's clock starts on a Saturday morning.
	clockLayout = "Mon 15:04"
)

// trainDemo is the train demo's hubs and where it stands.
type trainDemo struct {
	opts    options
	term    *terminal
	log     logr.Logger
	logPath string
	global  *harness.Env
	hubs    []*regionalHub
	key     client.ObjectKey
	// dashboards are the hubs' dashboards, dashboardHubs the hubs they show.
	dashboards    []*servedDashboard
	dashboardHubs []string
	// start is when the train was created, in real time.
	start time.Time
	// published is true once nextRelease is in the channel.
	published bool
	// pokes counts the pokes. poked is the train's resourceVersion the last one left, pokedAt
	// when it was made: the demo clock moves on only once a pass changed the train since.
	pokes   int
	poked   string
	pokedAt time.Time
	// waits says what the demo last saw the train wait for.
	waits string
}

// regionalHub is a regional hub and the work agent that connects it to the global hub.
type regionalHub struct {
	name  string
	env   *harness.Env
	agent *hubagent.Agent
	// clusters are its clusters, stalled those whose upgrades never finish.
	clusters []string
	stalled  map[string]bool
}

// checkTrain refuses the options the train demo does not take, and a --stall that is not a
// number of hub-west's clusters.
func (o options) checkTrain() error {
	switch {
	case o.fail != "":
		return errors.New("--fail is for --kind=ibgu; a train's clusters stall with --stall=N")
	case o.mode != "":
		return errors.New("--mode is for --kind=cgu; a train's rings run in batches")
	case o.timeout != 0:
		return errors.New("--timeout is for --kind=cgu; a train's stalled clusters time out after their rollout's 2h per update")
	}
	if n, err := strconv.Atoi(o.stall); o.stall != "" && (err != nil || n < 0 || n > o.clusters) {
		return fmt.Errorf("--stall with --kind=train is how many of hub-west's %d clusters stall, got %q", o.clusters, o.stall)
	}
	return nil
}

// stalls is how many of hub-west's clusters stall in the train demo.
func (o options) stalls() int {
	n, _ := strconv.Atoi(o.stall)
	return n
}

// runTrain plays the train demo and returns the exit code: 0 when the newest release was
// delivered.
func runTrain(ctx context.Context, opts options, out *terminal) int {
	td, err := startTrain(ctx, opts, out)
	if td != nil {
		defer td.stop(out)
	}
	if err != nil {
		out.fail("%v", err)
		return 1
	}
	code, err := td.play(ctx)
	if err != nil {
		out.fail("%v", err)
		return 1
	}
	if opts.keep {
		td.keep(ctx, out)
	}
	return code
}

// several lets the hubs' operators run in one process.
func several(o *operator.Options) { o.SkipNameValidation = true }

// startTrain starts the hubs, their clusters and work agents, and creates the train. The
// returned demo is to be stopped even on error.
func startTrain(ctx context.Context, opts options, out *terminal) (*trainDemo, error) {
	log, logPath, err := openLog()
	if err != nil {
		return nil, err
	}
	td := &trainDemo{opts: opts, term: out, log: log.WithName("cgu-demo"), logPath: logPath,
		key: client.ObjectKey{Namespace: trainNamespace, Name: trainName}}
	out.step("Starting the global hub: kube-apiserver, etcd, policy propagator, placement controller and cgu-operator")
	if td.global, err = harness.StartWith(ctx, log.WithName("global"), several); err != nil {
		return td, fmt.Errorf("starting the global hub (see %s): %w", logPath, err)
	}
	if err := td.global.Hub.BindClusterSet(ctx, trainNamespace); err != nil {
		return td, err
	}
	for _, name := range []string{hubEast, hubWest} {
		if err := td.startRegional(ctx, log.WithName(name), name); err != nil {
			return td, err
		}
	}
	td.startDashboards(ctx)
	return td, td.create(ctx)
}

// startDashboards serves kubectl cgu's dashboard of each hub: the global hub's on the demo's
// port, where its Trains tab draws the train, and each regional hub's on the ports after it,
// where its rollouts run.
func (td *trainDemo) startDashboards(ctx context.Context) {
	port := td.opts.dashboardPort
	if port < 0 {
		return
	}
	serve := func(h *world.Hub, name, label string) {
		if d := serveDashboard(ctx, h.Config, port, label, td.term); d != nil {
			td.dashboards = append(td.dashboards, d)
			td.dashboardHubs = append(td.dashboardHubs, name)
		}
		if port > 0 {
			port++
		}
	}
	serve(td.global.Hub, "the global hub", "Dashboard of the global hub (its Trains tab)")
	for _, r := range td.hubs {
		serve(r.env.Hub, r.name, "Dashboard of "+r.name)
	}
}

// startRegional starts a regional hub with its clusters, makes it a managed cluster of the
// global hub, and connects it with a work agent.
func (td *trainDemo) startRegional(ctx context.Context, log logr.Logger, name string) error {
	td.term.step("Starting regional hub %s: its own kube-apiserver, etcd, controllers and cgu-operator", name)
	env, err := harness.StartWith(ctx, log, several)
	if err != nil {
		return fmt.Errorf("starting %s (see %s): %w", name, td.logPath, err)
	}
	r := &regionalHub{name: name, env: env, stalled: map[string]bool{}}
	td.hubs = append(td.hubs, r)
	if err := env.Hub.BindClusterSet(ctx, trainNamespace); err != nil {
		return err
	}
	if err := td.joinFleet(ctx, r); err != nil {
		return fmt.Errorf("joining %s's clusters: %w", name, err)
	}
	if err := td.global.Hub.AddClusters(ctx, world.Cluster{Name: name, Labels: map[string]string{"role": "regional-hub"}}); err != nil {
		return err
	}
	td.term.note("    %s is a managed cluster of the global hub; a work agent applies the global hub's ManifestWorks for it", name)
	r.agent, err = hubagent.Start(context.WithoutCancel(ctx), td.global.Hub, name, env.Hub.Config, hubagent.Options{Logger: log.WithName("work-agent")})
	return err
}

// joinFleet joins a regional hub's simulated clusters on harness.From: on hub-east the first
// fifth (at least one) in ring pilot and the others in ring regions; on hub-west all in ring
// regions, the first --stall of them stalling.
func (td *trainDemo) joinFleet(ctx context.Context, r *regionalHub) error {
	n := td.opts.clusters
	pilot, stalls := 0, 0
	if r.name == hubEast {
		pilot = max(1, n/5)
	}
	if r.name == hubWest {
		stalls = td.opts.stalls()
	}
	clusters := make([]world.Cluster, n)
	spokes := make([]sim.SpokeSpec, n)
	rings := map[string][]string{}
	var stalled []string
	for i := range n {
		name := fmt.Sprintf("%s-%0*d", strings.TrimPrefix(r.name, "hub-"), max(2, len(strconv.Itoa(n))), i+1)
		ring := ringRegions
		if i < pilot {
			ring = ringPilot
		}
		rings[ring] = append(rings[ring], name)
		if i < stalls {
			r.stalled[name] = true
			stalled = append(stalled, name)
		}
		r.clusters = append(r.clusters, name)
		spokes[i] = sim.SpokeSpec{Name: name, Version: harness.From, Channel: harness.Channel,
			Behaviour: sim.Behaviour{Duration: td.opts.upgradeDuration, Stall: r.stalled[name]}}
		clusters[i] = world.Cluster{Name: name, Labels: map[string]string{ringLabel: ring},
			Claims: map[string]string{sim.ClaimVersion: harness.From, sim.ClaimControlPlaneTopology: sim.Topology(spokes[i])}}
	}
	line := fmt.Sprintf("    %d simulated clusters on %s in %s, upgrades taking %s each", n, harness.From, harness.Channel, td.opts.upgradeDuration)
	for _, ring := range []string{ringPilot, ringRegions} {
		if len(rings[ring]) > 0 {
			line += fmt.Sprintf("; ring %s: %s", ring, words.Abbreviate(rings[ring], "cluster", listedRuns))
		}
	}
	if len(stalled) > 0 {
		line += fmt.Sprintf("; never finishing an upgrade (--stall): %s", words.Abbreviate(stalled, "cluster", listedRuns))
	}
	td.term.note("%s", line)
	if err := r.env.Hub.AddClusters(ctx, clusters...); err != nil {
		return err
	}
	return r.env.Sim.AddSpokes(spokes...)
}

// spec is the demo's train.
func (td *trainDemo) spec() *ranv1alpha1.ReleaseTrain {
	ring := func(name string, hubs []string, soak time.Duration, budget int32) ranv1alpha1.TrainRing {
		return ranv1alpha1.TrainRing{
			Name: name, Hubs: hubs,
			ClusterSelector: &ranv1alpha1.MCUClusterSelector{MatchLabels: map[string]string{ringLabel: name}},
			UpgradeStrategy: ranv1alpha1.MCUUpgradeStrategy{MaxConcurrency: max(td.opts.maxConcurrency, 1)},
			Qualification:   ranv1alpha1.RingQualification{Soak: &metav1.Duration{Duration: soak}, MaxFailed: budget},
		}
	}
	return &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: td.key.Namespace, Name: td.key.Name},
		Spec: ranv1alpha1.ReleaseTrainSpec{
			Releases: ranv1alpha1.TrainReleases{Channel: harness.Channel, CheckInterval: &metav1.Duration{Duration: checkInterval}},
			Rings: []ranv1alpha1.TrainRing{
				ring(ringPilot, []string{hubEast}, pilotSoak, 0),
				ring(ringRegions, []string{hubEast, hubWest}, regionsSoak, regionsBudget),
			},
		},
	}
}

// create creates the train on the global hub and says what it is.
func (td *trainDemo) create(ctx context.Context) error {
	t := td.spec()
	td.term.step("Creating ReleaseTrain %s/%s on the global hub at %s on the demo clock: %s's newest release, read every %s",
		t.Namespace, t.Name, at(td.global.Clock.Now()), t.Spec.Releases.Channel, words.Duration(checkInterval))
	for _, r := range t.Spec.Rings {
		q := r.Qualification
		line := fmt.Sprintf("    ring %-8s on %s, the clusters labelled %s=%s, %d at once; qualified after a soak of %s",
			r.Name, strings.Join(r.Hubs, " and "), ringLabel, r.Name, r.UpgradeStrategy.MaxConcurrency, words.Duration(q.Soak.Duration))
		if q.MaxFailed > 0 {
			line += fmt.Sprintf(" with at most %d failed", q.MaxFailed)
		}
		fmt.Fprintln(td.term.w, line)
	}
	if err := td.global.Hub.Client.Create(ctx, t); err != nil {
		return fmt.Errorf("creating the train: %w", err)
	}
	td.start = time.Now()
	return nil
}

// play draws the train frame by frame, moving the demo clock on whenever only time can move
// the train on, until every release it took ended; it returns the exit code.
func (td *trainDemo) play(ctx context.Context) (int, error) {
	ticker := time.NewTicker(frameRate)
	defer ticker.Stop()
	var before *ranv1alpha1.ReleaseTrain
	for {
		s, err := td.read(ctx)
		if err != nil {
			return 1, err
		}
		td.draw(before, s)
		before = s.train
		if td.over(s) {
			return td.ending(s), nil
		}
		if err := td.pace(ctx, s); err != nil {
			return 1, err
		}
		if time.Since(td.start) > trainLimit {
			return 1, fmt.Errorf("the train did not end within %s; the demo waited for %s (see %s)", trainLimit, td.waits, td.logPath)
		}
		select {
		case <-ctx.Done():
			return 1, fmt.Errorf("interrupted; the demo waited for %s", td.waits)
		case <-ticker.C:
		}
	}
}

// trainSnapshot is what one frame shows, and what the demo paces its clock by.
type trainSnapshot struct {
	// now is the demo clock.
	now   time.Time
	train *ranv1alpha1.ReleaseTrain
	// reports are what each regional hub reports of each rollout, by rollout and hub: the
	// feedback of its ManifestWork on the global hub, as the train reads it.
	reports map[string]map[string]train.Part
	// regional are the rollouts as they stand on each regional hub, by hub and name, and
	// upgrades their ClusterGroupUpgrades.
	regional map[string]map[string]*ranv1alpha1.ManagedClustersUpgrade
	upgrades map[string]map[string]*ranv1alpha1.ClusterGroupUpgrade
}

func (td *trainDemo) read(ctx context.Context) (trainSnapshot, error) {
	s := trainSnapshot{now: td.global.Clock.Now(), train: &ranv1alpha1.ReleaseTrain{},
		reports: map[string]map[string]train.Part{}, regional: map[string]map[string]*ranv1alpha1.ManagedClustersUpgrade{},
		upgrades: map[string]map[string]*ranv1alpha1.ClusterGroupUpgrade{}}
	if err := td.global.Hub.Client.Get(ctx, td.key, s.train); err != nil {
		return s, fmt.Errorf("reading the train: %w", err)
	}
	var works workv1.ManifestWorkList
	if err := td.global.Hub.Client.List(ctx, &works, client.MatchingLabels(train.Selector(s.train))); err != nil {
		return s, fmt.Errorf("reading the train's ManifestWorks: %w", err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		if s.reports[w.Name] == nil {
			s.reports[w.Name] = map[string]train.Part{}
		}
		s.reports[w.Name][w.Namespace] = train.FromWork(w.Namespace, w, true)
	}
	for _, r := range td.hubs {
		var mcus ranv1alpha1.ManagedClustersUpgradeList
		if err := r.env.Hub.Client.List(ctx, &mcus, client.InNamespace(trainNamespace)); err != nil {
			return s, fmt.Errorf("reading the rollouts of %s: %w", r.name, err)
		}
		s.regional[r.name] = map[string]*ranv1alpha1.ManagedClustersUpgrade{}
		for i := range mcus.Items {
			s.regional[r.name][mcus.Items[i].Name] = &mcus.Items[i]
		}
		var cgus ranv1alpha1.ClusterGroupUpgradeList
		if err := r.env.Hub.Client.List(ctx, &cgus, client.InNamespace(trainNamespace)); err != nil {
			return s, fmt.Errorf("reading the rollouts of %s: %w", r.name, err)
		}
		s.upgrades[r.name] = map[string]*ranv1alpha1.ClusterGroupUpgrade{}
		for i := range cgus.Items {
			s.upgrades[r.name][cgus.Items[i].Name] = &cgus.Items[i]
		}
	}
	return s, nil
}

// pace moves the demo on: it publishes nextRelease once the first release left the pilot's
// rollout behind, and moves the demo clock on when only time can move the train on.
func (td *trainDemo) pace(ctx context.Context, s trainSnapshot) error {
	if !td.published && rolledOut(s.train, ringPilot) {
		if err := td.publish(); err != nil {
			return err
		}
	}
	w := td.wait(s)
	if said := w.String(); said != td.waits {
		td.waits = said
		td.log.Info("Waiting", "for", said, "demoClock", s.now.UTC().Format(time.RFC3339))
	}
	switch {
	case s.train.ResourceVersion == td.poked && time.Since(td.pokedAt) < repoke:
		return nil // the pass after the last poke has not shown yet
	case w.busy != "" || w.at.IsZero():
		return nil
	case !w.at.After(s.now):
		return td.poke(ctx, s) // due: the controllers have not seen it yet
	}
	d := w.at.Sub(s.now)
	td.global.Clock.Step(d)
	for _, r := range td.hubs {
		r.env.Clock.Step(d)
	}
	td.term.step("The demo clock moves on %s to %s: %s", words.Duration(d), at(w.at), w.why)
	return td.poke(ctx, s)
}

// rolledOut tells whether a release of the ledger went past its rollout in a ring: it soaks
// there, or was judged.
func rolledOut(t *ranv1alpha1.ReleaseTrain, ring string) bool {
	for _, r := range t.Status.Ledger {
		if lr := ledgerRing(&r, ring); lr != nil && lr.State != ranv1alpha1.RingRolling {
			return true
		}
	}
	return false
}

// publish puts nextRelease in the channel after harness.To, on every hub's update service.
func (td *trainDemo) publish() error {
	g, err := graphserver.NewGraph(harness.Channel).
		Edge(harness.From, betweenRelease, harness.To, nextRelease).
		Edge(betweenRelease, harness.To, nextRelease).
		Edge(harness.To, nextRelease).Build()
	if err != nil {
		return err
	}
	for _, e := range td.envs() {
		if err := e.Graphs.SetGraph(harness.Channel, g); err != nil {
			return fmt.Errorf("publishing %s: %w", nextRelease, err)
		}
	}
	// A cluster asked for nextRelease before its version operator read the update service
	// again refuses it for a while (VersionNotFound), then takes it, as a real one does.
	td.published = true
	td.term.step("%s is published in %s on every hub's update service; the train reads the channel every %s",
		nextRelease, harness.Channel, words.Duration(checkInterval))
	return nil
}

func (td *trainDemo) envs() []*harness.Env {
	out := []*harness.Env{td.global}
	for _, r := range td.hubs {
		out = append(out, r.env)
	}
	return out
}

// waiting is what the train waits for: the soonest moment only the demo clock brings, and
// what it brings; or, while something is under way, what that is.
type waiting struct {
	at   time.Time
	why  string
	busy string
}

func (w *waiting) add(at time.Time, why string) {
	if w.at.IsZero() || at.Before(w.at) {
		w.at, w.why = at, why
	}
}

// String says it for the log.
func (w waiting) String() string {
	if w.busy != "" {
		return "under way: " + w.busy
	}
	if w.at.IsZero() {
		return "nothing"
	}
	return fmt.Sprintf("%s at %s", w.why, w.at.UTC().Format(time.RFC3339))
}

// busy is a waiting on something under way.
func busy(format string, args ...any) waiting {
	return waiting{busy: fmt.Sprintf(format, args...)}
}

// wait says what the train waits for. Only time moves it on when it waits for the end of a
// soak, for its next read of the channel while the published release is unseen, or for a
// deadline of a rollout whose clusters left all stall; not while a rollout runs anything
// else, nor until the train has read where its rollouts stand.
func (td *trainDemo) wait(s trainSnapshot) waiting {
	t := s.train
	if t.Status.ObservedGeneration != t.Generation {
		return busy("the train's pass over its spec")
	}
	var w waiting
	for _, rs := range t.Status.Rings {
		if rs.Rollout == "" {
			continue
		}
		if behind := readBehind(s, rs); behind != "" {
			return busy("the train's reading of %s: %s", rs.Rollout, behind)
		}
		if rs.Ended {
			continue
		}
		rw := td.ringDeadline(s, rs)
		if rw.busy != "" {
			return rw
		}
		w.add(rw.at, rw.why)
	}
	for _, r := range t.Status.Ledger {
		for _, lr := range r.Rings {
			if spec := ringSpec(t, lr.Name); lr.State == ranv1alpha1.RingSoaking && lr.SoakingSince != nil && spec != nil {
				w.add(lr.SoakingSince.Add(soakOf(spec)), fmt.Sprintf("the end of %s's soak in ring %s", r.Version, lr.Name))
			}
		}
	}
	if td.published && ledgerRelease(t, nextRelease) == nil && t.Status.CheckedAt != nil {
		w.add(t.Status.CheckedAt.Add(train.CheckInterval(t)), "the train's next read of "+t.Spec.Releases.Channel)
	}
	return w
}

// readBehind says how the train's ledger differs from a ring's rollout as it stands on the
// regional hubs, empty once the train has read it: the counts the train judges on, and
// whether it ended everywhere. The demo clock waits for it, so that each judgement falls
// at the demo time of what it judges.
func readBehind(s trainSnapshot, rs ranv1alpha1.RingStatus) string {
	spec := ringSpec(s.train, rs.Name)
	r := ledgerRelease(s.train, rs.Release)
	if spec == nil || r == nil || ledgerRing(r, rs.Name) == nil {
		return "not in the ledger yet"
	}
	lr := ledgerRing(r, rs.Name)
	clusters, complete, failed, ended := 0, 0, 0, true
	for _, hub := range spec.Hubs {
		m := s.regional[hub][rs.Rollout]
		if m == nil {
			return "not on " + hub + " yet"
		}
		pt := train.FromMCU(m)
		if !pt.Reported {
			return "no count on " + hub + " yet"
		}
		clusters, complete, failed, ended = clusters+pt.Total-pt.Held, complete+pt.Complete, failed+pt.Failed, ended && pt.Ended
	}
	if lr.Clusters != clusters || lr.Complete != complete || lr.Failed != failed || rs.Ended != ended {
		return fmt.Sprintf("%d/%d, %d failed, ended %t where the hubs say %d/%d, %d failed, ended %t",
			lr.Complete, lr.Clusters, lr.Failed, rs.Ended, complete, clusters, failed, ended)
	}
	return ""
}

// ringDeadline says what a ring's running rollout waits for on its regional hubs where the
// clusters it has left all stall, the soonest of the hubs'; it is busy while the rollout
// runs anything else on some hub.
func (td *trainDemo) ringDeadline(s trainSnapshot, rs ranv1alpha1.RingStatus) waiting {
	var w waiting
	for _, hub := range ringSpec(s.train, rs.Name).Hubs {
		m := s.regional[hub][rs.Rollout]
		if train.FromMCU(m).Ended {
			continue
		}
		rw := td.rolloutDeadline(hub, m, s.upgrades[hub][m.Status.Upgrade])
		if rw.busy != "" {
			return busy("%s on %s: %s", rs.Rollout, hub, rw.busy)
		}
		w.add(rw.at, fmt.Sprintf("%s of %s on %s, whose clusters left stall", rw.why, rs.Rollout, hub))
	}
	return w
}

// rolloutDeadline says what a regional hub's rollout waits for when every cluster it has
// left stalls: its batch's timeout, or once every batch ran, its overall timeout (it watches
// the late clusters until then, as TALM does). It is busy while it upgrades some other
// cluster or has clusters to start. It reads the rollout as the train does, from the
// ManagedClustersUpgrade, and its ClusterGroupUpgrade c only for when it started.
func (td *trainDemo) rolloutDeadline(hub string, m *ranv1alpha1.ManagedClustersUpgrade, c *ranv1alpha1.ClusterGroupUpgrade) waiting {
	n := m.Status.ClustersSummary
	if n == nil {
		return busy("no summary yet")
	}
	if n.PartialUpgrade == 0 {
		if n.Pending == 0 && n.Failed > 0 && c != nil && c.Status.StartedAt != nil {
			return waiting{at: overallDeadline(c), why: "the overall timeout"}
		}
		return busy("%d clusters to start", n.Pending)
	}
	b := m.Status.CurrentBatch
	if b == nil || b.TimeoutAt == nil || b.ClustersNotShown > 0 {
		return busy("%d clusters upgrading", n.PartialUpgrade)
	}
	for _, cl := range b.Clusters {
		running := cl.State == ranv1alpha1.ClusterPending || cl.State == ranv1alpha1.ClusterInProgress
		if running && !td.stalled(hub, cl.Name) {
			return busy("%s upgrading", cl.Name)
		}
	}
	return waiting{at: b.TimeoutAt.Time, why: fmt.Sprintf("the timeout of batch %d", b.Index)}
}

// stalled tells whether a cluster of a regional hub stalls.
func (td *trainDemo) stalled(hub, cluster string) bool {
	for _, r := range td.hubs {
		if r.name == hub {
			return r.stalled[cluster]
		}
	}
	return false
}

// poke annotates the train, and the regional ClusterGroupUpgrades of its rollouts that still
// run, so that their controllers look at them again on the moved clock, as the timers they
// asked for would on a real one.
func (td *trainDemo) poke(ctx context.Context, s trainSnapshot) error {
	td.pokes++
	patch := client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, pokeAnnotation, strconv.Itoa(td.pokes)))
	t := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: td.key.Namespace, Name: td.key.Name}}
	if err := td.global.Hub.Client.Patch(ctx, t, patch); err != nil {
		return fmt.Errorf("poking the train: %w", err)
	}
	td.poked, td.pokedAt = t.ResourceVersion, time.Now()
	for _, r := range td.hubs {
		for _, m := range s.regional[r.name] {
			if m.Status.Upgrade == "" || train.FromMCU(m).Ended {
				continue
			}
			cgu := &ranv1alpha1.ClusterGroupUpgrade{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Status.Upgrade}}
			if err := r.env.Hub.Client.Patch(ctx, cgu, patch); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("poking %s on %s: %w", m.Status.Upgrade, r.name, err)
			}
		}
	}
	return nil
}

// over tells whether the train is done: the published release was found, and every release
// the ledger holds ended.
func (td *trainDemo) over(s trainSnapshot) bool {
	if !td.published || ledgerRelease(s.train, nextRelease) == nil {
		return false
	}
	for _, r := range s.train.Status.Ledger {
		switch r.State {
		case ranv1alpha1.ReleaseDelivered, ranv1alpha1.ReleaseStopped, ranv1alpha1.ReleaseSuperseded:
		default:
			return false
		}
	}
	return true
}

// keep leaves the hubs running for kubectl and the plugin until ctx ends.
func (td *trainDemo) keep(ctx context.Context, out *terminal) {
	path := filepath.Join(os.TempDir(), "cgu-demo.kubeconfig")
	if err := td.global.Hub.WriteKubeconfig(path); err != nil {
		out.fail("writing the kubeconfig: %v", err)
		return
	}
	regional := map[string]string{}
	for _, r := range td.hubs {
		regional[r.name] = filepath.Join(os.TempDir(), "cgu-demo-"+r.name+".kubeconfig")
		if err := r.env.Hub.WriteKubeconfig(regional[r.name]); err != nil {
			out.fail("writing the kubeconfig of %s: %v", r.name, err)
			return
		}
	}
	var urls []string
	for i, d := range td.dashboards {
		urls = append(urls, td.dashboardHubs[i]+" "+d.address())
	}
	out.keepTrain(path, td.key, regional, urls)
	<-ctx.Done()
}

// stop stops the dashboards, the work agents, the regional hubs and the global hub, in that
// order.
func (td *trainDemo) stop(out *terminal) {
	for _, d := range td.dashboards {
		d.stop()
	}
	for _, r := range td.hubs {
		if r.agent != nil {
			r.agent.Stop()
		}
		if err := r.env.Hub.Stop(); err != nil {
			out.fail("stopping %s: %v", r.name, err)
		}
	}
	if td.global != nil {
		if err := td.global.Hub.Stop(); err != nil {
			out.fail("stopping the global hub: %v", err)
		}
	}
	out.note("Logs of the hubs, their operators and the work agents: %s", td.logPath)
}

func ledgerRelease(t *ranv1alpha1.ReleaseTrain, version string) *ranv1alpha1.LedgerRelease {
	for i := range t.Status.Ledger {
		if t.Status.Ledger[i].Version == version {
			return &t.Status.Ledger[i]
		}
	}
	return nil
}

func ledgerRing(r *ranv1alpha1.LedgerRelease, ring string) *ranv1alpha1.LedgerRing {
	for i := range r.Rings {
		if r.Rings[i].Name == ring {
			return &r.Rings[i]
		}
	}
	return nil
}

func ringSpec(t *ranv1alpha1.ReleaseTrain, ring string) *ranv1alpha1.TrainRing {
	for i := range t.Spec.Rings {
		if t.Spec.Rings[i].Name == ring {
			return &t.Spec.Rings[i]
		}
	}
	return nil
}

func soakOf(r *ranv1alpha1.TrainRing) time.Duration {
	if r.Qualification.Soak == nil {
		return 0
	}
	return r.Qualification.Soak.Duration
}
