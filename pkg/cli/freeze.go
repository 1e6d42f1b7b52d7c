package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cgu-operator/cgu-operator/pkg/control"
)

type freezeOptions struct {
	*env
	reason string
}

func newFreezeCommand(e *env) *cobra.Command {
	o := &freezeOptions{env: e}
	cmd := &cobra.Command{
		Use:   "freeze --reason WHY",
		Short: "Freeze every rollout on the hub: no batch or cluster starts until unfreeze",
		Long: `Freeze the fleet: no ClusterGroupUpgrade on the hub starts a batch or a cluster; clusters
already upgrading finish, and the time frozen does not count against the rollouts' timeouts.
Every frozen rollout's status says why (Progressing reason FleetFrozen), with who froze the
fleet and when. The freeze is the cluster-scoped FleetFreeze named "manual"; "kubectl cgu
unfreeze" lets the rollouts go on. Other FleetFreezes freeze the fleet as well.`,
		Example: `  kubectl cgu freeze --reason "change freeze for the holiday sales"
  kubectl get fleetfreezes`,
		Args: cobra.NoArgs,
		RunE: runE(func(ctx context.Context, _ []string) error { return o.set(ctx, true) }),
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "Why the fleet is frozen (required): every frozen rollout shows it")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

func newUnfreezeCommand(e *env) *cobra.Command {
	o := &freezeOptions{env: e}
	cmd := &cobra.Command{
		Use:   "unfreeze",
		Short: "Let the rollouts a freeze holds go on",
		Long: `Unfreeze the fleet's manual freeze (the FleetFreeze named "manual"), recording who did it and
when. Rollouts go on at once, unless another FleetFreeze still freezes the fleet.`,
		Example: `  kubectl cgu unfreeze --reason "the sales are over"`,
		Args:    cobra.NoArgs,
		RunE:    runE(func(ctx context.Context, _ []string) error { return o.set(ctx, false) }),
	}
	cmd.Flags().StringVar(&o.reason, "reason", "", "Why the fleet is unfrozen (optional)")
	return cmd
}

func (o *freezeOptions) set(ctx context.Context, frozen bool) error {
	c, _, err := o.client()
	if err != nil {
		return err
	}
	f, err := control.SetFrozen(ctx, c, frozen, o.reason, o.now())
	if err != nil {
		return err
	}
	if frozen {
		fmt.Fprintf(o.IOStreams.Out, "Froze the fleet as %s: %s\n", f.By, f.Reason)
		return nil
	}
	fmt.Fprintf(o.IOStreams.Out, "Unfroze the fleet's manual freeze as %s\n", f.By)
	return nil
}
