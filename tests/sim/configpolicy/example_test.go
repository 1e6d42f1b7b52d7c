package configpolicy_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// A simulated spoke enforces the desired version of its ClusterVersion, then reports the result.
func ExamplePrepared_Evaluate() {
	policy := &configpolicyv1.ConfigurationPolicy{}
	policy.Name = "upgrade"
	policy.Spec.RemediationAction = configpolicyv1.Enforce
	policy.Spec.ObjectTemplates = []*configpolicyv1.ObjectTemplate{{
		ComplianceType: configpolicyv1.MustHave,
		ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"apiVersion": "config.openshift.io/v1",
			"kind": "ClusterVersion", "metadata": {"name": "version"},
			"spec": {"desiredUpdate": {"version": "4.16.12"}}}`)},
	}}

	// Prepare once per policy, evaluate on every spoke.
	prepared := configpolicy.Prepare(policy)

	store := configpolicy.NewMapStore(configpolicy.NewMapper())
	_ = store.Create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
		"metadata": map[string]any{"name": "version"},
		"spec":     map[string]any{"clusterID": "x"},
	}})

	first := prepared.Evaluate(store, time.Now())
	fmt.Println(first.Message)

	for _, msg := range configpolicy.EmittedMessages(configpolicy.Result{}, first, false) {
		fmt.Println("history:", msg)
	}

	second := prepared.Evaluate(store, time.Now())
	fmt.Println(second.Message)
	fmt.Println("new history entries:", len(configpolicy.EmittedMessages(first, second, false)))

	// Output:
	// Compliant; notification - clusterversions [version] was updated successfully
	// history: NonCompliant; violation - clusterversions [version] found but not as specified
	// history: Compliant; notification - clusterversions [version] was updated successfully
	// Compliant; notification - clusterversions [version] found as specified
	// new history entries: 1
}
