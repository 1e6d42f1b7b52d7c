package rollout

import (
	"fmt"
	"slices"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/plan"
)

// Damaged is what a started rollout whose batch records are missing, partial or inconsistent
// is rebuilt from: the records the API server still has, the ClusterGroupUpgrade's status
// (status.plan, status.remediationPlan, status.currentBatch), and the spokes' compliance.
type Damaged struct {
	Namespace, Name string
	// Records are the rollout's records the API server has, in any order.
	Records []ranv1alpha1.ClusterGroupUpgradeBatch
	// Status is the ClusterGroupUpgrade's status.
	Status *ranv1alpha1.ClusterGroupUpgradeStatus
	// Shape gives a batch of the plan that is not a canary the form the spec asks for
	// (a window, progressive stages), for a batch no record is left of.
	Shape func(clusters []string) plan.Batch
	// Compliant tells whether a cluster is compliant with every managed policy now.
	Compliant func(cluster string) bool
	Now       time.Time
}

// Rebuild returns the rollout's full set of records in plan order, those the API server still
// has and, rebuilt, the ones it lost (also returned alone, to be written again). A lost record
// gets its batch's clusters from status.remediationPlan and the progress the status and the
// spokes show: a batch that ended before the current one counts its clusters compliant now
// as completed and the others as timed out; a lost part of the current batch starts when the
// batch started (status.currentBatch) and its clusters go on from their compliance; a later
// batch has not started. When what a record held cannot be known (status.remediationPlan
// shortened or wiped, a record that disagrees with it, a running batch's start unknown) the
// problem says what is missing, and nothing is rebuilt.
func Rebuild(d Damaged) (all, rebuilt []ranv1alpha1.ClusterGroupUpgradeBatch, problem *Problem) {
	p, problem := d.plan()
	if problem != nil {
		return nil, nil, problem
	}
	live := map[[2]int]ranv1alpha1.ClusterGroupUpgradeBatch{}
	for _, r := range d.Records {
		live[[2]int{r.Spec.Index, r.Spec.Part}] = r
	}
	current, policies := d.currentBatch(), d.policies()
	for _, want := range plan.Records(p, d.Namespace, d.Name) {
		want.Spec.Policies = policies
		key := [2]int{want.Spec.Index, want.Spec.Part}
		if r, ok := live[key]; ok {
			if !SameSpec(r.Spec, want.Spec) {
				return nil, nil, lost(fmt.Sprintf("the record %s of batch %d disagrees with status.remediationPlan", r.Name, r.Spec.Index))
			}
			if r.Spec.Index < current && r.Status.FinishedAt == nil {
				// Made again without its progress (a pass cut between the two writes).
				r.Status = d.ended(r.Spec)
				rebuilt = append(rebuilt, r)
			}
			all = append(all, r)
			continue
		}
		st, problem := d.rebuiltStatus(want.Spec, current)
		if problem != nil {
			return nil, nil, problem
		}
		want.Status = st
		all, rebuilt = append(all, want), append(rebuilt, want)
	}
	return all, rebuilt, nil
}

// plan is the frozen plan: each batch from its records when the API server has them all,
// else from status.remediationPlan.
func (d Damaged) plan() (plan.Plan, *Problem) {
	batches, canaries := 0, 0
	if d.Status.Plan != nil {
		batches, canaries = d.Status.Plan.Batches, d.Status.Plan.CanaryBatches
	}
	byBatch := map[int][]ranv1alpha1.ClusterGroupUpgradeBatch{}
	for _, r := range d.Records {
		batches = max(batches, r.Spec.Index)
		byBatch[r.Spec.Index] = append(byBatch[r.Spec.Index], r)
	}
	listed := d.Status.Shortened == nil || d.Status.Shortened.RemediationPlanClustersNotShown == 0
	var p plan.Plan
	for i := 1; i <= batches; i++ {
		if whole, ok := plan.BatchOf(byBatch[i]); ok {
			p.Batches = append(p.Batches, whole)
			continue
		}
		if !listed || len(d.Status.RemediationPlan) != batches {
			return plan.Plan{}, lost(fmt.Sprintf("records of batch %d are gone and status.remediationPlan no longer lists its clusters", i))
		}
		clusters := slices.Clone(d.Status.RemediationPlan[i-1])
		b := plan.Batch{Canary: i <= canaries, Clusters: clusters}
		if parts := byBatch[i]; len(parts) > 0 { // a part is left: it says the batch's form
			s := parts[0].Spec
			b.Canary, b.Window, b.Stages = s.Canary, s.Window, s.Stages
			b.StopUnhealthy = s.OnUnhealthy == ranv1alpha1.UnhealthyStop
		} else if !b.Canary && d.Shape != nil {
			b = d.Shape(clusters)
		}
		p.Batches = append(p.Batches, b)
	}
	return p, nil
}

// policies are the accepted policies the records froze at the start: a record left's, else
// the status's.
func (d Damaged) policies() []ranv1alpha1.PolicyReference {
	if frozen := FrozenPolicies(d.Records); len(frozen) > 0 {
		return frozen
	}
	return d.Status.ManagedPoliciesForUpgrade
}

// currentBatch is the 1-based index of the last batch that started, by the records and the
// status; zero when none did.
func (d Damaged) currentBatch() int {
	current := 0
	for _, r := range d.Records {
		if r.Status.StartedAt != nil {
			current = max(current, r.Spec.Index)
		}
	}
	if cb := d.Status.CurrentBatch; cb != nil && cb.StartedAt != nil {
		current = max(current, cb.Index)
	}
	return current
}

// rebuiltStatus is the progress of a lost record of the plan.
func (d Damaged) rebuiltStatus(spec ranv1alpha1.ClusterGroupUpgradeBatchSpec, current int) (ranv1alpha1.ClusterGroupUpgradeBatchStatus, *Problem) {
	var st ranv1alpha1.ClusterGroupUpgradeBatchStatus
	switch {
	case spec.Index > current:
		return st, nil
	case spec.Index < current || d.batchEnded(spec.Index):
		return d.ended(spec), nil
	}
	if cb := d.Status.CurrentBatch; cb != nil && cb.Index == spec.Index && cb.StartedAt != nil {
		st.StartedAt, st.TimeoutAt = cb.StartedAt.DeepCopy(), cb.TimeoutAt.DeepCopy()
		for _, c := range cb.Clusters {
			if slices.Contains(spec.Clusters, c.Name) {
				st.Clusters = append(st.Clusters, c)
			}
		}
		return st, nil
	}
	for _, r := range d.Records {
		if r.Spec.Index == spec.Index && r.Status.StartedAt != nil {
			st.StartedAt, st.TimeoutAt = r.Status.StartedAt.DeepCopy(), r.Status.TimeoutAt.DeepCopy()
			return st, nil
		}
	}
	return st, lost(fmt.Sprintf("the record of running batch %d is gone and the status no longer says when it started", spec.Index))
}

// ended is the progress of a record of a batch that ended: its clusters compliant now
// completed, the others timed out.
func (d Damaged) ended(spec ranv1alpha1.ClusterGroupUpgradeBatchSpec) ranv1alpha1.ClusterGroupUpgradeBatchStatus {
	st := ranv1alpha1.ClusterGroupUpgradeBatchStatus{StartedAt: Stamp(d.Now), FinishedAt: Stamp(d.Now)}
	for _, name := range spec.Clusters {
		st.Clusters = append(st.Clusters, d.settled(name))
	}
	return st
}

// Unfinished reports whether a record of a batch before the last one that started never
// ended: it was made again without its progress.
func Unfinished(records []ranv1alpha1.ClusterGroupUpgradeBatch) bool {
	current := 0
	for _, r := range records {
		if r.Status.StartedAt != nil {
			current = max(current, r.Spec.Index)
		}
	}
	for _, r := range records {
		if r.Spec.Index < current && r.Status.FinishedAt == nil {
			return true
		}
	}
	return false
}

// batchEnded is true when every record the API server has of the batch ended.
func (d Damaged) batchEnded(index int) bool {
	seen := false
	for _, r := range d.Records {
		if r.Spec.Index == index {
			if r.Status.FinishedAt == nil {
				return false
			}
			seen = true
		}
	}
	return seen
}

// settled is the final state of a cluster of a lost record of an ended batch.
func (d Damaged) settled(name string) ranv1alpha1.ClusterProgress {
	cp := ranv1alpha1.ClusterProgress{Name: name, State: ranv1alpha1.ClusterCompleted, Since: Stamp(d.Now),
		Reason: ranv1alpha1.ReasonRecordRebuilt}
	if d.Compliant == nil || !d.Compliant(name) {
		cp.State = ranv1alpha1.ClusterTimedOut
	}
	return cp
}

func lost(what string) *Problem {
	return &Problem{Reason: ranv1alpha1.ReasonRecordsLost, Message: fmt.Sprintf(
		"The rollout stopped and enforces nothing: %s. Delete the ClusterGroupUpgrade and create it again to go on", what)}
}

// SameSpec reports whether two records freeze the same part of a plan.
func SameSpec(a, b ranv1alpha1.ClusterGroupUpgradeBatchSpec) bool {
	return a.Upgrade == b.Upgrade && a.Index == b.Index && a.Part == b.Part && a.Parts == b.Parts &&
		a.Canary == b.Canary && a.Window == b.Window && slices.Equal(a.Stages, b.Stages) && slices.Equal(a.Clusters, b.Clusters)
}

// FrozenPolicies are the managed policies, with their generations, the records froze when
// the rollout started; none when the records predate spec.policies.
func FrozenPolicies(records []ranv1alpha1.ClusterGroupUpgradeBatch) []ranv1alpha1.PolicyReference {
	for _, r := range records {
		if len(r.Spec.Policies) > 0 {
			return r.Spec.Policies
		}
	}
	return nil
}
