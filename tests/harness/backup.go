package harness

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/backup/recovery"
	"github.com/cgu-operator/cgu-operator/tests/sim"
)

// nodeFiles are what a simulated single-node cluster's root filesystem holds before its
// backup: a little of each tree the backup saves.
var nodeFiles = map[string]string{
	"/etc/hostname":                       "%s\n",
	"/etc/kubernetes/manifests/etcd.yaml": "kind: Pod\n",
	"/usr/local/bin/cluster-backup.sh":    "#!/bin/bash\n",
	"/var/lib/kubelet/config.json":        `{"auths":{}}`,
	"/var/lib/etcd/member/snap/db":        "etcd database of %s\n",
}

// runBackup plays precache backup: the spoke program's own code (pkg/backup/recovery) on a
// directory standing for the cluster's root filesystem (NodeRoot), with a host that plays
// OpenShift's cluster-backup.sh, and the free space SetNodeFreeSpace gives.
func (e *Env) runBackup(ctx context.Context, cluster string, args []string) sim.JobResult {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run, dir := fs.String("run", "", ""), fs.String("dir", recovery.DefaultDir, "")
	fs.String("root", "", "")
	namespace, name := fs.String("report-namespace", "", ""), fs.String("report-configmap", "", "")
	if err := fs.Parse(args); err != nil || *run == "" {
		return sim.JobFailed(fmt.Sprintf("precache backup: bad flags %q", args))
	}
	if e.backupStalled(cluster) {
		<-ctx.Done() // the Job's deadline, or its deletion, ends the pod
		return sim.JobFailed("precache backup: stopped")
	}
	root, err := e.nodeRoot(cluster)
	if err != nil {
		return sim.JobFailed("precache backup: " + err.Error())
	}
	report := func(s recovery.Summary) {
		if *namespace != "" && *name != "" {
			_ = e.writeSummary(cluster, *namespace, *name, s)
		}
	}
	opts := recovery.Options{Root: root, Dir: *dir, Run: *run, Host: nodeHost{root: root},
		FreeBytes: func(string) (uint64, error) { return e.nodeFreeSpace(cluster), nil }, Now: time.Now}
	s := recovery.Backup(ctx, opts, report)
	report(s)
	return sim.JobResult{ExitCode: int32(recovery.ExitCode(s)), Message: s.Error} //nolint:gosec // G115: an exit code
}

// NodeRoot is the directory standing for a simulated cluster's root filesystem, made with a
// few files the first time.
func (e *Env) NodeRoot(cluster string) string {
	return filepath.Join(e.precacheDir, "nodes", cluster)
}

func (e *Env) nodeRoot(cluster string) (string, error) {
	root := e.NodeRoot(cluster)
	if _, err := os.Stat(root); err == nil {
		return root, nil
	}
	for path, content := range nodeFiles {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			return "", err
		}
		if strings.Contains(content, "%s") {
			content = fmt.Sprintf(content, cluster)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil { //nolint:gosec // G306: a test node's files
			return "", err
		}
	}
	return root, nil
}

// SetNodeFreeSpace sets the free space of a cluster's recovery directory (1 TiB unless set).
func (e *Env) SetNodeFreeSpace(cluster string, bytes uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nodeFree[cluster] = bytes
}

func (e *Env) nodeFreeSpace(cluster string) uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if free, ok := e.nodeFree[cluster]; ok {
		return free
	}
	return 1 << 40
}

// StallBackup makes the backup program of a cluster hang until its Job's deadline.
func (e *Env) StallBackup(cluster string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stalledBackup[cluster] = true
}

func (e *Env) backupStalled(cluster string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stalledBackup[cluster]
}

// nodeHost plays a simulated node's commands: cluster-backup.sh DIR writes an etcd snapshot
// and the static pod resources into DIR.
type nodeHost struct{ root string }

func (h nodeHost) Run(_ context.Context, name string, args ...string) error {
	if name != "/usr/local/bin/cluster-backup.sh" || len(args) != 2 {
		return fmt.Errorf("%s: not played by the simulated node", name)
	}
	dir := filepath.Join(h.root, args[1])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	stamp := time.Now().UTC().Format("2006-01-02_150405")
	if err := os.WriteFile(filepath.Join(dir, "snapshot_"+stamp+".db"), []byte("etcd snapshot"), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "static_kuberesources_"+stamp+".tar.gz"), []byte("static pod resources"), 0o600)
}
