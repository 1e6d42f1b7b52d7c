package trains_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/harness"
	"github.com/cgu-operator/cgu-operator/tests/harness/suite"
	"github.com/cgu-operator/cgu-operator/tests/world"
	"github.com/cgu-operator/cgu-operator/tests/world/hubagent"
)

// The train suite runs a global hub with the operator and its own simulated clusters, and two
// regional hubs, each with its own API server, propagator, placement controller, simulated
// clusters and operator, registered as managed clusters of the global hub; a work agent
// between the global hub and each regional hub applies the ManifestWorks of the global hub's
// namespace for it into its API server and reports their status back.

func TestTrains(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Release train suite")
}

const (
	settle = 90 * time.Second
	// ns is the trains' namespace, on the global hub and on the regional hubs.
	ns = "trains"
)

// regional is a regional hub and the work agent that connects it to the global hub.
type regional struct {
	name  string
	env   *harness.Env
	agent *hubagent.Agent
}

var (
	global *harness.Env
	east   regional
	west   regional
)

var _ = BeforeSuite(func(ctx SpecContext) {
	log := suite.Logging()
	several := func(o *operator.Options) { o.SkipNameValidation = true }
	var err error
	global, err = harness.StartWith(ctx, log, several)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(global.Hub.Stop()).To(Succeed()) })
	Expect(global.Hub.BindClusterSet(ctx, ns)).To(Succeed())
	east = startRegional(ctx, log.WithName("hub-east"), "hub-east")
	west = startRegional(ctx, log.WithName("hub-west"), "hub-west")
}, NodeTimeout(5*time.Minute))

// startRegional starts a regional hub with its operator, makes it a managed cluster of the
// global hub, and connects it with a work agent.
func startRegional(ctx context.Context, log logr.Logger, name string) regional {
	GinkgoHelper()
	env, err := harness.StartWith(ctx, log, func(o *operator.Options) { o.SkipNameValidation = true })
	Expect(err).NotTo(HaveOccurred())
	Expect(env.Hub.BindClusterSet(ctx, ns)).To(Succeed())
	Expect(global.Hub.AddClusters(ctx, world.Cluster{Name: name, Labels: map[string]string{"role": "regional-hub"}})).To(Succeed())
	agent, err := hubagent.Start(context.WithoutCancel(ctx), global.Hub, name, env.Hub.Config, hubagent.Options{Logger: log.WithName("work-agent")})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		agent.Stop()
		Expect(env.Hub.Stop()).To(Succeed())
	})
	return regional{name: name, env: env, agent: agent}
}

// storedTrain reads a train as stored on the global hub.
func storedTrain(ctx context.Context, t *ranv1alpha1.ReleaseTrain) func(Gomega) *ranv1alpha1.ReleaseTrain {
	return func(g Gomega) *ranv1alpha1.ReleaseTrain {
		out := &ranv1alpha1.ReleaseTrain{}
		g.Expect(global.Hub.Client.Get(ctx, client.ObjectKeyFromObject(t), out)).To(Succeed())
		return out
	}
}

// ledger reads a train's ledger as "version state ring:state,ring:state".
func ledger(ctx context.Context, t *ranv1alpha1.ReleaseTrain) func(Gomega) []string {
	return func(g Gomega) []string { return harness.Ledger(storedTrain(ctx, t)(g)) }
}

// mcuNames lists the ManagedClustersUpgrades of a namespace on a hub.
func mcuNames(ctx context.Context, h *world.Hub) func(Gomega) []string {
	return func(g Gomega) []string {
		var list ranv1alpha1.ManagedClustersUpgradeList
		g.Expect(h.Client.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		var out []string
		for _, m := range list.Items {
			out = append(out, m.Name)
		}
		return out
	}
}

var pokes int

// advance moves the global hub's clock on by d and pokes the train (an annotation), as the
// timer it asked for would on a real clock.
func advance(ctx context.Context, d time.Duration, t *ranv1alpha1.ReleaseTrain) {
	GinkgoHelper()
	global.Clock.Step(d)
	pokes++
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"test.cgu-operator.io/poke":%q}}}`, strconv.Itoa(pokes))
	target := &ranv1alpha1.ReleaseTrain{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name}}
	Expect(global.Hub.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}
