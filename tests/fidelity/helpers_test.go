package fidelity_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/tests/world"
)

const (
	// settleTimeout bounds how long a mode may take to reach a wanted compliance and go quiet.
	settleTimeout = 90 * time.Second
	// quiet is how long a hub's policy status must stay the same to count as settled: the
	// real controllers react to each other's writes within a second or two.
	quiet = 3 * time.Second
	poll  = 250 * time.Millisecond
)

// placePolicy creates a policy on a hub, placed on the scenario's fleet.
func placePolicy(ctx context.Context, hub *world.Hub, p *policyv1.Policy) {
	selector := metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: fleetName}}
	ExpectWithOffset(1, hub.PlacePolicy(ctx, p, selector)).To(Succeed())
}

// setRemediation switches a root policy's remediationAction; the propagator replicates it.
func setRemediation(ctx context.Context, hub *world.Hub, name string, action policyv1.RemediationAction) {
	root := &policyv1.Policy{}
	ExpectWithOffset(1, hub.Client.Get(ctx, client.ObjectKey{Namespace: policyNS, Name: name}, root)).To(Succeed())
	patch := client.MergeFrom(root.DeepCopy())
	root.Spec.RemediationAction = action
	ExpectWithOffset(1, hub.Client.Patch(ctx, root, patch)).To(Succeed())
}

// policyStatus is what a hub shows of a root policy: its status and the status of each of
// its replicated policies, by cluster.
type policyStatus struct {
	Root       policyv1.PolicyStatus
	Replicated map[string]policyv1.PolicyStatus
}

// readStatus reads the scenario's root policy status and its replicated policies' from a hub.
func readStatus(ctx context.Context, g Gomega, hub *world.Hub) policyStatus {
	root := &policyv1.Policy{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: policyNS, Name: policyName}, root)).To(Succeed())
	out := policyStatus{Root: root.Status, Replicated: map[string]policyv1.PolicyStatus{}}
	for _, c := range clusters {
		replicated := &policyv1.Policy{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: c.name, Name: policyNS + "." + policyName}, replicated)).To(Succeed())
		out.Replicated[c.name] = replicated.Status
	}
	return out
}

// compliance returns each cluster's compliance as the root policy shows it.
func (s policyStatus) compliance() map[string]policyv1.ComplianceState {
	out := map[string]policyv1.ComplianceState{}
	for _, c := range s.Root.Status {
		out[c.ClusterName] = c.ComplianceState
	}
	return out
}

// messages returns the history messages of a cluster's replicated policy, newest first.
func (s policyStatus) messages(cluster string) []string {
	var out []string
	for _, d := range s.Replicated[cluster].Details {
		for _, h := range d.History {
			out = append(out, h.Message)
		}
	}
	return out
}

// String shows the compliance and the history messages of every cluster, for reports.
func (s policyStatus) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "root: %s\n", s.Root.ComplianceState)
	for _, c := range clusters {
		fmt.Fprintf(&b, "%s: %s\n", c.name, s.Replicated[c.name].ComplianceState)
		for _, m := range s.messages(c.name) {
			fmt.Fprintf(&b, "  %s\n", m)
		}
	}
	return b.String()
}

// settle waits until the scenario's root policy on a mode's hub shows want for every cluster
// and nothing of the policy's status, timestamps included, changed for the quiet period; it
// returns that status.
func settle(ctx context.Context, m *mode, want map[string]policyv1.ComplianceState) policyStatus {
	var (
		last  policyStatus
		since time.Time
	)
	EventuallyWithOffset(1, func(g Gomega) {
		current := readStatus(ctx, g, m.hub)
		if !equality.Semantic.DeepEqual(current, last) {
			last, since = current, time.Now()
		}
		g.Expect(current.compliance()).To(Equal(want), func() string {
			return fmt.Sprintf("%s mode:\n%s%s", m.name, current, describeUpdates(ctx, m))
		})
		g.Expect(time.Since(since)).To(BeNumerically(">=", quiet), "%s mode still changing", m.name)
	}).WithContext(ctx).WithTimeout(settleTimeout).WithPolling(poll).Should(Succeed())
	return last
}

// asideTimesAndEvents leaves out of a comparison what differs from run to run: the times of
// history entries and the names of the events that carried them.
var asideTimesAndEvents = cmpopts.IgnoreFields(policyv1.ComplianceHistory{}, "LastTimestamp", "EventName")

// describeUpdates shows the ClusterVersion history of every cluster of a mode, for failure
// messages.
func describeUpdates(ctx context.Context, m *mode) string {
	var b strings.Builder
	for _, c := range clusters {
		cv, err := m.spokes.clusterVersion(ctx, c.name)
		if err != nil {
			fmt.Fprintf(&b, "%s ClusterVersion: %v\n", c.name, err)
			continue
		}
		fmt.Fprintf(&b, "%s ClusterVersion history:", c.name)
		for _, h := range cv.Status.History {
			fmt.Fprintf(&b, " %s %s;", h.State, h.Version)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// updateSteps returns a ClusterVersion's history without times: state, version and image of
// each update, newest first.
func updateSteps(cv *configv1.ClusterVersion) []configv1.UpdateHistory {
	out := make([]configv1.UpdateHistory, len(cv.Status.History))
	for i, h := range cv.Status.History {
		out[i] = configv1.UpdateHistory{State: h.State, Version: h.Version, Image: h.Image}
	}
	return out
}
