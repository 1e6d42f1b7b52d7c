package control

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// awaitingTrain requires approval, has approved 4.16.11 and holds 4.16.12 AwaitingApproval
// and 4.16.11 Delivered.
func awaitingTrain() *ranv1alpha1.ReleaseTrain {
	return &ranv1alpha1.ReleaseTrain{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge"},
		Spec: ranv1alpha1.ReleaseTrainSpec{
			Rings:    []ranv1alpha1.TrainRing{{Name: "lab"}},
			Approval: &ranv1alpha1.TrainApproval{Required: true, Approved: []string{"4.16.11"}},
		},
		Status: ranv1alpha1.ReleaseTrainStatus{Ledger: []ranv1alpha1.LedgerRelease{
			{Version: "4.16.12", State: ranv1alpha1.ReleaseAwaitingApproval, Message: "waits for an approval (kubectl cgu train approve)"},
			{Version: "4.16.11", State: ranv1alpha1.ReleaseDelivered, Message: "qualified in every ring"},
		}},
	}
}

func TestApprovable(t *testing.T) {
	notRequired := awaitingTrain()
	notRequired.Spec.Approval.Required = false
	cases := map[string]struct {
		train          *ranv1alpha1.ReleaseTrain
		version        string
		ahead          bool
		wantAlready    bool
		wantRefusal    string
		wantApprovable bool
	}{
		"the release awaiting approval": {train: awaitingTrain(), version: "4.16.12", wantApprovable: true},
		"a release approved already":    {train: awaitingTrain(), version: "4.16.11", wantAlready: true},
		"a train that does not require approval": {train: notRequired, version: "4.16.12",
			wantRefusal: "ReleaseTrain ns/edge does not require approval (spec.approval.required is not true): " +
				"each release enters the first ring once the train finds it"},
		"a release the ledger holds in another state": {train: func() *ranv1alpha1.ReleaseTrain {
			t := awaitingTrain()
			t.Spec.Approval.Approved = nil
			return t
		}(), version: "4.16.11", ahead: true,
			wantRefusal: "release 4.16.11 is Delivered in the ledger of ReleaseTrain ns/edge (qualified in every ring), " +
				"not AwaitingApproval: there is nothing to approve"},
		"a release the train has not found": {train: awaitingTrain(), version: "4.16.13",
			wantRefusal: "ReleaseTrain ns/edge has not found release 4.16.13 (awaiting approval: 4.16.12); " +
				"--ahead approves a release before the train finds it"},
		"a release not found, none awaiting": {train: func() *ranv1alpha1.ReleaseTrain {
			t := awaitingTrain()
			t.Status.Ledger = t.Status.Ledger[1:]
			return t
		}(), version: "4.16.13",
			wantRefusal: "ReleaseTrain ns/edge has not found release 4.16.13 (no release awaits approval); " +
				"--ahead approves a release before the train finds it"},
		"ahead, a newer release": {train: awaitingTrain(), version: "4.16.13", ahead: true, wantApprovable: true},
		"ahead, an empty ledger": {train: func() *ranv1alpha1.ReleaseTrain { t := awaitingTrain(); t.Status.Ledger = nil; return t }(), version: "4.16.1", ahead: true, wantApprovable: true},
		"ahead, not a version": {train: awaitingTrain(), version: "4.16.x", ahead: true,
			wantRefusal: `"4.16.x" is not a release version such as 4.16.13: only a version the channel may offer can be approved ahead`},
		"ahead, an older release": {train: awaitingTrain(), version: "4.16.10", ahead: true,
			wantRefusal: "release 4.16.10 is not newer than 4.16.12, which ReleaseTrain ns/edge already took: " +
				"the train takes only newer releases, so it would never find this one"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			already, err := approvable(tc.train, tc.version, tc.ahead)
			var r *RefusedError
			switch {
			case tc.wantRefusal != "":
				if !errors.As(err, &r) || r.Reason != tc.wantRefusal {
					t.Errorf("error %v, want the refusal %q", err, tc.wantRefusal)
				}
			case err != nil:
				t.Errorf("error %v, want none", err)
			}
			if already != tc.wantAlready {
				t.Errorf("already %v, want %v", already, tc.wantAlready)
			}
			if approvable := err == nil && !already; approvable != tc.wantApprovable {
				t.Errorf("approvable %v, want %v", approvable, tc.wantApprovable)
			}
		})
	}
}

// ApproveRelease writes nothing when it refuses, or when the release is approved already;
// the plugin's suite runs its write on a real API server.
func TestApproveReleaseWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := ranv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tr := awaitingTrain()
	key := client.ObjectKeyFromObject(tr)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(tr).Build()
	approved := func() []string {
		read := &ranv1alpha1.ReleaseTrain{}
		if err := c.Get(ctx, key, read); err != nil {
			t.Fatal(err)
		}
		return read.Spec.Approval.Approved
	}

	a, err := ApproveRelease(ctx, c, key, "4.16.11", false)
	if err != nil || !a.Already || a.By != "" {
		t.Errorf("approving 4.16.11 again: %+v, %v; want already approved", a, err)
	}
	_, err = ApproveRelease(ctx, c, key, "4.16.13", false)
	var r *RefusedError
	if !errors.As(err, &r) {
		t.Errorf("approving 4.16.13, not found: %v, want a refusal", err)
	}
	// The fake client has no authentication API: asking who the caller is fails, and nothing
	// is written.
	if _, err := ApproveRelease(ctx, c, key, "4.16.12", false); err == nil || errors.As(err, &r) {
		t.Errorf("approving 4.16.12 without knowing the caller: %v, want the error of the review", err)
	}
	if got := approved(); !slices.Equal(got, []string{"4.16.11"}) {
		t.Errorf("spec.approval.approved %v, want it unchanged", got)
	}
}

func TestWithApprovalMakesRoomInAFullList(t *testing.T) {
	tr := awaitingTrain()
	tr.Status.Ledger = append([]ranv1alpha1.LedgerRelease{{Version: "4.16.20", State: ranv1alpha1.ReleaseAwaitingApproval}},
		tr.Status.Ledger...)
	// 4.16.11 (delivered) and 4.16.5 (older than the ledger) are no longer read; 4.16.20
	// awaits approval, and the rest are approved ahead.
	full := []string{"4.16.11", "4.16.5", "4.16.20"}
	for i := 0; len(full) < maxApproved; i++ {
		full = append(full, "4.17."+strconv.Itoa(i))
	}
	tr.Spec.Approval.Approved = slices.Clone(full)
	got, err := withApproval(tr, "4.16.12")
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(full[2:]), "4.16.12")
	if !slices.Equal(got, want) {
		t.Fatalf("approved %v, want %v", got, want)
	}
	if !slices.Equal(tr.Spec.Approval.Approved, full) {
		t.Fatal("the train's spec was changed")
	}

	// Below the bound, nothing is let go of.
	tr.Spec.Approval.Approved = []string{"4.16.11"}
	if got, _ := withApproval(tr, "4.16.12"); !slices.Equal(got, []string{"4.16.11", "4.16.12"}) {
		t.Fatalf("approved %v, want 4.16.11 kept", got)
	}

	// Full of approvals the train still reads: refused, with what to do.
	tr.Spec.Approval.Approved = full[2:]
	for i := 100; len(tr.Spec.Approval.Approved) < maxApproved; i++ {
		tr.Spec.Approval.Approved = append(tr.Spec.Approval.Approved, "4.17."+strconv.Itoa(i))
	}
	_, err = withApproval(tr, "4.16.12")
	var r *RefusedError
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "lists 32 releases, the most it may") {
		t.Fatalf("a list full of approvals still read: %v, want a refusal", err)
	}
}
