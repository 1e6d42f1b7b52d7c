package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/cgu-operator/cgu-operator/pkg/dashboard"
)

// DefaultDashboardPort is where kubectl cgu dashboard listens unless --port says otherwise.
const DefaultDashboardPort = 3270

type dashboardOptions struct {
	*env
	allNamespaces bool
	port          int
	address       string
}

func newDashboardCommand(e *env) *cobra.Command {
	o := &dashboardOptions{env: e}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a live web page of the rollouts of a namespace, or of every namespace",
		Long: `Serve a web page, on this machine, that shows the ClusterGroupUpgrades (and
ImageBasedGroupUpgrades) of the namespace (-n, or the kubeconfig's), or of every namespace with
-A, live: their state, what they wait for, the plan as a timeline of batches with its estimate,
the running batch's clusters, the held and failed clusters with their reasons, the upgrade
checks' verdicts and the latest events. Its buttons enable, pause, resume and approve, as the
commands of the same names do, with your credentials: the hub refuses what your RBAC does not
allow, and the page shows its answer.

The page is served from this binary; nothing is installed on the hub. It reads the hub through
informers and receives every change as it happens; it never polls. It answers only requests
naming its own address, and acts only for the page it served. Stop it with Ctrl-C.`,
		Example: `  kubectl cgu dashboard -n ztp-upgrades
  kubectl cgu dashboard -A --port 8080`,
		Args: cobra.NoArgs,
		RunE: runE(o.run),
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Show the rollouts of every namespace")
	cmd.Flags().IntVar(&o.port, "port", DefaultDashboardPort, "The port to serve the page on; 0 picks a free one")
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1",
		"The address to serve the page on; another than a loopback address lets anyone who reaches it act with your credentials")
	return cmd
}

func (o *dashboardOptions) run(ctx context.Context, _ []string) error {
	if o.port < 0 || o.port > 65535 {
		return usageError("--port must be between 0 and 65535, got %d", o.port)
	}
	cfg, namespace, err := o.restConfig()
	if err != nil {
		return err
	}
	if o.allNamespaces {
		namespace = ""
	}
	opts := dashboard.Options{Config: cfg, Namespace: namespace, Now: o.Now}
	address := net.JoinHostPort(o.address, strconv.Itoa(o.port))
	return dashboard.Serve(ctx, opts, address, func(url string) {
		scope := "every namespace"
		if namespace != "" {
			scope = "namespace " + namespace
		}
		fmt.Fprintf(o.IOStreams.Out, "Dashboard of %s at %s (Ctrl-C stops it)\n", scope, url)
	})
}
