package argocd_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/cgu-operator/cgu-operator/pkg/argocd"
)

var update = flag.Bool("update", false, "write config/argocd/ from pkg/argocd/health.lua")

// cgu decodes a ClusterGroupUpgrade written in YAML, as Argo CD would hand it to the script.
func cgu(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

const meta = "apiVersion: ran.openshift.io/v1alpha1\nkind: ClusterGroupUpgrade\nmetadata: {name: u, namespace: n, generation: 2}\n"

func TestHealth(t *testing.T) {
	cases := map[string]struct {
		doc             string
		status, message string
	}{
		"no status yet": {
			doc:    "spec: {enable: false}",
			status: "Progressing", message: "Waiting for cgu-operator to report a state",
		},
		"status of an older generation": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 1, state: NotStarted, message: Not enabled}",
			status: "Progressing", message: "Waiting for cgu-operator to observe generation 2",
		},
		"not enabled": {
			doc: `spec: {enable: false}
status: {observedGeneration: 2, state: NotStarted, message: "Not enabled: set spec.enable to true to start",
  conditions: [{type: Validated, status: "True", reason: ValidationCompleted}, {type: Progressing, status: "False", reason: NotEnabled}]}`,
			status: "Suspended", message: "Not enabled: set spec.enable to true to start",
		},
		"not enabled and invalid": {
			doc: `spec: {enable: false}
status: {observedGeneration: 2, state: NotStarted, message: "Managed policies not found: p",
  conditions: [{type: Validated, status: "False", reason: NotAllManagedPoliciesExist}]}`,
			status: "Degraded", message: "Managed policies not found: p",
		},
		"enabled, waiting for pre-caching": {
			doc: `spec: {enable: true, preCaching: true}
status: {observedGeneration: 2, state: NotStarted, message: "Pre-caching on 2 clusters",
  conditions: [{type: Progressing, status: "False", reason: PrecachingInProgress}]}`,
			status: "Progressing", message: "Pre-caching on 2 clusters",
		},
		"enabled, paused before the first batch": {
			doc:    "spec: {enable: true, paused: true}\nstatus: {observedGeneration: 2, state: NotStarted, message: Paused}",
			status: "Suspended", message: "Paused",
		},
		"running": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: NotCompleted, message: Batch 1 of 2}",
			status: "Progressing", message: "Batch 1 of 2",
		},
		"running, no message: the Progressing condition's": {
			doc: `spec: {enable: true}
status: {observedGeneration: 2, state: NotCompleted, conditions: [{type: Progressing, status: "True", reason: InProgress, message: Batch 1}]}`,
			status: "Progressing", message: "Batch 1",
		},
		"paused": {
			doc:    "spec: {enable: true, paused: true}\nstatus: {observedGeneration: 2, state: NotCompleted, message: Batch 1 of 2}",
			status: "Suspended", message: "Paused: Batch 1 of 2",
		},
		"waiting for approval": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: NotCompleted, message: Approve, waiting: {reason: WaitingForApproval, batch: 2}}",
			status: "Suspended", message: "Approve",
		},
		"held before a batch by a fleet freeze": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: NotCompleted, message: Frozen, waiting: {reason: FleetFrozen, batch: 2}}",
			status: "Suspended", message: "Frozen",
		},
		"waiting for a maintenance window": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: NotCompleted, message: Window, waiting: {reason: OutsideMaintenanceWindow, batch: 2}}",
			status: "Progressing", message: "Window",
		},
		"cannot start": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: CannotStart, message: Blocked}",
			status: "Degraded", message: "Blocked",
		},
		"timed out": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: TimedOut, message: Late}",
			status: "Degraded", message: "Late",
		},
		"completed": {
			doc:    "spec: {enable: true}\nstatus: {observedGeneration: 2, state: Completed, message: All 2 clusters are compliant}",
			status: "Healthy", message: "All 2 clusters are compliant",
		},
		"completed with clusters held": {
			doc: `spec: {enable: true}
status: {observedGeneration: 2, state: Completed, message: "1 of 2 clusters are compliant with every managed policy; the upgrade checks held 1, which were not enforced",
  conditions: [{type: Succeeded, status: "False", reason: ClustersHeld}]}`,
			status: "Healthy", message: "1 of 2 clusters are compliant with every managed policy; the upgrade checks held 1, which were not enforced",
		},
		"a state this script does not know": {
			doc:    "status: {observedGeneration: 2, state: Exploded}",
			status: "Unknown", message: "Unknown state Exploded",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			status, message, err := argocd.Health(cgu(t, meta+c.doc))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(status).To(Equal(c.status))
			g.Expect(message).To(Equal(c.message))
		})
	}
}

func TestObject(t *testing.T) {
	g := NewWithT(t)
	obj, err := argocd.Object(struct {
		Status map[string]any `json:"status"`
	}{Status: map[string]any{"state": "Completed", "observedGeneration": 1}})
	g.Expect(err).NotTo(HaveOccurred())
	status, _, err := argocd.Health(obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(status).To(Equal("Healthy"))
}

// TestConfigCopies keeps config/argocd/ equal to the embedded script: the plain copy and the
// argocd-cm patch. Run with -update to write them.
func TestConfigCopies(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join("..", "..", "config", "argocd")
	files := map[string]string{"health.lua": argocd.Script(), "argocd-cm-patch.yaml": argocd.ConfigMapPatch()}
	for name, want := range files {
		path := filepath.Join(dir, name)
		if *update {
			g.Expect(os.WriteFile(path, []byte(want), 0o600)).To(Succeed())
		}
		got, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(got)).To(Equal(want), "%s differs from pkg/argocd/health.lua; run go test ./pkg/argocd -update", path)
	}

	// The patch, read as YAML, holds the script itself under the health key.
	var cm struct {
		Metadata struct{ Name string } `json:"metadata"`
		Data     map[string]string     `json:"data"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "argocd-cm-patch.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml.Unmarshal(data, &cm)).To(Succeed())
	g.Expect(cm.Metadata.Name).To(Equal("argocd-cm"))
	g.Expect(cm.Data).To(HaveKeyWithValue(argocd.HealthKey, argocd.Script()))
}
