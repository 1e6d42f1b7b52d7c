package recovery

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func (n *fakeNode) read(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(n.path(p))
	if err != nil {
		t.Fatalf("reading %s: %v", p, err)
	}
	return string(data)
}

func (n *fakeNode) exists(p string) bool {
	_, err := os.Lstat(n.path(p))
	return err == nil
}

// TestRestore backs a node up, changes it as an upgrade would, and restores it: the first
// call puts the files back and asks for a reboot, the second restores the cluster.
func TestRestore(t *testing.T) {
	n := newFakeNode(t)
	o := n.options(1 << 40)
	if s := Backup(context.Background(), o, func(Summary) {}); s.Phase != PhaseSucceeded {
		t.Fatalf("backup: %+v", s)
	}
	n.commands = nil
	upgrade(t, n)

	r, err := Restore(context.Background(), o, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Done, []string{StepStarted, StepRestoreFiles}) || !strings.Contains(r.Next, "reboot") {
		t.Fatalf("first call: %+v", r)
	}
	checkFilesRestored(t, n)
	if s := Backup(context.Background(), o, func(Summary) {}); s.Note == "" {
		t.Error("a backup during the restore overwrote it")
	}
	checkClusterRestored(t, n, o)
}

// upgrade changes the node as an upgrade would.
func upgrade(t *testing.T, n *fakeNode) {
	t.Helper()
	n.write(t, "/etc/hostname", "sno-1-upgraded\n", 0o644)
	n.write(t, "/etc/added-by-the-upgrade.conf", "x\n", 0o644)
	n.write(t, "/etc/kubernetes/manifests/kube-apiserver-pod.yaml", "kind: Pod\n", 0o600)
	n.write(t, "/usr/local/bin/cluster-backup.sh", "#!/bin/bash\n# newer\n", 0o755)
	n.write(t, "/var/lib/kubelet/config.json", `{"auths":{"new":{}}}`, 0o600)
	if err := os.Remove(n.path("/var/lib/rpm-extra/settings.conf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(n.path("/etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	n.write(t, "/etc/resolv.conf", "nameserver 10.0.0.1\n", 0o644)
}

// checkFilesRestored checks the first call's work.
func checkFilesRestored(t *testing.T, n *fakeNode) {
	t.Helper()
	if got := n.read(t, "/etc/hostname"); got != "sno-1\n" {
		t.Errorf("/etc/hostname %q", got)
	}
	if n.exists("/etc/added-by-the-upgrade.conf") {
		t.Error("a file the backup does not have was kept")
	}
	if !n.exists("/etc/kubernetes/manifests/kube-apiserver-pod.yaml") || n.read(t, "/etc/resolv.conf") != "nameserver 10.0.0.1\n" {
		t.Error("excluded paths were changed")
	}
	if got := n.read(t, "/usr/local/bin/cluster-backup.sh"); got != "#!/bin/bash\n" {
		t.Errorf("/usr/local not restored: %q", got)
	}
	if got := n.read(t, "/var/lib/rpm-extra/settings.conf"); got != "x=1\n" {
		t.Errorf("the machine config's extra file %q", got)
	}
	if got := n.read(t, "/var/lib/kubelet/config.json"); got != `{"auths":{"new":{}}}` {
		t.Errorf("/var/lib/kubelet is for the second call: %q", got)
	}
	want := []string{"systemctl stop kubelet", "crictl rmp -fa", "systemctl stop crio", "systemctl daemon-reload", "systemctl disable kubelet"}
	if !slices.Equal(n.commands, want) {
		t.Errorf("first call's commands %v, want %v", n.commands, want)
	}
}

// checkClusterRestored runs the second call, failing once, and checks its work.
func checkClusterRestored(t *testing.T, n *fakeNode, o Options) {
	t.Helper()
	n.commands = nil
	n.failing = clusterRestoreScript + " /var/recovery/cluster"
	if _, err := Restore(context.Background(), o, "/etc/kubernetes/localhost.kubeconfig", false); err == nil {
		t.Fatal("the failing cluster restore went unnoticed")
	}
	if got := n.read(t, DefaultDir+"/"+ProgressFile); got != "started\nrestore_files\n" {
		t.Errorf("progress after the failure %q", got)
	}
	n.commands = nil
	r, err := Restore(context.Background(), o, "/etc/kubernetes/localhost.kubeconfig", false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Done, []string{StepStarted, StepRestoreFiles, StepRestoreCluster}) {
		t.Errorf("second call: %+v", r)
	}
	if got := n.read(t, "/var/lib/kubelet/config.json"); got != `{"auths":{}}` {
		t.Errorf("/var/lib/kubelet %q", got)
	}
	if n.exists(DefaultDir + "/" + ProgressFile) {
		t.Error("the progress file stayed")
	}
	want := []string{"systemctl start crio", clusterRestoreScript + " /var/recovery/cluster", "systemctl enable kubelet", "systemctl restart kubelet"}
	for _, op := range Redeployed {
		want = append(want, `oc --kubeconfig /etc/kubernetes/localhost.kubeconfig patch `+op+` cluster --type=merge -p {"spec":{"forceRedeploymentReason":"recovery"}}`)
	}
	if !slices.Equal(n.commands, want) {
		t.Errorf("second call's commands\n%v\nwant\n%v", n.commands, want)
	}
}

func TestRestoreNeedsABackup(t *testing.T) {
	n := newFakeNode(t)
	_, err := Restore(context.Background(), n.options(0), "", false)
	if err == nil || !strings.Contains(err.Error(), "no complete backup in /var/recovery") || len(n.commands) != 0 {
		t.Fatalf("error %v, commands %v", err, n.commands)
	}
	if s := Backup(context.Background(), n.options(1<<40), func(Summary) {}); s.Phase != PhaseSucceeded {
		t.Fatal(s)
	}
	if err := os.RemoveAll(n.path(DefaultDir + "/" + PartKubelet)); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(context.Background(), n.options(0), "", false); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a backup without its kubelet part: %v", err)
	}
}

// filesRestored backs a node up and runs the restore's first call.
func filesRestored(t *testing.T) (*fakeNode, Options) {
	t.Helper()
	n := newFakeNode(t)
	o := n.options(1 << 40)
	if s := Backup(context.Background(), o, func(Summary) {}); s.Phase != PhaseSucceeded {
		t.Fatal(s)
	}
	if _, err := Restore(context.Background(), o, "", false); err != nil {
		t.Fatal(err)
	}
	return n, o
}

func TestRestoreRestarts(t *testing.T) {
	n, o := filesRestored(t)
	n.commands = nil
	r, err := Restore(context.Background(), o, "", true)
	if err != nil || !slices.Equal(r.Done, []string{StepStarted, StepRestoreFiles}) || n.commands[0] != "systemctl stop kubelet" {
		t.Fatalf("restart: %+v %v, commands %v", r, err, n.commands)
	}
}

func TestRestoreWithoutOc(t *testing.T) {
	n, o := filesRestored(t)
	n.failing = `oc --kubeconfig /k patch etcd cluster --type=merge -p {"spec":{"forceRedeploymentReason":"recovery"}}`
	r, err := Restore(context.Background(), o, "/k", false)
	if err != nil || len(r.Done) != 3 || !strings.Contains(r.Next, "roll the control-plane pods out again (") || !strings.Contains(r.Next, "oc patch kubescheduler") {
		t.Fatalf("a restored cluster whose control plane could not be rolled out: %+v %v", r, err)
	}
	if n.exists(DefaultDir + "/" + ProgressFile) {
		t.Error("the restore is done: no progress is left")
	}
}
