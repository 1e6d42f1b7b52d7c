package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/control"
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
	if err := control.SetPaused(ctx, c, client.ObjectKeyFromObject(cgu), paused); err != nil {
		return err
	}
	what := "Resumed"
	if paused {
		what = "Paused"
	}
	fmt.Fprintf(e.IOStreams.Out, "%s %s/%s\n", what, cgu.Namespace, cgu.Name)
	return nil
}

func newEnableCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "enable NAME",
		Short: "Start a rollout: set spec.enable to true",
		Long: `Start a rollout by setting spec.enable to true, as "kubectl patch" would. The rollout starts
once it is valid, unblocked and inside its maintenance windows; "kubectl cgu status" says what
it waits for.`,
		Example: `  kubectl cgu enable upgrade -n ztp-upgrades`,
		Args:    exactlyOneName,
		RunE: runE(func(ctx context.Context, args []string) error {
			c, cgu, err := e.upgrade(ctx, outputTable, args[0])
			if err != nil {
				return err
			}
			if err := control.Enable(ctx, c, client.ObjectKeyFromObject(cgu)); err != nil {
				return err
			}
			fmt.Fprintf(e.IOStreams.Out, "Enabled %s/%s\n", cgu.Namespace, cgu.Name)
			return nil
		}),
	}
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
	if o.batch < 0 {
		return usageError("--batch must be at least 1, got %d", o.batch)
	}
	a, err := control.Approve(ctx, c, client.ObjectKeyFromObject(cgu), o.batch)
	if errors.Is(err, control.ErrNotWaitingForApproval) {
		return usageError("%s/%s does not wait for an approval; name a batch with --batch to approve ahead", cgu.Namespace, cgu.Name)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.IOStreams.Out, "Approved batch %d of %s/%s as %s\n", a.Batch, cgu.Namespace, cgu.Name, a.By)
	return nil
}
