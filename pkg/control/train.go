package control

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/train"
)

// ReleaseApproval is what ApproveRelease wrote, or found already written.
type ReleaseApproval struct {
	// By is the user the API server says the caller is; empty when nothing was written.
	By string
	// Already is true when spec.approval.approved listed the release already: nothing was
	// written.
	Already bool
}

// RefusedError says why a release cannot be approved. Nothing was written.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refused(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// ApproveRelease adds version to spec.approval.approved of the ReleaseTrain key, so that the
// release enters the first ring. It refuses (a *RefusedError) when the train does not require
// approval, or when its ledger does not hold the release as AwaitingApproval; with ahead, a
// release the train has not found yet is approved, as long as the train could still take it.
// The write is a merge patch under an optimistic lock, read again on a conflict, so that an
// approval given at the same time is not lost from the list.
func ApproveRelease(ctx context.Context, c client.Client, key client.ObjectKey, version string, ahead bool) (ReleaseApproval, error) {
	var a ReleaseApproval
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		t := &ranv1alpha1.ReleaseTrain{}
		if err := c.Get(ctx, key, t); err != nil {
			return fmt.Errorf("reading ReleaseTrain %s: %w", key, err)
		}
		already, err := approvable(t, version, ahead)
		if err != nil || already {
			a.Already = already
			return err
		}
		if a.By == "" {
			if a.By, err = whoAmI(ctx, c); err != nil {
				return err
			}
		}
		approved, err := withApproval(t, version)
		if err != nil {
			return err
		}
		before := client.MergeFromWithOptions(t.DeepCopy(), client.MergeFromWithOptimisticLock{})
		t.Spec.Approval.Approved = approved
		if err := c.Patch(ctx, t, before); err != nil {
			return fmt.Errorf("patching ReleaseTrain %s: %w", key, err)
		}
		return nil
	})
	return a, err
}

// maxApproved is how many releases spec.approval.approved may list (the CRD's maxItems).
const maxApproved = 32

// withApproval is spec.approval.approved with version added. A full list first lets go of the
// approvals the train no longer reads: those of the releases its ledger holds past
// AwaitingApproval, which an approval has let in already, and of the releases older than every
// one in the ledger, which the train will never take. When none can go, it refuses.
func withApproval(t *ranv1alpha1.ReleaseTrain, version string) ([]string, error) {
	approved := slices.Clone(t.Spec.Approval.Approved)
	if len(approved) >= maxApproved {
		approved = slices.DeleteFunc(approved, func(v string) bool { return !stillRead(t, v) })
	}
	if len(approved) >= maxApproved {
		return nil, refused("spec.approval.approved of ReleaseTrain %s/%s lists %d releases, the most it may, all approved ahead "+
			"or awaiting approval: remove one the train should no longer take first", t.Namespace, t.Name, len(approved))
	}
	return append(approved, version), nil
}

// stillRead says whether the train may still read the approval of version: its ledger holds it
// AwaitingApproval, or does not hold it and it is newer than every release there.
func stillRead(t *ranv1alpha1.ReleaseTrain, version string) bool {
	if i := slices.IndexFunc(t.Status.Ledger, func(r ranv1alpha1.LedgerRelease) bool { return r.Version == version }); i >= 0 {
		return t.Status.Ledger[i].State == ranv1alpha1.ReleaseAwaitingApproval
	}
	return !slices.ContainsFunc(t.Status.Ledger, func(r ranv1alpha1.LedgerRelease) bool { return !train.Newer(version, r.Version) })
}

// approvable says whether version may be approved on t: already is true when it is approved
// already; the error (a *RefusedError) says why it may not be.
func approvable(t *ranv1alpha1.ReleaseTrain, version string, ahead bool) (already bool, err error) {
	name := t.Namespace + "/" + t.Name
	a := t.Spec.Approval
	if a == nil || !a.Required {
		return false, refused("ReleaseTrain %s does not require approval (spec.approval.required is not true): "+
			"each release enters the first ring once the train finds it", name)
	}
	if slices.Contains(a.Approved, version) {
		return true, nil
	}
	var awaiting []string
	newest := ""
	for _, r := range t.Status.Ledger {
		if r.Version == version {
			if r.State == ranv1alpha1.ReleaseAwaitingApproval {
				return false, nil
			}
			return false, refused("release %s is %s in the ledger of ReleaseTrain %s (%s), not AwaitingApproval: there is nothing to approve",
				version, r.State, name, r.Message)
		}
		if r.State == ranv1alpha1.ReleaseAwaitingApproval {
			awaiting = append(awaiting, r.Version)
		}
		if newest == "" || train.Newer(r.Version, newest) {
			newest = r.Version
		}
	}
	if !ahead {
		waits := "no release awaits approval"
		if len(awaiting) > 0 {
			waits = "awaiting approval: " + strings.Join(awaiting, ", ")
		}
		return false, refused("ReleaseTrain %s has not found release %s (%s); --ahead approves a release before the train finds it",
			name, version, waits)
	}
	if _, err := semver.Parse(version); err != nil {
		return false, refused("%q is not a release version such as 4.16.13: only a version the channel may offer can be approved ahead", version)
	}
	if newest != "" && !train.Newer(version, newest) {
		return false, refused("release %s is not newer than %s, which ReleaseTrain %s already took: the train takes only newer releases, "+
			"so it would never find this one", version, newest, name)
	}
	return false, nil
}
