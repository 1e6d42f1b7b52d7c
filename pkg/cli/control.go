package cli

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// newPauseCommand and newResumeCommand set spec.paused, as `kubectl patch` would.
func newPauseCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "pause NAME",
		Short: "Pause a rollout: no new batch, cluster or policy starts; the time paused does not count",
		Long: `Pause a rollout by setting spec.paused: clusters working on a policy go on, nothing new
starts, and the time paused does not count against the timeouts. Resume with "kubectl cgu resume".`,
		Example: `  kubectl cgu pause upgrade -n ztp-upgrades`,
		Args:    exactlyOneName,
		RunE:    runE(func(ctx context.Context, args []string) error { return e.setPaused(ctx, args[0], true) }),
	}
}

func newResumeCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "resume NAME",
		Short:   "Resume a paused rollout",
		Example: `  kubectl cgu resume upgrade -n ztp-upgrades`,
		Args:    exactlyOneName,
		RunE:    runE(func(ctx context.Context, args []string) error { return e.setPaused(ctx, args[0], false) }),
	}
}

func (e *env) setPaused(ctx context.Context, name string, paused bool) error {
	c, cgu, err := e.upgrade(ctx, outputTable, name)
	if err != nil {
		return err
	}
	patch := client.MergeFrom(cgu.DeepCopy())
	cgu.Spec.Paused = paused
	if err := c.Patch(ctx, cgu, patch); err != nil {
		return fmt.Errorf("patching %s/%s: %w", cgu.Namespace, cgu.Name, err)
	}
	what := "Resumed"
	if paused {
		what = "Paused"
	}
	fmt.Fprintf(e.IOStreams.Out, "%s %s/%s\n", what, cgu.Namespace, cgu.Name)
	return nil
}

type approveOptions struct {
	*env
	batch int
}

func newApproveCommand(e *env) *cobra.Command {
	o := &approveOptions{env: e}
	cmd := &cobra.Command{
		Use:   "approve NAME",
		Short: "Approve the batch a rollout waits on (spec.approval, or a managed policy that changed)",
		Long: `Approve the batch a rollout waits on, or with --batch a later one ahead of time. A rollout
waits for an approval before the batches spec.approval names, and before the next batch when a
managed policy changed since the rollout accepted it (approving accepts the change). The
approval names you as the API server knows you (a SelfSubjectReview); the operator records
the batch, you and the time in status.approvals. Who may approve is who may patch the
ClusterGroupUpgrade.`,
		Example: `  kubectl cgu approve upgrade -n ztp-upgrades
  kubectl cgu approve upgrade -n ztp-upgrades --batch 4`,
		Args: exactlyOneName,
		RunE: runE(o.run),
	}
	cmd.Flags().IntVar(&o.batch, "batch", 0, "The 1-based batch to approve; default: the batch waiting for approval")
	return cmd
}

func (o *approveOptions) run(ctx context.Context, args []string) error {
	c, cgu, err := o.upgrade(ctx, outputTable, args[0])
	if err != nil {
		return err
	}
	batch := o.batch
	if batch == 0 {
		w := cgu.Status.Waiting
		if w == nil || (w.Reason != ranv1alpha1.ReasonWaitingForApproval && w.Reason != ranv1alpha1.ReasonManagedPolicyChanged) {
			return usageError("%s/%s does not wait for an approval; name a batch with --batch to approve ahead", cgu.Namespace, cgu.Name)
		}
		batch = w.Batch
	}
	if batch < 1 {
		return usageError("--batch must be at least 1, got %d", batch)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return fmt.Errorf("asking the API server who you are: %w", err)
	}
	patch := client.MergeFrom(cgu.DeepCopy())
	if cgu.Annotations == nil {
		cgu.Annotations = map[string]string{}
	}
	cgu.Annotations[ranv1alpha1.AnnotationApproveBatch] = strconv.Itoa(batch)
	cgu.Annotations[ranv1alpha1.AnnotationApprovedBy] = review.Status.UserInfo.Username
	if err := c.Patch(ctx, cgu, patch); err != nil {
		return fmt.Errorf("patching %s/%s: %w", cgu.Namespace, cgu.Name, err)
	}
	fmt.Fprintf(o.IOStreams.Out, "Approved batch %d of %s/%s as %s\n", batch, cgu.Namespace, cgu.Name, review.Status.UserInfo.Username)
	return nil
}
