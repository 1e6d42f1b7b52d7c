package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
)

// backupOptions are the flags of the backup command.
type backupOptions struct {
	root, dir, run                   string
	reportNamespace, reportConfigMap string
	terminationLog                   string
}

func parseBackupFlags(args []string, stderr io.Writer) (backupOptions, error) {
	var o backupOptions
	fs := flag.NewFlagSet("precache backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "root", "/host", "Where the node's root filesystem is mounted.")
	fs.StringVar(&o.dir, "dir", recovery.DefaultDir, "The recovery directory, a path on the node.")
	fs.StringVar(&o.run, "run", "", "The run the summary answers, as the hub names it (required).")
	fs.StringVar(&o.reportNamespace, "report-namespace", "", "Namespace of the report ConfigMap; with --report-configmap.")
	fs.StringVar(&o.reportConfigMap, "report-configmap", "", "Name of the report ConfigMap; with --report-namespace.")
	fs.StringVar(&o.terminationLog, "termination-log", defaultTerminationLog, "File the final summary is written to, as the container's termination message.")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case o.run == "":
		return o, errors.New("missing required flags: --run")
	case (o.reportNamespace == "") != (o.reportConfigMap == ""):
		return o, errors.New("--report-namespace and --report-configmap go together")
	}
	return o, nil
}

// backupMain runs the backup command on the node and returns its exit code
// (recovery.ExitCode).
func backupMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseBackupFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return recovery.ExitOK
	}
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "precache backup:", err)
		return recovery.ExitUnrecoverable
	}
	r := reporter{command: "precache backup", namespace: o.reportNamespace, name: o.reportConfigMap,
		terminationLog: o.terminationLog, stderr: stderr}
	if o.reportConfigMap != "" {
		if r.client, err = kubeClient(); err != nil {
			_, _ = fmt.Fprintln(stderr, "precache backup:", err)
			return recovery.ExitRetryable
		}
	}
	self, _ := os.Executable() // without it, the backup leaves no copy of the program
	opts := recovery.Options{Root: o.root, Dir: o.dir, Run: o.run, Host: nodeHost(o.root), FreeBytes: recovery.FreeBytes,
		Self: self, KeepOwners: true, Now: time.Now}
	s := recovery.Backup(ctx, opts, func(s recovery.Summary) { r.write(ctx, s) })
	r.final(ctx, s)
	if s.Phase == recovery.PhaseSucceeded {
		_, _ = fmt.Fprintf(stdout, "Run %s: backup of %d bytes in %s %s\n", s.Run, s.Bytes, o.dir, s.Note)
	} else {
		_, _ = fmt.Fprintf(stderr, "precache backup: run %s failed: %s\n", s.Run, s.Error)
	}
	return recovery.ExitCode(s)
}

// nodeHost runs the node's commands: directly when the program runs on the node itself
// (root /), in the node's root with chroot from a container.
func nodeHost(root string) recovery.Host {
	if root == "/" {
		return direct{}
	}
	return recovery.Chroot{Root: root}
}

// direct runs commands as they are, for the restore run on the node.
type direct struct{}

func (direct) Run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return nil
}

// restoreMain runs the restore on the node (recovery.Restore); see docs/backup.md.
func restoreMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "/", "Where the node's root filesystem is (/ when run on the node).")
	dir := fs.String("dir", recovery.DefaultDir, "The recovery directory, a path on the node.")
	kubeconfig := fs.String("kubeconfig", "", "A kubeconfig of the cluster, to roll the control plane out again at the end; without it, the commands to do so are printed.")
	restart := fs.Bool("restart", false, "Start the restore over, forgetting the steps done.")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	opts := recovery.Options{Root: *root, Dir: *dir, Host: nodeHost(*root), KeepOwners: true, Now: time.Now}
	result, err := recovery.Restore(ctx, opts, *kubeconfig, *restart)
	_, _ = fmt.Fprintf(stdout, "Steps done: %s\n", strings.Join(result.Done, ", "))
	if err != nil {
		_, _ = fmt.Fprintln(stderr, "restore:", err)
		_, _ = fmt.Fprintln(stderr, "Fix the cause and run the restore again: it goes on from the step that failed (--restart starts over).")
		return 1
	}
	_, _ = fmt.Fprintf(stdout, "Next: %s\n", result.Next)
	return 0
}
