package recovery

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeNode is a single-node cluster's root filesystem in a directory, with a host that plays
// OpenShift's cluster-backup.sh (and records every command).
type fakeNode struct {
	root     string
	commands []string
	// snapshotFails makes cluster-backup.sh fail.
	snapshotFails bool
	// failing is a command line that fails once.
	failing string
}

func newFakeNode(t *testing.T) *fakeNode {
	t.Helper()
	n := &fakeNode{root: t.TempDir()}
	n.write(t, "/etc/hostname", "sno-1\n", 0o644)
	n.write(t, "/etc/kubernetes/manifests/etcd-pod.yaml", "kind: Pod\n", 0o600)
	n.write(t, "/etc/kubernetes/static-pod-resources/etcd-certs/secrets/peer.key", strings.Repeat("k", 300), 0o600)
	n.write(t, "/etc/kubernetes/static-pod-resources/bin/etcdctl", strings.Repeat("b", 5000), 0o755)
	n.write(t, "/etc/tmpfiles.d/resolv.conf", "# made at boot\nL /etc/resolv.conf - - - - ../run/resolv.conf\nd /run/x 0755 - - -\n", 0o644)
	n.write(t, "/usr/local/bin/cluster-backup.sh", "#!/bin/bash\n", 0o755)
	n.write(t, "/var/lib/kubelet/config.json", `{"auths":{}}`, 0o600)
	n.write(t, "/var/lib/etcd/member/snap/db", strings.Repeat("d", 2000), 0o600)
	n.write(t, "/var/lib/rpm-extra/settings.conf", "x=1\n", 0o644)
	n.write(t, machineConfig, `{"spec":{"config":{"storage":{"files":[
		{"path":"/etc/hostname"},{"path":"/var/lib/rpm-extra/settings.conf"},{"path":"/usr/local/bin/cluster-backup.sh"},{"path":"/opt/missing"}]}}}}`, 0o644)
	if err := os.Symlink("../run/resolv.conf", n.path("/etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	return n
}

func (n *fakeNode) path(p string) string { return filepath.Join(n.root, p) }

func (n *fakeNode) write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(n.path(p)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(n.path(p), []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// Run plays the node's commands: cluster-backup.sh DIR writes an etcd snapshot and the
// static pod resources into DIR, as OpenShift's script does.
func (n *fakeNode) Run(_ context.Context, name string, args ...string) error {
	line := strings.Join(append([]string{name}, args...), " ")
	n.commands = append(n.commands, line)
	if n.failing == line {
		n.failing = ""
		return errors.New("exit status 1")
	}
	if name != clusterBackupScript {
		return nil
	}
	if len(args) != 2 || args[0] != "--force" {
		return errors.New("unexpected arguments")
	}
	if n.snapshotFails {
		return errors.New("exit status 1: etcdctl: context deadline exceeded")
	}
	dir := n.path(args[1])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	stamp := "2026-11-27_004500"
	if err := os.WriteFile(filepath.Join(dir, "snapshot_"+stamp+".db"), []byte(strings.Repeat("s", 2000)), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "static_kuberesources_"+stamp+".tar.gz"), []byte("tgz"), 0o600)
}

func (n *fakeNode) options(free uint64) Options {
	return Options{Root: n.root, Dir: DefaultDir, Run: "backup-1", Host: n, Margin: 1000,
		FreeBytes: func(string) (uint64, error) { return free, nil },
		Now:       func() time.Time { return time.Date(2026, 11, 27, 0, 45, 0, 0, time.UTC) }}
}

func TestBackup(t *testing.T) {
	n := newFakeNode(t)
	n.write(t, DefaultDir+"/old-backup/file", "stale", 0o600)
	self := filepath.Join(t.TempDir(), "precache")
	if err := os.WriteFile(self, []byte("program"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := n.options(1 << 40)
	o.Self = self
	var phases []string
	s := Backup(context.Background(), o, func(s Summary) { phases = append(phases, s.Phase) })
	if s.Phase != PhaseSucceeded || s.Error != "" || s.Bytes == 0 || ExitCode(s) != ExitOK {
		t.Fatalf("summary %+v", s)
	}
	if !slices.Equal(phases, []string{PhaseChecking, PhaseSaving}) {
		t.Errorf("reported phases %v", phases)
	}
	checkBackedUp(t, n)
}

// checkBackedUp checks what a backup of newFakeNode wrote.
func checkBackedUp(t *testing.T, n *fakeNode) {
	t.Helper()
	dir := n.path(DefaultDir)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("recovery directory %v (%v): want mode 0700", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "old-backup")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the previous contents were not removed")
	}
	for _, p := range []string{"etc/hostname", "etc/kubernetes/manifests/etcd-pod.yaml", "local/bin/cluster-backup.sh", "kubelet/config.json",
		"cluster/snapshot_2026-11-27_004500.db", "cluster/static_kuberesources_2026-11-27_004500.tar.gz", SelfName, ManifestFile, EtcExcludeList} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("backup lacks %s: %v", p, err)
		}
	}
	if link, err := os.Readlink(filepath.Join(dir, "etc/resolv.conf")); err != nil || link != "../run/resolv.conf" {
		t.Errorf("symbolic link copied as %q (%v)", link, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "local/bin/cluster-backup.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode not kept: %v (%v)", fi, err)
	}
	if got := n.commands; !slices.Equal(got, []string{clusterBackupScript + " --force /var/recovery/cluster"}) {
		t.Errorf("host commands %v", got)
	}
	checkBackupFiles(t, dir)
}

// checkBackupFiles checks the lists, the extras and the manifest of a backup in dir.
func checkBackupFiles(t *testing.T, dir string) {
	t.Helper()
	excludes, _ := os.ReadFile(filepath.Join(dir, EtcExcludeList))
	if string(excludes) != ".updated\nkubernetes/manifests\nresolv.conf\n" {
		t.Errorf("exclude list %q", excludes)
	}
	if got := tarNames(t, filepath.Join(dir, PartExtras)); !slices.Equal(got, []string{"var/lib/rpm-extra/settings.conf"}) {
		t.Errorf("extras %v: want the machine config's files outside the copied trees that exist", got)
	}
	var m Manifest
	data, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err := json.Unmarshal(data, &m); err != nil || m.Run != "backup-1" || m.Parts[PartCluster] != 2003 || m.Parts[PartKubelet] != 12 {
		t.Errorf("manifest %+v (%v)", m, err)
	}
}

func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Name)
	}
}

func TestBackupChecksTheFreeSpace(t *testing.T) {
	n := newFakeNode(t)
	// The estimate: the static pod resources without bin twice (600), the etcd database
	// (2000), /etc (with the static pod resources and the machine config), /usr/local,
	// /var/lib/kubelet; the margin is 1000.
	o := n.options(0)
	needed, _, err := checkSpace(o)
	if !errors.Is(err, errInsufficientSpace) {
		t.Fatalf("no space: %v", err)
	}
	etc, _ := treeSize(n.path("/etc"), "")
	local, _ := treeSize(n.path("/usr/local"), "")
	kubelet, _ := treeSize(n.path("/var/lib/kubelet"), "")
	if want := uint64(600 + 2000 + etc + local + kubelet + 1000); needed != want {
		t.Fatalf("needed %d, want %d", needed, want)
	}

	o = n.options(needed - 1)
	s := Backup(context.Background(), o, func(Summary) {})
	if s.Phase != PhaseFailed || s.Retryable || ExitCode(s) != ExitUnrecoverable || !strings.Contains(s.Error, "insufficient disk space in /var/recovery") ||
		s.Needed != needed || s.Free != needed-1 {
		t.Fatalf("summary %+v", s)
	}
	if len(n.commands) != 0 {
		t.Errorf("nothing may run without room: %v", n.commands)
	}
	if s := Backup(context.Background(), n.options(needed), func(Summary) {}); s.Phase != PhaseSucceeded {
		t.Fatalf("with exactly the room needed: %+v", s)
	}
}

func TestBackupFailures(t *testing.T) {
	n := newFakeNode(t)
	n.snapshotFails = true
	s := Backup(context.Background(), n.options(1<<40), func(Summary) {})
	if s.Phase != PhaseFailed || !s.Retryable || ExitCode(s) != ExitRetryable || !strings.Contains(s.Error, "context deadline exceeded") {
		t.Fatalf("snapshot failing: %+v", s)
	}

	n = newFakeNode(t)
	n.write(t, DefaultDir+"/"+ProgressFile, "started\nrestore_files\n", 0o600)
	s = Backup(context.Background(), n.options(0), func(Summary) {})
	if s.Phase != PhaseSucceeded || !strings.Contains(s.Note, "restore is in progress") || len(n.commands) != 0 {
		t.Fatalf("during a restore: %+v, commands %v", s, n.commands)
	}
	if _, err := os.Stat(n.path(DefaultDir + "/" + ProgressFile)); err != nil {
		t.Error("the restore's progress was removed")
	}
}

func TestEtcExcludes(t *testing.T) {
	n := newFakeNode(t)
	n.write(t, "/etc/tmpfiles.d/more.conf", "d /etc/machine-config-daemon/firstboot 0755\nL /etc/resolv.conf\nf /var/x\n", 0o644)
	got, err := etcExcludes(n.options(0))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".updated", "kubernetes/manifests", "machine-config-daemon/firstboot", "resolv.conf"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
