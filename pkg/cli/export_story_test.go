package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// WriteClusterStory runs what kubectl cgu status NAME --managed-cluster CLUSTER runs, with
// the plugin's own client of the hub kubeconfig reaches, colour off, at now.
func WriteClusterStory(ctx context.Context, w io.Writer, kubeconfig, namespace, name, cluster, output string, now time.Time) error {
	e := &env{config: genericclioptions.NewConfigFlags(true)}
	e.config.KubeConfig = &kubeconfig
	e.config.CacheDir = nil
	c, _, err := e.client()
	if err != nil {
		return err
	}
	cgu, err := getUpgrade(ctx, c, namespace, name)
	if err != nil {
		return err
	}
	return writeClusterStory(ctx, w, painter{}, c, cgu, cluster, now, output)
}

// AddClusterStoryFlag is addClusterStoryFlag, for the specs to check the flag's name.
func AddClusterStoryFlag(cmd *cobra.Command, target *string) { addClusterStoryFlag(cmd, target) }
