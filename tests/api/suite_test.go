package api_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// The API suite checks the CRDs on a real kube-apiserver: samples are accepted, invalid
// objects are rejected with the documented messages, defaults are applied and the printer
// columns read the status fields.

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
)

func TestAPI(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "API suite")
}

var _ = BeforeSuite(func() {
	crds, err := testenv.OperatorCRDs()
	Expect(err).NotTo(HaveOccurred())
	hub, err := testenv.HubCRDs() // the demo's samples hold policies and placements
	Expect(err).NotTo(HaveOccurred())
	env, cfg, err = testenv.Start(append(hub, crds)...)
	Expect(err).NotTo(HaveOccurred())
	k8s, err = client.New(cfg, client.Options{Scheme: operator.NewScheme()})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
