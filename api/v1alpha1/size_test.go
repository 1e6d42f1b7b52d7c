package v1alpha1

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sizeLimit is the most the operator may write in one object: 256 KiB.
const sizeLimit = 256 * 1024

// name returns a distinct name of exactly n characters.
func name(i, n int) string {
	s := fmt.Sprintf("c%d-", i)
	return s + strings.Repeat("x", n-len(s))
}

func fullProgress(i int, now metav1.Time) ClusterProgress {
	return ClusterProgress{
		Name:           name(i, 63),
		State:          ClusterInProgress,
		CurrentPolicy:  name(i, 253),
		Since:          &now,
		StartedAt:      &now,
		Stage:          1 << 40,
		CompliantSince: &now,
		Reason:         strings.Repeat("R", 64),
	}
}

// largestStatus is the largest status the API allows for a rollout of clusters clusters
// with policies managed policies: every bounded field at its bound.
func largestStatus(clusters, policies int) ClusterGroupUpgradeStatus {
	now := metav1.NewTime(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	msg := strings.Repeat("m", MessageLimit)
	st := ClusterGroupUpgradeStatus{
		ObservedGeneration: 1 << 40,
		State:              StateNotCompleted,
		Message:            msg,
		Progress:           Progress{Batch: fmt.Sprintf("%d/%d", clusters, clusters), Clusters: fmt.Sprintf("%d/%d", clusters, clusters)},
		Counts:             ClusterCounts{Total: clusters, Pending: clusters, InProgress: clusters, Completed: clusters, TimedOut: clusters, Failed: clusters, Held: clusters},
		Plan:               &PlanSummary{Batches: clusters, CanaryBatches: clusters, Clusters: clusters, SkippedCompliant: clusters, FrozenAt: &now},
		StartedAt:          &now,
		CompletedAt:        &now,
		CurrentBatch: &BatchStatus{Index: clusters, Canary: true, StartedAt: &now, TimeoutAt: &now, ClustersNotShown: clusters,
			Stage: &StageStatus{Number: clusters, Size: clusters, Step: clusters, StartedAt: &now, TimeoutAt: &now, Resets: clusters, Unhealthy: msg}},
		Precaching: &PrecachingStatus{
			Spec: &PrecachingSpec{
				PlatformImage:                strings.Repeat("i", 512),
				OperatorsIndexes:             make([]string, 10),
				OperatorsPackagesAndChannels: make([]string, 50),
				ExcludePrecachePatterns:      make([]string, 20),
				AdditionalImages:             make([]string, 20),
				SpaceRequired:                strings.Repeat("9", 32),
			},
			Counts: map[string]int{"NotStarted": clusters, "Starting": clusters, "Active": clusters, "Succeeded": clusters, "Timeout": clusters, "Failed": clusters},
		},
	}
	spec := st.Precaching.Spec
	for _, l := range []struct {
		items  []string
		length int
	}{{spec.OperatorsIndexes, 512}, {spec.OperatorsPackagesAndChannels, 128}, {spec.ExcludePrecachePatterns, 128}, {spec.AdditionalImages, 512}} {
		for i := range l.items {
			l.items[i] = name(i, l.length)
		}
	}
	for _, t := range []string{ConditionClustersSelected, ConditionValidated, ConditionPrecacheSpecValid, ConditionPrecachingSucceeded, ConditionProgressing, ConditionSucceeded, ConditionUpgradeChecked} {
		st.Conditions = append(st.Conditions, metav1.Condition{
			Type: t, Status: metav1.ConditionTrue, ObservedGeneration: 1 << 40, LastTransitionTime: now,
			Reason: ReasonAmbiguousManagedPoliciesNames, Message: msg,
		})
	}
	for i := range ClusterDetailLimit {
		// startedAt and stage are written to the batch records only (rollout.Status leaves
		// them out of status.currentBatch.clusters); TestBatchRecordStaysSmall counts them.
		c := fullProgress(i, now)
		c.StartedAt, c.Stage = nil, 0
		st.CurrentBatch.Clusters = append(st.CurrentBatch.Clusters, c)
	}
	st.UpgradeChecks = &UpgradeChecksStatus{ClustersNotShown: clusters,
		Counts: map[string]int{"Proceed": clusters, "Done": clusters, "Hold": clusters, "Reject": clusters}}
	for i := range CheckDetailLimit {
		check := ClusterCheck{Name: name(i, 253), Outcome: "Reject", Reason: strings.Repeat("R", 64), Message: strings.Repeat("m", CheckMessageLimit)}
		for j := range 8 {
			check.AcceptedRisks = append(check.AcceptedRisks, name(j, 128))
		}
		st.UpgradeChecks.Clusters = append(st.UpgradeChecks.Clusters, check)
	}
	st.Waiting = &WaitingStatus{Reason: ReasonOutsideMaintenanceWindow, Batch: clusters, Until: &now}
	st.PausedAt, st.PausedFor = &now, &metav1.Duration{Duration: 1 << 62}
	for i := range ApprovalLimit {
		st.Approvals = append(st.Approvals, BatchApproval{Batch: clusters - i, By: name(i, 253), At: now})
	}
	for i := range policies {
		st.ManagedPoliciesForUpgrade = append(st.ManagedPoliciesForUpgrade, PolicyReference{Name: name(i, 253), Namespace: name(i, 63), Generation: 1 << 40})
		st.ManagedPoliciesCompliantBeforeUpgrade = append(st.ManagedPoliciesCompliantBeforeUpgrade, name(i, 253))
	}
	return st
}

func TestStatusStaysSmallWhateverTheFleetSize(t *testing.T) {
	for _, clusters := range []int{10, 10_000, 1_000_000} {
		t.Run(fmt.Sprint(clusters), func(t *testing.T) {
			cgu := ClusterGroupUpgrade{Status: largestStatus(clusters, 100)}
			data, err := json.Marshal(cgu.Status)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > sizeLimit {
				t.Fatalf("status of %d clusters with 100 policies is %d bytes, more than %d", clusters, len(data), sizeLimit)
			}
			t.Logf("largest status for %d clusters: %d bytes", clusters, len(data))
		})
	}
}

func TestBatchRecordStaysSmall(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	b := ClusterGroupUpgradeBatch{
		ObjectMeta: metav1.ObjectMeta{Name: name(0, 253), Namespace: name(0, 63)},
		Spec: ClusterGroupUpgradeBatchSpec{Upgrade: name(0, 253), Index: 10_000, Part: 40, Canary: true, Window: 1 << 40,
			Stages: slices.Repeat([]int{1 << 40}, 64), OnUnhealthy: UnhealthyReset},
		Status: ClusterGroupUpgradeBatchStatus{StartedAt: &now, TimeoutAt: &now, FinishedAt: &now, EndsRollout: true,
			PausedBefore: &metav1.Duration{Duration: 1 << 62}},
	}
	for i := range ClusterDetailLimit {
		b.Spec.Clusters = append(b.Spec.Clusters, name(i, 63))
		b.Status.Clusters = append(b.Status.Clusters, fullProgress(i, now))
	}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > sizeLimit {
		t.Fatalf("a full ClusterGroupUpgradeBatch is %d bytes, more than %d", len(data), sizeLimit)
	}
	t.Logf("largest ClusterGroupUpgradeBatch: %d bytes", len(data))
}

func TestReleaseTrainStatusStaysSmall(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	msg := strings.Repeat("m", MessageLimit)
	st := ReleaseTrainStatus{ObservedGeneration: 1 << 40, Newest: name(0, 64), CheckedAt: &now}
	for i := range TrainRingLimit {
		rs := RingStatus{Name: name(i, 20), Release: name(i, 64), Rollout: name(i, 48), Ended: true}
		for j := range TrainHubLimit {
			rs.Unreachable = append(rs.Unreachable, name(j, 63))
		}
		st.Rings = append(st.Rings, rs)
	}
	for i := range TrainLedgerLimit {
		r := LedgerRelease{Version: name(i, 64), State: ReleaseSuperseded, FoundAt: now, Message: msg}
		for j := range TrainRingLimit {
			r.Rings = append(r.Rings, LedgerRing{Name: name(j, 20), State: RingQualified, StartedAt: now,
				Clusters: 1 << 40, Complete: 1 << 40, Failed: 1 << 40, SoakingSince: &now, DecidedAt: &now})
		}
		st.Ledger = append(st.Ledger, r)
	}
	for _, kind := range []string{TrainConditionSourceRead, TrainConditionProgressing, TrainConditionHubsReporting, ConditionReconciled} {
		st.Conditions = append(st.Conditions, metav1.Condition{Type: kind, Reason: strings.Repeat("R", 64), Message: msg, LastTransitionTime: now})
	}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > sizeLimit {
		t.Fatalf("the largest ReleaseTrain status is %d bytes, more than %d", len(data), sizeLimit)
	}
	t.Logf("largest ReleaseTrain status: %d bytes", len(data))
}
