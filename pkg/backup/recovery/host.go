package recovery

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// Chroot runs the node's commands in its root filesystem, mounted at Root, with the chroot
// command (the backup Job's container is privileged and mounts the node's / at Root).
type Chroot struct {
	Root string
}

// Run runs name with args in the node's root and returns its error with the end of its
// output.
func (c Chroot) Run(ctx context.Context, name string, args ...string) error {
	// G204: the commands are the program's own (the cluster backup and restore scripts,
	// systemctl, crictl, oc), with its own arguments.
	out, err := exec.CommandContext(ctx, "chroot", append([]string{c.Root, name}, args...)...).CombinedOutput() //nolint:gosec // G204: see above
	if err != nil {
		text := strings.TrimSpace(string(out))
		if len(text) > 512 {
			text = "..." + text[len(text)-512:]
		}
		return fmt.Errorf("%s: %w: %s", name, err, text)
	}
	return nil
}

// FreeBytes is the space available to an unprivileged user on the filesystem of path, as
// df shows it.
func FreeBytes(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil //nolint:gosec // a block size is positive
}
