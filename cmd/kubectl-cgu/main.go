// Command kubectl-cgu is the kubectl and oc plugin showing ClusterGroupUpgrades: installed
// on the PATH it runs as `kubectl cgu` and `oc cgu`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cgu-operator/cgu-operator/pkg/cli"
)

func main() {
	ctrllog.SetLogger(logr.Discard()) // the client's logs are not for the user
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, cli.DefaultOptions(), os.Args[1:])
	stop()
	os.Exit(code)
}
