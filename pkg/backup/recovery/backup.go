// Package recovery is the spoke side of the backup before an upgrade: the program the backup
// Job runs on a single-node cluster to save what a restore to the current release needs (an
// etcd snapshot with the static pod resources, /etc, /usr/local, /var/lib/kubelet and the
// files the machine config writes elsewhere) into the recovery directory TALM uses,
// /var/recovery, after checking that it has room; and the restore that puts them back. It
// works on the node's root filesystem mounted at Options.Root and runs the node's own
// commands through Host, so that tests run it on a directory tree with a fake host.
package recovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Where things are on the node.
const (
	// DefaultDir is the recovery directory (TALM's).
	DefaultDir = "/var/recovery"
	// ProgressFile in the recovery directory exists while a restore runs: a backup then
	// leaves the directory alone.
	ProgressFile = "progress"
	// ManifestFile in the recovery directory says what the backup holds.
	ManifestFile = "backup.json"
	// SelfName is the copy of this program the backup leaves in the recovery directory, so
	// that a restore needs nothing from a registry.
	SelfName = "cgu-recovery"
	// clusterBackupScript takes the etcd snapshot and the static pod resources (OpenShift's
	// own script, on every control-plane node).
	clusterBackupScript = "/usr/local/bin/cluster-backup.sh"
	// machineConfig is what the machine-config daemon last applied.
	machineConfig = "/etc/machine-config-daemon/currentconfig"
)

// The parts of a backup, in the recovery directory.
const (
	// PartCluster holds the etcd snapshot (snapshot_*.db) and the static pod resources
	// (static_kuberesources_*.tar.gz).
	PartCluster = "cluster"
	// PartEtc, PartLocal and PartKubelet are copies of /etc, /usr/local and
	// /var/lib/kubelet.
	PartEtc     = "etc"
	PartLocal   = "local"
	PartKubelet = "kubelet"
	// PartExtras is a gzipped tar of the machine config's files outside those trees.
	PartExtras = "extras.tgz"
	// EtcExcludeList lists the paths under /etc a restore leaves alone.
	EtcExcludeList = "etc.exclude.list"
)

// copiedTrees are the node's trees a backup copies, with their part.
var copiedTrees = []struct{ path, part string }{
	{"/etc", PartEtc}, {"/usr/local", PartLocal}, {"/var/lib/kubelet", PartKubelet},
}

// DefaultMargin is the free space a backup leaves beyond its estimate (TALM's 10 GiB).
const DefaultMargin = 10 << 30

// Host runs the node's commands: on a node, in its root with chroot; in tests, a fake.
type Host interface {
	Run(ctx context.Context, name string, args ...string) error
}

// Options say where and how a backup or restore runs.
type Options struct {
	// Root is where the node's root filesystem is mounted ("/" when run on the node).
	Root string
	// Dir is the recovery directory, a path on the node (DefaultDir).
	Dir string
	// Run is the run the summary answers, as the hub names it.
	Run string
	// Host runs the node's commands.
	Host Host
	// FreeBytes says how many bytes a directory's filesystem has available to this program.
	FreeBytes func(path string) (uint64, error)
	// Margin is the free space required beyond the estimate (DefaultMargin when zero).
	Margin uint64
	// Self is this program's executable, copied into the recovery directory; empty copies
	// nothing.
	Self string
	// KeepOwners copies the owners of files (root is needed); tests leave it off.
	KeepOwners bool
	// Now tells the time.
	Now func() time.Time
}

// node is a path on the node, under the root.
func (o Options) node(path string) string { return filepath.Join(o.Root, path) }

// dir is a path in the recovery directory, under the root.
func (o Options) dir(parts ...string) string {
	return filepath.Join(append([]string{o.Root, o.Dir}, parts...)...)
}

// Summary is what the backup program reports, in the report ConfigMap and as its termination
// message.
type Summary struct {
	// Run is the run the program was started for.
	Run string `json:"run"`
	// Phase is Checking (the free space), Saving, Succeeded or Failed.
	Phase string `json:"phase"`
	// Bytes is the size of the backup; Needed what the free-space check asked for, and
	// Free what it found.
	Bytes  int64  `json:"bytes,omitempty"`
	Needed uint64 `json:"needed,omitempty"`
	Free   uint64 `json:"free,omitempty"`
	// Note says what the run did besides the backup, for example that it left the
	// directory alone while a restore runs.
	Note string `json:"note,omitempty"`
	// Error says why the run failed; Retryable tells whether another run may succeed.
	Error     string `json:"error,omitempty"`
	Retryable bool   `json:"retryable,omitempty"`
}

// Phases of a Summary.
const (
	PhaseChecking  = "Checking"
	PhaseSaving    = "Saving"
	PhaseSucceeded = "Succeeded"
	PhaseFailed    = "Failed"
)

// Exit codes of the backup program.
const (
	ExitOK = 0
	// ExitRetryable: the backup failed for a reason that may pass.
	ExitRetryable = 2
	// ExitUnrecoverable: another run cannot succeed (too little space).
	ExitUnrecoverable = 3
)

// ExitCode is the program's exit code for a summary.
func ExitCode(s Summary) int {
	switch {
	case s.Phase == PhaseSucceeded:
		return ExitOK
	case s.Retryable:
		return ExitRetryable
	}
	return ExitUnrecoverable
}

// Manifest is what ManifestFile says of a backup.
type Manifest struct {
	Run         string    `json:"run"`
	CompletedAt time.Time `json:"completedAt"`
	// Parts are the parts saved, with their sizes in bytes.
	Parts map[string]int64 `json:"parts"`
}

// errInsufficientSpace fails a backup for good.
var errInsufficientSpace = errors.New("insufficient disk space")

// Backup saves what a restore needs into the recovery directory, reporting its phases to
// report as it goes, and returns how it ended.
func Backup(ctx context.Context, o Options, report func(Summary)) Summary {
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := Summary{Run: o.Run, Phase: PhaseChecking}
	fail := func(err error) Summary {
		s.Phase, s.Error, s.Retryable = PhaseFailed, err.Error(), !errors.Is(err, errInsufficientSpace)
		return s
	}
	if _, err := os.Stat(o.dir(ProgressFile)); err == nil {
		s.Phase, s.Note = PhaseSucceeded, "a restore is in progress: the recovery directory was left as it is"
		return s
	}
	report(s)
	if err := emptyDir(o.dir()); err != nil {
		return fail(fmt.Errorf("preparing %s: %w", o.Dir, err))
	}
	needed, free, err := checkSpace(o)
	s.Needed, s.Free = needed, free
	if err != nil {
		return fail(err)
	}
	s.Phase = PhaseSaving
	report(s)
	parts, err := save(ctx, o)
	if err != nil {
		return fail(err)
	}
	for _, n := range parts {
		s.Bytes += n
	}
	m := Manifest{Run: o.Run, CompletedAt: o.Now().UTC(), Parts: parts}
	data, err := json.MarshalIndent(m, "", "  ")
	if err == nil {
		err = os.WriteFile(o.dir(ManifestFile), data, 0o600)
	}
	if err != nil {
		return fail(fmt.Errorf("writing %s: %w", ManifestFile, err))
	}
	s.Phase = PhaseSucceeded
	return s
}

// emptyDir makes the recovery directory, owner-only, and empties it.
func emptyDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil { //nolint:gosec // G302: a directory, owner-only; it needs x to be entered
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// checkSpace estimates what the backup takes and checks that the recovery directory's
// filesystem has that much and the margin free: the etcd database (its snapshot), the static
// pod resources without their binaries (twice: the snapshot script archives them, and they
// are kept as they are), /etc, /usr/local and /var/lib/kubelet.
func checkSpace(o Options) (needed, free uint64, err error) {
	var estimate int64
	static, err := treeSize(o.node("/etc/kubernetes/static-pod-resources"), "bin")
	if err != nil {
		return 0, 0, err
	}
	estimate += 2 * static
	if fi, err := os.Stat(o.node("/var/lib/etcd/member/snap/db")); err == nil {
		estimate += fi.Size()
	}
	for _, t := range copiedTrees {
		n, err := treeSize(o.node(t.path), "")
		if err != nil {
			return 0, 0, err
		}
		estimate += n
	}
	free, err = o.FreeBytes(o.dir())
	if err != nil {
		return 0, 0, fmt.Errorf("reading the free space of %s: %w", o.Dir, err)
	}
	size := uint64(max(estimate, 0))
	needed = size + o.Margin
	if free < needed {
		return needed, free, fmt.Errorf("%w in %s: the backup needs about %s and %s more, %s are free",
			errInsufficientSpace, o.Dir, gib(size), gib(o.Margin), gib(free))
	}
	return needed, free, nil
}

func gib(n uint64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

// treeSize is the size of the regular files under root, skip (a top-level entry) left out;
// a missing root is empty.
func treeSize(root, skip string) (int64, error) {
	var n int64
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && path == root:
			return fs.SkipAll
		case err != nil:
			return err
		case skip != "" && d.IsDir() && path == filepath.Join(root, skip):
			return fs.SkipDir
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// save writes the parts and returns their sizes.
func save(ctx context.Context, o Options) (map[string]int64, error) {
	parts := map[string]int64{}
	if err := o.Host.Run(ctx, clusterBackupScript, "--force", filepath.Join(o.Dir, PartCluster)); err != nil {
		return nil, fmt.Errorf("the etcd snapshot (%s): %w", clusterBackupScript, err)
	}
	if err := checkSnapshot(o.dir(PartCluster)); err != nil {
		return nil, err
	}
	excludes, err := etcExcludes(o)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(o.dir(EtcExcludeList), []byte(strings.Join(excludes, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	for _, t := range copiedTrees {
		if err := copyTree(o.node(t.path), o.dir(t.part), o.KeepOwners); err != nil {
			return nil, fmt.Errorf("copying %s: %w", t.path, err)
		}
	}
	if err := saveExtras(o); err != nil {
		return nil, err
	}
	if o.Self != "" {
		if err := copyFile(o.Self, o.dir(SelfName), 0o700); err != nil {
			return nil, fmt.Errorf("copying the recovery program: %w", err)
		}
	}
	for _, p := range []string{PartCluster, PartEtc, PartLocal, PartKubelet, PartExtras} {
		n, err := treeSize(o.dir(p), "")
		if err != nil {
			return nil, err
		}
		if fi, err := os.Stat(o.dir(p)); err == nil && fi.Mode().IsRegular() {
			n = fi.Size()
		}
		parts[p] = n
	}
	return parts, nil
}

// checkSnapshot checks that the cluster backup script wrote its two files.
func checkSnapshot(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("the etcd snapshot: %w", err)
	}
	var snapshot, static bool
	for _, e := range entries {
		snapshot = snapshot || (strings.HasPrefix(e.Name(), "snapshot_") && strings.HasSuffix(e.Name(), ".db"))
		static = static || (strings.HasPrefix(e.Name(), "static_kuberesources_") && strings.HasSuffix(e.Name(), ".tar.gz"))
	}
	if !snapshot || !static {
		return fmt.Errorf("the etcd snapshot: %s wrote no snapshot_*.db and static_kuberesources_*.tar.gz in %s", clusterBackupScript, PartCluster)
	}
	return nil
}

// etcExcludes are the paths under /etc, relative to it, that a restore leaves alone: those
// systemd-tmpfiles makes at boot (/etc/tmpfiles.d), the marker of the last update, and the
// static pod manifests, which the restore's own script handles.
func etcExcludes(o Options) ([]string, error) {
	out := []string{".updated", "kubernetes/manifests"}
	files, err := filepath.Glob(o.node("/etc/tmpfiles.d/*.conf"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for line := range strings.Lines(string(data)) {
			fields := strings.Fields(line)
			if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			if rel, ok := strings.CutPrefix(fields[1], "/etc/"); ok && rel != "" && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out, nil
}
