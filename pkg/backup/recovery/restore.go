package recovery

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The steps of a restore, as ProgressFile records them, one per line.
const (
	StepStarted        = "started"
	StepRestoreFiles   = "restore_files"
	StepRestoreCluster = "restore_cluster"
)

// clusterRestoreScript restores etcd and the static pods from a cluster backup (OpenShift's
// own script).
const clusterRestoreScript = "/usr/local/bin/cluster-restore.sh"

// Redeployed are the control-plane operators a restore has roll their pods out again, so
// that they leave the revision the snapshot recorded (OpenShift's restore procedure).
var Redeployed = []string{"etcd", "kubeapiserver", "kubecontrollermanager", "kubescheduler"}

// RestoreResult says where a restore stands once a call ended.
type RestoreResult struct {
	// Done are the steps done so far, in order.
	Done []string
	// Next tells the operator what to do now.
	Next string
}

// Restore puts the node back as the backup in the recovery directory saved it, in two calls
// with a reboot between them, as OpenShift's single-node restore goes:
//
//  1. First call: with kubelet and CRI-O stopped and every pod removed, /usr/local and /etc
//     are made what the backup holds (files added since are removed; the paths of
//     EtcExcludeList are left alone), the machine config's other files are put back, and
//     kubelet is disabled so that the node boots without it. Then reboot.
//  2. Second call (resume): /var/lib/kubelet is made what the backup holds, CRI-O starts,
//     OpenShift's cluster-restore.sh restores etcd and the static pods from the snapshot,
//     kubelet is enabled and started; with a kubeconfig, the control-plane operators are
//     asked to roll their pods out again (Redeployed).
//
// ProgressFile records each step, so that a call repeated after a failure goes on where the
// last one stopped, and a backup run meanwhile leaves the directory alone; it is removed at
// the end. restart starts over. The operating system's own rollback to the release the
// backup was taken on (rpm-ostree rollback) comes before the first call; see
// docs/backup.md.
func Restore(ctx context.Context, o Options, kubeconfig string, restart bool) (RestoreResult, error) {
	if err := checkBackup(o); err != nil {
		return RestoreResult{}, err
	}
	if restart {
		if err := os.Remove(o.dir(ProgressFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return RestoreResult{}, err
		}
	}
	done, err := readProgress(o)
	if err != nil {
		return RestoreResult{}, err
	}
	if !slices.Contains(done, StepStarted) {
		if err := addProgress(o, &done, StepStarted); err != nil {
			return RestoreResult{Done: done}, err
		}
	}
	if !slices.Contains(done, StepRestoreFiles) {
		if err := restoreFiles(ctx, o); err != nil {
			return RestoreResult{Done: done}, fmt.Errorf("restoring the files: %w", err)
		}
		if err := addProgress(o, &done, StepRestoreFiles); err != nil {
			return RestoreResult{Done: done}, err
		}
		return RestoreResult{Done: done, Next: "reboot the node (systemctl reboot), then run the restore again to restore the cluster"}, nil
	}
	if err := restoreCluster(ctx, o); err != nil {
		return RestoreResult{Done: done}, fmt.Errorf("restoring the cluster: %w", err)
	}
	if err := addProgress(o, &done, StepRestoreCluster); err != nil {
		return RestoreResult{Done: done}, err
	}
	if err := os.Remove(o.dir(ProgressFile)); err != nil {
		return RestoreResult{Done: done}, err
	}
	return RestoreResult{Done: done, Next: rollOut(ctx, o, kubeconfig)}, nil
}

// rollOut has the control plane roll its pods out again with oc and the kubeconfig, and says
// what is left to do. The cluster is restored either way: a failure here (no oc on the node,
// the API not up yet) leaves the commands to run by hand, not the restore to run again.
func rollOut(ctx context.Context, o Options, kubeconfig string) string {
	if kubeconfig == "" {
		return "roll the control-plane pods out again: " + strings.Join(redeployCommands(""), "; ")
	}
	if err := redeploy(ctx, o, kubeconfig); err != nil {
		return fmt.Sprintf("roll the control-plane pods out again (%v): %s", err, strings.Join(redeployCommands(""), "; "))
	}
	return "the node runs the restored release; check the cluster operators (oc get clusteroperators)"
}

// checkBackup checks that the recovery directory holds a complete backup.
func checkBackup(o Options) error {
	data, err := os.ReadFile(o.dir(ManifestFile))
	if err != nil {
		return fmt.Errorf("no complete backup in %s: %w", o.Dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("reading %s: %w", ManifestFile, err)
	}
	for _, p := range []string{PartCluster, PartEtc, PartLocal, PartKubelet, PartExtras} {
		if _, err := os.Stat(o.dir(p)); err != nil {
			return fmt.Errorf("the backup in %s lacks %s: %w", o.Dir, p, err)
		}
	}
	return checkSnapshot(o.dir(PartCluster))
}

func readProgress(o Options) ([]string, error) {
	data, err := os.ReadFile(o.dir(ProgressFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}

func addProgress(o Options, done *[]string, step string) error {
	*done = append(*done, step)
	return os.WriteFile(o.dir(ProgressFile), []byte(strings.Join(*done, "\n")+"\n"), 0o600)
}

// restoreFiles is the first call's work.
func restoreFiles(ctx context.Context, o Options) error {
	for _, cmd := range [][]string{{"systemctl", "stop", "kubelet"}, {"crictl", "rmp", "-fa"}, {"systemctl", "stop", "crio"}} {
		if err := o.Host.Run(ctx, cmd[0], cmd[1:]...); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(o.dir(EtcExcludeList))
	if err != nil {
		return err
	}
	excludes := strings.Fields(string(data))
	if err := syncTree(o.dir(PartLocal), o.node("/usr/local"), nil, o.KeepOwners); err != nil {
		return fmt.Errorf("/usr/local: %w", err)
	}
	if err := syncTree(o.dir(PartEtc), o.node("/etc"), excludes, o.KeepOwners); err != nil {
		return fmt.Errorf("/etc: %w", err)
	}
	if err := extract(o.dir(PartExtras), o.node("/")); err != nil {
		return fmt.Errorf("%s: %w", PartExtras, err)
	}
	for _, cmd := range [][]string{{"systemctl", "daemon-reload"}, {"systemctl", "disable", "kubelet"}} {
		if err := o.Host.Run(ctx, cmd[0], cmd[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// restoreCluster is the second call's work.
func restoreCluster(ctx context.Context, o Options) error {
	if err := syncTree(o.dir(PartKubelet), o.node("/var/lib/kubelet"), nil, o.KeepOwners); err != nil {
		return fmt.Errorf("/var/lib/kubelet: %w", err)
	}
	steps := [][]string{
		{"systemctl", "start", "crio"},
		{clusterRestoreScript, filepath.Join(o.Dir, PartCluster)},
		{"systemctl", "enable", "kubelet"},
		{"systemctl", "restart", "kubelet"},
	}
	for _, cmd := range steps {
		if err := o.Host.Run(ctx, cmd[0], cmd[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// redeploy asks each operator of Redeployed to roll its pods out again, with oc.
func redeploy(ctx context.Context, o Options, kubeconfig string) error {
	for _, c := range redeployCommands(kubeconfig) {
		args := strings.Fields(c)
		if err := o.Host.Run(ctx, args[0], args[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// redeployCommands ask each operator of Redeployed to roll its pods out again.
func redeployCommands(kubeconfig string) []string {
	out := make([]string, len(Redeployed))
	for i, op := range Redeployed {
		flag := ""
		if kubeconfig != "" {
			flag = " --kubeconfig " + kubeconfig
		}
		out[i] = fmt.Sprintf(`oc%s patch %s cluster --type=merge -p {"spec":{"forceRedeploymentReason":"recovery"}}`, flag, op)
	}
	return out
}

// syncTree makes dst what src is: entries of src are copied over (see copyTree), entries of
// dst that src does not have are removed; the excluded paths (relative to dst) are left as
// they are either way. It runs as root on the node being restored, with kubelet and CRI-O
// stopped: nothing else writes the trees meanwhile.
func syncTree(src, dst string, excludes []string, keepOwners bool) error {
	excluded := func(rel string) bool {
		for _, e := range excludes {
			if rel == e || strings.HasPrefix(rel, e+"/") {
				return true
			}
		}
		return false
	}
	if err := removeExtra(src, dst, excluded); err != nil {
		return err
	}
	return putBack(src, dst, excluded, keepOwners)
}

// skip tells WalkDir to leave out an excluded entry.
func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// removeExtra removes the entries of dst that src does not have.
func removeExtra(src, dst string, excluded func(string) bool) error {
	return filepath.WalkDir(dst, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dst, path)
		switch {
		case err != nil || rel == ".":
			return err
		case excluded(rel):
			return skip(d)
		}
		if _, err := os.Lstat(filepath.Join(src, rel)); !errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err := os.RemoveAll(path); err != nil { //nolint:gosec // G122: see syncTree
			return err
		}
		return skip(d)
	})
}

// putBack copies the entries of src over dst, replacing an entry that differs in kind.
func putBack(src, dst string, excluded func(string) bool, keepOwners bool) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		switch {
		case err != nil:
			return err
		case rel != "." && excluded(rel):
			return skip(d)
		}
		target := filepath.Join(dst, rel)
		if fi, err := os.Lstat(target); err == nil && (fi.IsDir() != d.IsDir() || fi.Mode()&fs.ModeSymlink != 0 || d.Type()&fs.ModeSymlink != 0) {
			if err := os.RemoveAll(target); err != nil {
				return err
			}
		}
		if !d.IsDir() {
			return copyEntry(path, target, d, keepOwners)
		}
		return makeDir(target, d, keepOwners)
	})
}

// copyEntry copies one file or symbolic link as copyTree does.
func copyEntry(path, target string, d fs.DirEntry, keepOwners bool) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		link, err := os.Readlink(path)
		if err != nil {
			return err
		}
		if err := os.Symlink(link, target); err != nil {
			return err
		}
		return chown(target, info, keepOwners)
	case d.Type().IsRegular():
		if err := copyFile(path, target, info.Mode().Perm()); err != nil {
			return err
		}
		return chown(target, info, keepOwners)
	}
	return nil
}

// extract unpacks a gzipped tar of regular files under root.
func extract(archive, root string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") {
			continue
		}
		target := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil { //nolint:gosec // G301: system directories of the node
			return err
		}
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(h.Mode).Perm()) //nolint:gosec // a tar mode's permission bits
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, tr); err != nil { //nolint:gosec // our own archive, of the node's files
			_ = out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
}
