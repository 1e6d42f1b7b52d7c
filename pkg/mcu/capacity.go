package mcu

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// Worker capacity (spec.upgradeStrategy.workerCapacity): a multi-node cluster adds machines
// to each worker MachineSet before its first update and removes them once its worker pool
// runs the target, as the managed-upgrade-operator reserves capacity. Both steps are
// policies with managed-cluster templates, resolved on the cluster against its own
// MachineSets: the replicas a MachineSet had before the surge are kept in its
// AnnotationReplicasBeforeSurge, so that the step adding capacity asks the same number
// however often it is evaluated, and the step removing it knows what to go back to.

// AnnotationReplicasBeforeSurge on a MachineSet holds its replicas before the surge while the
// added machines are there; the removal empties it.
const AnnotationReplicasBeforeSurge = "ran.openshift.io/replicas-before-surge"

// annotationAutoscaled is set by a MachineAutoscaler on the MachineSets it sizes: those are
// left to the autoscaler.
const annotationAutoscaled = "machine.openshift.io/cluster-api-autoscaler-node-group-max-size"

// Defaults of spec.upgradeStrategy.workerCapacity.
const (
	DefaultSurge        = 1
	DefaultScaleTimeout = 20 * time.Minute
)

// ScaleUpPolicyName and ScaleDownPolicyName name the policies adding and removing worker
// capacity.
func ScaleUpPolicyName(m *ranv1alpha1.ManagedClustersUpgrade) string {
	return names.Safe(62-len(m.Namespace), m.Name, "add-workers")
}

// ScaleDownPolicyName names the policy removing the capacity ScaleUpPolicyName added.
func ScaleDownPolicyName(m *ranv1alpha1.ManagedClustersUpgrade) string {
	return names.Safe(62-len(m.Namespace), m.Name, "remove-workers")
}

// addingCapacity are the staged clusters that add worker capacity, sorted: the multi-node
// ones (control-plane topology HighlyAvailable), when the rollout asks for capacity.
func addingCapacity(m *ranv1alpha1.ManagedClustersUpgrade, clusters []Cluster, staged []string) []string {
	if m.Spec.UpgradeStrategy.WorkerCapacity == nil {
		return nil
	}
	var out []string
	for _, c := range clusters {
		if c.Topology == TopologyHighlyAvailable && slices.Contains(staged, c.Name) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out
}

func surge(m *ranv1alpha1.ManagedClustersUpgrade) int {
	if c := m.Spec.UpgradeStrategy.WorkerCapacity; c != nil && c.Surge > 0 {
		return c.Surge
	}
	return DefaultSurge
}

func scaleTimeout(m *ranv1alpha1.ManagedClustersUpgrade) time.Duration {
	if c := m.Spec.UpgradeStrategy.WorkerCapacity; c != nil && c.ScaleTimeout != nil {
		return c.ScaleTimeout.Duration
	}
	return DefaultScaleTimeout
}

// addCapacityPolicy asks each worker MachineSet of a cluster for surge more machines, ready.
// It is best effort (rollout.SoftTimeoutAnnotation): a cluster whose machines are not ready
// within the scale timeout goes on to its update, and the rollout reports it. It is also
// intermediate: the removal supersedes it, and the hub releases a cluster from it before
// enforcing what comes next.
func addCapacityPolicy(m *ranv1alpha1.ManagedClustersUpgrade) *policyv1.Policy {
	p := configurationPolicy(m, ScaleUpPolicyName(m), map[string]any{"object-templates-raw": ScaleUpTemplates(surge(m))})
	p.Annotations = map[string]string{
		cgu.IntermediateAnnotation:    "true",
		rollout.SoftTimeoutAnnotation: strconv.Itoa(int(scaleTimeout(m).Round(time.Second) / time.Second)),
	}
	return p
}

// removeCapacityPolicy asks, once the worker pool is updated, each MachineSet that surged
// for its replicas before the surge, and for the added machines to be gone.
func removeCapacityPolicy(m *ranv1alpha1.ManagedClustersUpgrade) *policyv1.Policy {
	return configurationPolicy(m, ScaleDownPolicyName(m), map[string]any{"object-templates-raw": ScaleDownTemplates()})
}

// workerMachineSets is the start of a range over a cluster's MachineSets whose machines are
// workers and that no autoscaler sizes, binding $ms and $annotations; the caller ends it.
const workerMachineSets = `{{- range $ms := (lookup "machine.openshift.io/v1beta1" "MachineSet" "openshift-machine-api" "").items }}
{{- $annotations := dig "metadata" "annotations" (dict) $ms }}
{{- $role := dig "spec" "template" "metadata" "labels" "machine.openshift.io/cluster-api-machine-role" "" $ms }}
{{- if and (eq $role "worker") (not (hasKey $annotations "` + annotationAutoscaled + `")) }}
`

// beforeSurge binds $before, within workerMachineSets: the replicas AnnotationReplicasBeforeSurge
// keeps, or the MachineSet's own when it is missing or empty.
const beforeSurge = `{{- $before := get $annotations "` + AnnotationReplicasBeforeSurge + `" | default (dig "spec" "replicas" 0 $ms | toString) | atoi }}
`

// machineSetTemplate is a musthave object template of the MachineSet $ms with the annotation
// AnnotationReplicasBeforeSurge set to annotation, and spec and status as given (template
// text).
func machineSetTemplate(annotation, spec, status string) string {
	return fmt.Sprintf(`- complianceType: musthave
  objectDefinition:
    apiVersion: machine.openshift.io/v1beta1
    kind: MachineSet
    metadata:
      name: {{ $ms.metadata.name }}
      namespace: openshift-machine-api
      annotations:
        %s: %s
    spec:
      %s
    status:
      %s
`, AnnotationReplicasBeforeSurge, annotation, spec, status)
}

// ScaleUpTemplates are the object templates (object-templates-raw) adding surge machines to
// each worker MachineSet that has some: its replicas before the surge kept in
// AnnotationReplicasBeforeSurge (read back from it while the surge lasts), spec.replicas
// and status.readyReplicas that many plus surge. A cluster without such a MachineSet has
// nothing to add.
func ScaleUpTemplates(surge int) string {
	return workerMachineSets + beforeSurge + `{{- if gt $before 0 }}
` + machineSetTemplate(`"{{ $before }}"`, fmt.Sprintf("replicas: {{ add $before %d }}", surge),
		fmt.Sprintf("readyReplicas: {{ add $before %d }}", surge)) + `{{- end }}
{{- end }}
{{- end }}`
}

// ScaleDownTemplates are the object templates (object-templates-raw) removing the surge: the
// worker MachineConfigPool Updated (a cluster without one has no workers to wait for), then,
// only once it is, each MachineSet that surged
// (AnnotationReplicasBeforeSurge present) back to its replicas before the surge, its
// machines gone (status.replicas), the annotation emptied. An emptied annotation reads as
// no surge: the replicas asked are then the MachineSet's own.
func ScaleDownTemplates() string {
	return `{{- $pool := lookup "machineconfiguration.openshift.io/v1" "MachineConfigPool" "" "worker" }}
{{- $updated := false }}
{{- range $c := dig "status" "conditions" (list) $pool }}
{{- if and (eq (get $c "type") "Updated") (eq (get $c "status") "True") }}{{ $updated = true }}{{ end }}
{{- end }}
{{- if $pool }}
- complianceType: musthave
  objectDefinition:
    apiVersion: machineconfiguration.openshift.io/v1
    kind: MachineConfigPool
    metadata:
      name: worker
    status:
      conditions:
      - type: Updated
        status: "True"
{{- end }}
{{- if $updated }}
` + workerMachineSets + `{{- if hasKey $annotations "` + AnnotationReplicasBeforeSurge + `" }}
` + beforeSurge + machineSetTemplate(`""`, "replicas: {{ $before }}", "replicas: {{ $before }}") + `{{- end }}
{{- end }}
{{- end }}
{{- end }}`
}

// capacitySummary counts the clusters adding capacity by where their capacity stands, from
// the ClusterGroupUpgrade's records: added once past the policy adding it (not soft timed
// out), not ready when soft timed out there, removed once past the policy removing it.
func capacitySummary(m *ranv1alpha1.ManagedClustersUpgrade, capacity []string, u *Child) *ranv1alpha1.CapacitySummary {
	if len(capacity) == 0 {
		return m.Status.WorkerCapacity
	}
	s := &ranv1alpha1.CapacitySummary{Total: len(capacity)}
	if before := m.Status.WorkerCapacity; before != nil {
		s.Total = max(before.Total, s.Total)
	}
	up, down := slices.Index(u.Policies, ScaleUpPolicyName(m)), slices.Index(u.Policies, ScaleDownPolicyName(m))
	for _, c := range capacity {
		at, started := u.At[c]
		switch {
		case !started:
		case slices.Contains(u.SoftTimedOut[c], ScaleUpPolicyName(m)):
			s.NotReady++
		case up >= 0 && at > up:
			s.Added++
		}
		if started && down >= 0 && at > down {
			s.Removed++
		}
	}
	return s
}
