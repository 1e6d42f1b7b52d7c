package rbac_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// grant is one verb on one resource of one API group ("" for the core group); a
// subresource is written resource/subresource, as RBAC writes it.
type grant struct{ group, resource, verb string }

func (g grant) String() string { return fmt.Sprintf("%s/%s %s", g.group, g.resource, g.verb) }

// implicit are the grants the suite does not hold to being used: the API server, or an
// admission plugin or webhook acting on a request, checks them, or a request uses them only
// on a timing the suite does not control. Each says which and why.
var implicit = map[grant]string{
	{"ran.openshift.io", "clustergroupupgrades/finalizers", "update"}:           "OpenShift's OwnerReferencesPermissionEnforcement admission plugin checks it when the operator sets a controller reference with blockOwnerDeletion to a ClusterGroupUpgrade; the hub test world does not run that plugin",
	{"lcm.openshift.io", "imagebasedgroupupgrades/finalizers", "update"}:        "the same plugin, for the ClusterGroupUpgrades an ImageBasedGroupUpgrade owns",
	{"ran.openshift.io", "managedclustersupgrades/finalizers", "update"}:        "the same plugin, for what a ManagedClustersUpgrade owns",
	{"ran.openshift.io", "releasetrains/finalizers", "update"}:                  "the same plugin, for the ManagedClustersUpgrades a ReleaseTrain owns",
	{"events.k8s.io", "events", "patch"}:                                        "the event recorder patches the series of an event repeated within minutes, which a scenario does or not depending on its timing (a pass whose status write conflicts records its events again)",
	{"cluster.open-cluster-management.io", "managedclustersets/bind", "create"}: "Open Cluster Management's admission webhook checks it when the operator creates a ManagedClusterSetBinding; the hub test world runs no webhook",
}

// notExercised are grants the code needs that no scenario of this suite uses yet, each with
// the code path that sends it. The list is exact: a grant that a scenario comes to use must
// leave it, so that it only shrinks.
var notExercised = map[grant]string{
	{"", "configmaps", "update"}:                                         "Copy mode updates a copied ConfigMap whose source changed (copyConfigMap)",
	{"", "events", "patch"}:                                              "the leader-election recorder patches a repeated core Event",
	{"policy.open-cluster-management.io", "policies", "patch"}:           "an enforce copy whose policy changed, once the change is approved (policies.Writer applyCopy)",
	{"view.open-cluster-management.io", "managedclusterviews", "update"}: "a view whose scope changed: the InstallPlan view follows the plan a Subscription names (spokeobjects.Writer.EnsureView)",
}

// usedRequests records the requests the operator sends, as grants.
type usedRequests struct {
	mu   sync.Mutex
	used map[grant]int
	info *request.RequestInfoFactory
}

func newUsedRequests() *usedRequests {
	return &usedRequests{used: map[grant]int{}, info: &request.RequestInfoFactory{
		APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}}
}

// wrap records each request that goes through the transport.
func (u *usedRequests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if ri, err := u.info.NewRequestInfo(req); err == nil && ri.IsResourceRequest {
			resource := ri.Resource
			if ri.Subresource != "" {
				resource += "/" + ri.Subresource
			}
			u.mu.Lock()
			u.used[grant{ri.APIGroup, resource, ri.Verb}]++
			if ri.Verb == "watch" && req.URL.Query().Get("sendInitialEvents") == "true" {
				// A streaming list: the watch starts with the objects, which needs list too.
				u.used[grant{ri.APIGroup, resource, "list"}]++
			}
			u.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// unused are the grants of rules no recorded request used, neither implicit nor listed as not
// exercised, and the listed ones a request did use.
func (u *usedRequests) unused(rules []rbacv1.PolicyRule) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					k := grant{g, res, v}
					_, isImplicit := implicit[k]
					_, isGap := notExercised[k]
					switch {
					case isGap && u.used[k] > 0:
						out = append(out, k.String()+" (now used: take it off notExercised)")
					case !isImplicit && !isGap && u.used[k] == 0:
						out = append(out, k.String())
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// expectEveryGrantUsed fails on a grant of the ClusterRole or the leader-election Role that
// the operator never used in the suite: a grant is kept only when the code needs it.
func expectEveryGrantUsed() {
	role := &rbacv1.ClusterRole{}
	readManifest("role.yaml", role)
	lease := &rbacv1.Role{}
	readManifest("leader_election_role.yaml", lease)
	unused := used.unused(slices.Concat(role.Rules, lease.Rules))
	Expect(unused).To(BeEmpty(), "granted, never used by the operator in this suite:\n%s", strings.Join(unused, "\n"))
}
