package preview_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/hubapi"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
	"github.com/cgu-operator/cgu-operator/pkg/preview"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

const ns = "ztp"

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		ranv1alpha1.AddToScheme, policyv1.AddToScheme, clusterv1.Install, clusterv1beta1.Install, workv1alpha1.Install,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

func cluster(name, fleet string) *clusterv1.ManagedCluster {
	return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fleet": fleet}}}
}

// policy is a root policy placed on the clusters, each with its compliance.
func policy(namespace, name string, compliance map[string]policyv1.ComplianceState, labels map[string]string) *policyv1.Policy {
	p := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels}}
	for c, st := range compliance {
		p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: c, ClusterNamespace: c, ComplianceState: st})
	}
	return p
}

func fleet() []client.Object {
	return []client.Object{
		cluster("sno-1", "a"), cluster("sno-2", "a"), cluster("sno-3", "a"), cluster("sno-4", "a"), cluster("sno-5", "a"),
		cluster("other-1", "b"),
		policy("policies", "upgrade", map[string]policyv1.ComplianceState{
			"sno-1": policyv1.NonCompliant, "sno-2": policyv1.NonCompliant, "sno-3": policyv1.Compliant,
			"sno-4": policyv1.NonCompliant, "sno-5": policyv1.NonCompliant,
		}, nil),
		// A replica and an enforce copy with the same name are not candidates.
		policy("sno-1", "upgrade", map[string]policyv1.ComplianceState{"sno-1": policyv1.NonCompliant},
			map[string]string{preview.LabelRootPolicy: "policies.upgrade"}),
		policy(ns, "upgrade", map[string]policyv1.ComplianceState{"sno-2": policyv1.NonCompliant},
			map[string]string{preview.LabelParentPolicy: "upgrade"}),
	}
}

func cgu(mutate func(*ranv1alpha1.ClusterGroupUpgrade)) *ranv1alpha1.ClusterGroupUpgrade {
	c := &ranv1alpha1.ClusterGroupUpgrade{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upgrade"},
		Spec: ranv1alpha1.ClusterGroupUpgradeSpec{
			ClusterLabelSelectors: []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "a"}}},
			ManagedPolicies:       []string{"upgrade"},
			Enable:                ptr.To(false),
			RemediationStrategy:   &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 2, Canaries: []string{"sno-5"}},
		},
	}
	if mutate != nil {
		mutate(c)
	}
	return c
}

func TestBuild(t *testing.T) {
	placement := &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "extra"}}
	decision := &clusterv1beta1.PlacementDecision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "extra-1", Labels: map[string]string{clusterv1beta1.PlacementLabel: "extra"}},
	}
	decision.Status.Decisions = []clusterv1beta1.ClusterDecision{{ClusterName: "other-1"}}
	cases := map[string]struct {
		cgu   *ranv1alpha1.ClusterGroupUpgrade
		extra []client.Object
		want  preview.Result
	}{
		"canaries first, then batches of maxConcurrency, the compliant cluster left out": {
			cgu: cgu(nil),
			want: preview.Result{Plan: plan.Plan{
				Batches:          []plan.Batch{{Canary: true, Clusters: []string{"sno-5"}}, {Clusters: []string{"sno-1", "sno-2"}}, {Clusters: []string{"sno-4"}}},
				SkippedCompliant: []string{"sno-3"},
			}},
		},
		"placement decisions come after the other selection fields": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				c.Spec.PlacementRef = &ranv1alpha1.LocalPlacementReference{Name: "extra"}
				c.Spec.RemediationStrategy = &ranv1alpha1.RemediationStrategySpec{MaxConcurrency: 0}
			}),
			extra: []client.Object{placement, decision},
			// other-1 is in no managed policy's status: no policy is placed on it, and TALM
			// leaves such a cluster out of the plan.
			want: preview.Result{Plan: plan.Plan{
				Batches:          []plan.Batch{{Clusters: []string{"sno-1", "sno-2", "sno-4", "sno-5"}}},
				SkippedCompliant: []string{"sno-3"}, Unplaced: []string{"other-1"},
			}},
		},
		"a missing placement": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				c.Spec.PlacementRef = &ranv1alpha1.LocalPlacementReference{Name: "gone"}
			}),
			want: problem(ranv1alpha1.ReasonPlacementNotFound, "spec.placementRef: Placement ztp/gone does not exist"),
		},
		"an unknown cluster": {
			cgu:  cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.Clusters = []string{"sno-1", "nowhere"} }),
			want: named(problem(ranv1alpha1.ReasonClusterNotFound, "Clusters not found on the hub: nowhere"), "nowhere"),
		},
		"nothing selected": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				c.Spec.ClusterLabelSelectors = []ranv1alpha1.ClusterLabelSelector{{MatchLabels: map[string]string{"fleet": "z"}}}
			}),
			want: problem(ranv1alpha1.ReasonNoClustersSelected, "The spec selects no cluster"),
		},
		"a malformed selector": {
			cgu:  cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.ClusterSelector = []string{"a=b=c"} }),
			want: problem(ranv1alpha1.ReasonInvalidClusterSelector, `Invalid selector: spec.clusterSelector[0] "a=b=c": more than one "="`),
		},
		"a missing policy": {
			cgu:  cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.ManagedPolicies = []string{"upgrade", "operators"} }),
			want: named(problem(ranv1alpha1.ReasonNotAllManagedPoliciesExist, "Managed policies not found on the selected clusters: operators"), "operators"),
		},
		"a canary that is not selected": {
			cgu:  cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.RemediationStrategy.Canaries = []string{"other-1"} }),
			want: problem(ranv1alpha1.ReasonInvalidCanaries, "Canaries that are not selected clusters: other-1"),
		},
		// TALM's blocking-mechanisms and dependency-order scenarios apply the replicas before
		// any root status lists their clusters: TALM finds a policy through them.
		"policies whose status does not list the cluster yet, found through their replicas": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				c.Spec.ClusterLabelSelectors, c.Spec.Clusters, c.Spec.RemediationStrategy.Canaries = nil, []string{"sno-2"}, nil
				c.Spec.ManagedPolicies = []string{"operators", "after"}
			}),
			extra: replicated(false),
			want:  preview.Result{Plan: plan.Plan{Batches: []plan.Batch{{Clusters: []string{"sno-2"}}}}},
		},
		"a dependency out of order among policies found through their replicas": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				c.Spec.ClusterLabelSelectors, c.Spec.Clusters, c.Spec.RemediationStrategy.Canaries = nil, []string{"sno-2"}, nil
				c.Spec.ManagedPolicies = []string{"after", "operators"}
			}),
			extra: replicated(true),
			want: problem(ranv1alpha1.ReasonPolicyDependencyOrder,
				"Managed policy after depends on operators, which comes after it in spec.managedPolicies"),
		},
		"a replica in the namespace of a cluster not selected places nothing": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				c.Spec.ClusterLabelSelectors, c.Spec.Clusters, c.Spec.RemediationStrategy.Canaries = nil, []string{"sno-4"}, nil
				c.Spec.ManagedPolicies = []string{"operators"}
			}),
			extra: replicated(false),
			want: named(problem(ranv1alpha1.ReasonNotAllManagedPoliciesExist,
				"Managed policies not found on the selected clusters: operators (policies/operators is placed on none of them)"), "operators"),
		},
		"a missing ManifestWork template": {
			cgu:  cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.ManifestWorkTemplates = []string{"mwrs"} }),
			want: problem(ranv1alpha1.ReasonNotAllManifestTemplatesExist, "ManifestWorkReplicaSets not found in ztp: mwrs"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(append(fleet(), tc.extra...)...).Build()
			got, err := preview.Build(context.Background(), r, tc.cgu)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}

// replicated are two root policies whose status lists no cluster yet, and their replicas in
// sno-2's namespace; with dependsOn, "after" depends on "operators".
func replicated(dependsOn bool) []client.Object {
	operators := policy("policies", "operators", nil, nil)
	after := policy("policies", "after", nil, nil)
	if dependsOn {
		after.Spec.Dependencies = []policyv1.PolicyDependency{{TypeMeta: metav1.TypeMeta{Kind: policyv1.Kind}, Name: "operators", Compliance: policyv1.Compliant}}
	}
	out := []client.Object{operators, after}
	for _, root := range []string{"operators", "after"} {
		out = append(out, policy("sno-2", "policies."+root, nil, map[string]string{preview.LabelRootPolicy: "policies." + root}))
	}
	return out
}

func problem(reason, message string) preview.Result {
	return preview.Result{Problem: &rollout.Problem{Reason: reason, Message: message}}
}

// named adds the names a problem lists, for its events.
func named(r preview.Result, names ...string) preview.Result {
	r.Problem.Names = names
	return r
}

func TestReadFrozen(t *testing.T) {
	started := metav1.NewTime(time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC))
	p := plan.Plan{Batches: []plan.Batch{{Canary: true, Clusters: []string{"sno-5"}}, {Clusters: []string{"sno-1", "sno-2"}}}}
	records := plan.Records(p, ns, "upgrade")
	records[0].Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &started, FinishedAt: &started,
		Clusters: []ranv1alpha1.ClusterProgress{{Name: "sno-5", State: ranv1alpha1.ClusterCompleted}}}
	records[1].Status = ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: &started,
		Clusters: []ranv1alpha1.ClusterProgress{{Name: "sno-1", State: ranv1alpha1.ClusterInProgress, CurrentPolicy: "upgrade"}}}
	other := plan.Records(plan.Plan{Batches: []plan.Batch{{Clusters: []string{"x"}}}}, ns, "other")[0]
	objects := []client.Object{&other}
	for i := range records {
		objects = append(objects, &records[i])
	}
	r := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(objects...).WithStatusSubresource(objects...).Build()

	cases := map[string]struct {
		cgu          *ranv1alpha1.ClusterGroupUpgrade
		wantStarted  bool
		wantStates   map[string]ranv1alpha1.ClusterState
		wantNotDone  []string
		wantFrozenAt time.Time
	}{
		"started: the records' plan and progress": {
			cgu:         cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Status.StartedAt = &started }),
			wantStarted: true,
			wantStates: map[string]ranv1alpha1.ClusterState{
				"sno-5": ranv1alpha1.ClusterCompleted, "sno-1": ranv1alpha1.ClusterInProgress, "sno-2": ranv1alpha1.ClusterPending,
			},
			wantNotDone:  []string{"sno-1", "sno-2"},
			wantFrozenAt: started.Time,
		},
		"not started": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Name = "fresh" }),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := preview.ReadFrozen(context.Background(), r, tc.cgu)
			if err != nil {
				t.Fatalf("ReadFrozen: %v", err)
			}
			if got.Started != tc.wantStarted || !got.FrozenAt.Equal(tc.wantFrozenAt) {
				t.Fatalf("ReadFrozen: started %v at %v, want %v at %v", got.Started, got.FrozenAt, tc.wantStarted, tc.wantFrozenAt)
			}
			if !tc.wantStarted {
				return
			}
			if diff := cmp.Diff(p, got.Plan); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			for c, want := range tc.wantStates {
				if st := got.State(c); st != want {
					t.Errorf("State(%s) = %s, want %s", c, st, want)
				}
			}
			if diff := cmp.Diff(tc.wantNotDone, got.NotCompleted()); diff != "" {
				t.Errorf("NotCompleted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadFrozenMissingBatch(t *testing.T) {
	p := plan.Plan{Batches: []plan.Batch{{Clusters: []string{"a"}}, {Clusters: []string{"b"}}}}
	records := plan.Records(p, ns, "upgrade")
	started := metav1.NewTime(time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC))
	c := cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Status.StartedAt = &started })
	if _, err := preview.FromRecords(c, records[1:]); err == nil {
		t.Fatal("FromRecords without the record of batch 1: no error")
	}
}

func TestGatherOnAHubWithoutOptionalAPIs(t *testing.T) {
	subscription := `{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy","spec":{"object-templates":[` +
		`{"complianceType":"musthave","objectDefinition":{"apiVersion":"operators.coreos.com/v1alpha1","kind":"Subscription",` +
		`"metadata":{"name":"ptp","namespace":"openshift-ptp"},"spec":{"name":"ptp-operator","channel":"stable","installPlanApproval":"Manual"}}}]}}`
	operators := policy("policies", "operators", map[string]policyv1.ComplianceState{"sno-1": policyv1.NonCompliant}, nil)
	operators.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{{ObjectDefinition: runtime.RawExtension{Raw: []byte(subscription)}}}
	withOperators := func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.ManagedPolicies = []string{"upgrade", "operators"} }
	cases := map[string]struct {
		cgu      *ranv1alpha1.ClusterGroupUpgrade
		unserved hubapi.Unserved
		want     *rollout.Problem
	}{
		"a plain rollout needs no optional API": {
			cgu: cgu(nil), unserved: hubapi.Unserved{Views: true, Actions: true, Works: true, SetBindings: true},
		},
		"ManifestWork templates on a hub without ManifestWorks": {
			cgu:      cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.ManifestWorkTemplates = []string{"mwrs"} }),
			unserved: hubapi.Unserved{Works: true},
			want: &rollout.Problem{Reason: ranv1alpha1.ReasonNotAllManifestTemplatesExist,
				Message: "spec.manifestWorkTemplates needs APIs the hub does not serve: manifestworks.work.open-cluster-management.io/v1 (Open Cluster Management work), " +
					"manifestworkreplicasets.work.open-cluster-management.io/v1alpha1 (Open Cluster Management work)"},
		},
		"pre-caching on a hub without views": {
			cgu:      cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) { c.Spec.PreCaching = true }),
			unserved: hubapi.Unserved{Views: true},
			want: &rollout.Problem{Reason: ranv1alpha1.ReasonHubAPINotServed,
				Message: "spec.preCaching needs APIs the hub does not serve: managedclusterviews.view.open-cluster-management.io/v1beta1 (Red Hat Advanced Cluster Management foundation)"},
		},
		"a Manual Subscription to approve on a hub without actions": {
			cgu: cgu(withOperators), unserved: hubapi.Unserved{Actions: true},
			want: &rollout.Problem{Reason: ranv1alpha1.ReasonHubAPINotServed,
				Message: "InstallPlan approval for the managed policies' Manual Subscriptions needs APIs the hub does not serve: " +
					"managedclusteractions.action.open-cluster-management.io/v1beta1 (Red Hat Advanced Cluster Management foundation)"},
		},
		"a Manual Subscription spec.operatorUpgrades does not choose": {
			cgu: cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
				withOperators(c)
				c.Spec.OperatorUpgrades = &ranv1alpha1.OperatorUpgrades{Exclude: []ranv1alpha1.SubscriptionRef{{Namespace: "openshift-ptp", Name: "ptp"}}}
			}),
			unserved: hubapi.Unserved{Actions: true},
		},
		"a Manual Subscription on a hub that serves views and actions": {
			cgu: cgu(withOperators), unserved: hubapi.Unserved{Works: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(append(fleet(), operators)...).Build()
			got, err := preview.GatherIn(context.Background(), r, tc.cgu, preview.Scope{Unserved: tc.unserved})
			if err != nil {
				t.Fatalf("GatherIn: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Invalid); diff != "" {
				t.Errorf("Invalid (-want +got):\n%s", diff)
			}
			if tc.want == nil && len(got.Plan.Batches) == 0 {
				t.Errorf("no plan for a valid spec")
			}
		})
	}
}

// The spec's progressive growth becomes the plan's: stated steps (counts and percentages),
// a factor, the default sizes, and what an unhealthy stage does.
func TestGrowthOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *ranv1alpha1.ProgressiveSpec
		want plan.Growth
	}{
		{"absent", nil, plan.DefaultGrowth},
		{"only onUnhealthy", &ranv1alpha1.ProgressiveSpec{OnUnhealthy: ranv1alpha1.UnhealthyStop},
			plan.Growth{Steps: plan.DefaultGrowth.Steps, Stop: true}},
		{"steps", &ranv1alpha1.ProgressiveSpec{Steps: []intstr.IntOrString{intstr.FromString("0.5%"), intstr.FromInt32(20), intstr.FromString("25%")}},
			plan.Growth{Steps: []plan.Step{{Percent: 0.5}, {Count: 20}, {Percent: 25}}}},
		{"a factor", &ranv1alpha1.ProgressiveSpec{Factor: ptr.To[int32](3), OnUnhealthy: ranv1alpha1.UnhealthyReset},
			plan.Growth{Factor: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, *preview.GrowthOf(tc.spec)); diff != "" {
				t.Fatalf("growth (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnresolvedHubTemplatesRemembered: the replicas of a policy with a hub template are read
// once a HubTemplateRecheck however many passes ask, and again once its spec changes.
func TestUnresolvedHubTemplatesRemembered(t *testing.T) {
	root := policy("policies", "site", map[string]policyv1.ComplianceState{"sno-1": policyv1.NonCompliant}, nil)
	root.Generation = 1
	tmpl := &policyv1.PolicyTemplate{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy","spec":{"x":"{{hub fromConfigMap \"\" \"site\" \"k\" hub}}"}}`)}}
	root.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{tmpl}
	replica := policy("sno-1", "policies.site", nil, map[string]string{preview.LabelRootPolicy: "policies.site"})
	replica.Spec.PolicyTemplates = []*policyv1.PolicyTemplate{tmpl.DeepCopy()}
	lists := 0
	r := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(append(fleet(), root, replica)...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*policyv1.PolicyList); ok {
				o := &client.ListOptions{}
				o.ApplyOptions(opts)
				if o.LabelSelector != nil && !o.LabelSelector.Empty() && strings.Contains(o.LabelSelector.String(), preview.LabelRootPolicy+"=") {
					lists++
				}
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	now := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	scope := preview.Scope{Unresolved: &preview.UnresolvedCache{Now: func() time.Time { return now }}}
	c := cgu(func(c *ranv1alpha1.ClusterGroupUpgrade) {
		c.Spec.ClusterLabelSelectors, c.Spec.Clusters, c.Spec.RemediationStrategy.Canaries = nil, []string{"sno-1"}, nil
		c.Spec.ManagedPolicies = []string{"site"}
	})
	gather := func() *rollout.Problem {
		t.Helper()
		f, err := preview.GatherIn(context.Background(), r, c, scope)
		if err != nil {
			t.Fatal(err)
		}
		return f.Invalid
	}
	for range 3 {
		if p := gather(); p == nil || !p.Invalid || p.Recheck != preview.HubTemplateRecheck {
			t.Fatalf("got %+v, want the invalid policy, looked at again in a minute", p)
		}
	}
	if lists != 1 {
		t.Fatalf("the replicas were read %d times in three passes, want once", lists)
	}
	now = now.Add(preview.HubTemplateRecheck)
	gather()
	root.Generation = 2
	if err := r.Update(context.Background(), root); err != nil {
		t.Fatal(err)
	}
	gather()
	if lists != 3 {
		t.Fatalf("read %d times, want again after a minute and again for a new spec", lists)
	}
}
