// Command precache is the spoke-side program of cgu-operator: the Jobs the operator starts on
// each managed cluster run it. Its commands: health collects what the pre-upgrade health
// check reads and writes it to a ConfigMap for the hub; pull pulls the images of a
// precaching spec into the node's image store and reports a summary; backup saves what a
// restore of a single-node cluster needs into /var/recovery; restore, run by an
// administrator on the node, puts it back (docs/backup.md).
//
//	precache health --namespace NS --configmap NAME --run RUN [--prometheus-url URL] [--token-file F] [--ca-file F]
//	precache pull --spec FILE --run RUN --store oci:DIR|podman [--authfile F] [--parallel N]
//	    [--report-namespace NS --report-configmap NAME] [--gc-threshold 85] [--termination-log F]
//	precache backup --run RUN [--root /host] [--dir /var/recovery] [--report-namespace NS --report-configmap NAME]
//	precache restore [--root /] [--dir /var/recovery] [--kubeconfig F] [--restart]
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// usage lists the commands.
const usage = `Usage: precache COMMAND [FLAGS]

Commands:
  health   Collect the cluster's health for the pre-upgrade check and write it to a ConfigMap.
  pull     Pull the images of a precaching spec into the node's image store.
  backup   Save what a restore of this single-node cluster needs into /var/recovery.
  restore  Put the node back as the backup saved it (run on the node, in two steps).

Run "precache COMMAND -h" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the command args name and returns its exit code: 0 on success; for health, 1
// otherwise; for pull, precache.ExitRetryable or precache.ExitUnrecoverable.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		_, _ = fmt.Fprint(stderr, usage)
		return 1
	}
	switch args[0] {
	case "health":
		return healthMain(ctx, args[1:], stdout, stderr)
	case "pull":
		return pullMain(ctx, args[1:], stdout, stderr)
	case "backup":
		return backupMain(ctx, args[1:], stdout, stderr)
	case "restore":
		return restoreMain(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		_, _ = fmt.Fprint(stdout, usage)
		return 0
	default:
		_, _ = fmt.Fprintf(stderr, "precache: unknown command %q\n%s", args[0], usage)
		return 1
	}
}
