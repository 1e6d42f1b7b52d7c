// Package control changes a ClusterGroupUpgrade the way a person steering a rollout does:
// enable it, pause or resume it, approve a batch; and a ReleaseTrain: approve a release.
// kubectl cgu's commands and its dashboard both go through these functions, so that a button
// and a command write the same patch and are refused by the API server in the same way when
// RBAC says no.
//
// Each function reads the object, patches only the field or annotations it owns (a JSON
// merge patch, so a concurrent change of another field is kept) and returns the API server's
// error unchanged, wrapped with what was being done: callers can test it with
// apierrors.IsForbidden or IsNotFound.
package control

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// ErrNotWaitingForApproval is returned by Approve when no batch is named and the rollout
// does not wait for an approval.
var ErrNotWaitingForApproval = errors.New("does not wait for an approval")

// SetPaused sets spec.paused of the ClusterGroupUpgrade key.
func SetPaused(ctx context.Context, c client.Client, key client.ObjectKey, paused bool) error {
	return patch(ctx, c, key, func(cgu *ranv1alpha1.ClusterGroupUpgrade) error {
		cgu.Spec.Paused = paused
		return nil
	})
}

// Enable sets spec.enable of the ClusterGroupUpgrade key to true.
func Enable(ctx context.Context, c client.Client, key client.ObjectKey) error {
	return patch(ctx, c, key, func(cgu *ranv1alpha1.ClusterGroupUpgrade) error {
		cgu.Spec.Enable = ptr.To(true)
		return nil
	})
}

// Approval is what Approve wrote.
type Approval struct {
	// Batch is the 1-based batch approved.
	Batch int
	// By is the user the API server says the caller is.
	By string
}

// Approve approves batch (1-based) of the ClusterGroupUpgrade key, or, when batch is 0,
// the batch it waits on for an approval (ErrNotWaitingForApproval when it waits on none).
// The approval names the caller as the API server knows them (a SelfSubjectReview); the
// operator records it in status.approvals.
func Approve(ctx context.Context, c client.Client, key client.ObjectKey, batch int) (Approval, error) {
	var a Approval
	err := patch(ctx, c, key, func(cgu *ranv1alpha1.ClusterGroupUpgrade) error {
		a.Batch = batch
		if a.Batch == 0 {
			w := cgu.Status.Waiting
			if w == nil || (w.Reason != ranv1alpha1.ReasonWaitingForApproval && w.Reason != ranv1alpha1.ReasonManagedPolicyChanged) {
				return ErrNotWaitingForApproval
			}
			a.Batch = w.Batch
		}
		if a.Batch < 1 {
			return fmt.Errorf("the batch to approve must be at least 1, got %d", a.Batch)
		}
		by, err := whoAmI(ctx, c)
		if err != nil {
			return err
		}
		a.By = by
		if cgu.Annotations == nil {
			cgu.Annotations = map[string]string{}
		}
		cgu.Annotations[ranv1alpha1.AnnotationApproveBatch] = strconv.Itoa(a.Batch)
		cgu.Annotations[ranv1alpha1.AnnotationApprovedBy] = a.By
		return nil
	})
	return a, err
}

// patch reads the ClusterGroupUpgrade key, lets change modify it and writes the difference
// as a merge patch. An error of change is returned as it is, with nothing written.
func patch(ctx context.Context, c client.Client, key client.ObjectKey, change func(*ranv1alpha1.ClusterGroupUpgrade) error) error {
	cgu := &ranv1alpha1.ClusterGroupUpgrade{}
	if err := c.Get(ctx, key, cgu); err != nil {
		return fmt.Errorf("reading ClusterGroupUpgrade %s: %w", key, err)
	}
	before := client.MergeFrom(cgu.DeepCopy())
	if err := change(cgu); err != nil {
		return err
	}
	if err := c.Patch(ctx, cgu, before); err != nil {
		return fmt.Errorf("patching ClusterGroupUpgrade %s: %w", key, err)
	}
	return nil
}

// Freeze is what SetFrozen wrote.
type Freeze struct {
	Frozen bool
	// By is the user the API server says the caller is.
	By     string
	Reason string
}

// SetFrozen freezes the fleet (frozen), or lets it go on, through the FleetFreeze named
// ranv1alpha1.FleetFreezeManual, made when missing: it records why, who the API server says
// the caller is (a SelfSubjectReview) and now. A freeze needs a reason.
func SetFrozen(ctx context.Context, c client.Client, frozen bool, reason string, now time.Time) (Freeze, error) {
	if frozen && strings.TrimSpace(reason) == "" {
		return Freeze{}, errors.New("say why the fleet is frozen (--reason): every frozen rollout shows it")
	}
	by, err := whoAmI(ctx, c)
	if err != nil {
		return Freeze{}, err
	}
	f := Freeze{Frozen: frozen, By: by, Reason: reason}
	at := metav1.NewTime(now).Rfc3339Copy()
	spec := ranv1alpha1.FleetFreezeSpec{Frozen: frozen, Reason: reason, ChangedBy: f.By, ChangedAt: &at}
	ff := &ranv1alpha1.FleetFreeze{}
	err = c.Get(ctx, client.ObjectKey{Name: ranv1alpha1.FleetFreezeManual}, ff)
	switch {
	case apierrors.IsNotFound(err):
		ff = &ranv1alpha1.FleetFreeze{ObjectMeta: metav1.ObjectMeta{Name: ranv1alpha1.FleetFreezeManual}, Spec: spec}
		if err := c.Create(ctx, ff); err != nil {
			return f, fmt.Errorf("creating FleetFreeze %s: %w", ranv1alpha1.FleetFreezeManual, err)
		}
		return f, nil
	case err != nil:
		return f, fmt.Errorf("reading FleetFreeze %s: %w", ranv1alpha1.FleetFreezeManual, err)
	}
	before := ff.DeepCopy()
	ff.Spec = spec
	if err := c.Patch(ctx, ff, client.MergeFrom(before)); err != nil {
		return f, fmt.Errorf("patching FleetFreeze %s: %w", ranv1alpha1.FleetFreezeManual, err)
	}
	return f, nil
}

// whoAmI is the caller's user name, as the API server knows them (a SelfSubjectReview).
func whoAmI(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", fmt.Errorf("asking the API server who you are: %w", err)
	}
	return review.Status.UserInfo.Username, nil
}
