package pull

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// DefaultStorageDir is where the node's containers storage (CRI-O's and podman's images)
// lives; the precache Job mounts it from the host at the same path.
const DefaultStorageDir = "/var/lib/containers/storage"

// Runner runs a command and returns its combined output and exit code; err is set only when
// the command could not be run at all.
type Runner func(ctx context.Context, name string, args ...string) (output []byte, exitCode int, err error)

// Podman is the Store of production: the node's containers storage, which CRI-O reads, written
// by podman as the node's own tools would. The program runs in a privileged container with
// the host's /var/lib/containers, /etc/containers and auth file mounted (see the precache
// README).
type Podman struct {
	// Binary is the podman executable; "podman" on the PATH when empty.
	Binary string
	// Authfile is the auth file podman pulls with (--authfile), usually the kubelet's
	// /var/lib/kubelet/config.json; none when empty.
	Authfile string
	// StorageDir is the directory whose filesystem FreeBytes and TotalBytes measure;
	// DefaultStorageDir when empty.
	StorageDir string
	// Run runs podman; RunCommand when nil.
	Run Runner
}

// Has runs "podman image exists REF": exit code 0 means present, 1 absent.
func (p Podman) Has(ctx context.Context, ref string) (bool, error) {
	out, code, err := p.run(ctx, "image", "exists", ref)
	switch {
	case err != nil:
		return false, err
	case code == 0:
		return true, nil
	case code == 1:
		return false, nil
	default:
		return false, podmanError("podman image exists "+ref, code, out)
	}
}

// Put runs "podman pull --authfile F REF"; img is used only to count its bytes.
func (p Podman) Put(ctx context.Context, ref string, img v1.Image) (int64, error) {
	args := []string{"pull"}
	if p.Authfile != "" {
		args = append(args, "--authfile", p.Authfile)
	}
	args = append(args, ref)
	out, code, err := p.run(ctx, args...)
	if err != nil {
		return 0, err
	}
	if code != 0 {
		return 0, podmanError("podman pull "+ref, code, out)
	}
	if img == nil {
		return 0, nil
	}
	return ImageSize(img)
}

// FreeBytes is the free space of the storage directory's filesystem.
func (p Podman) FreeBytes() (int64, error) {
	free, _, err := statfs(p.storageDir())
	return free, err
}

// TotalBytes is the size of the storage directory's filesystem.
func (p Podman) TotalBytes() (int64, error) {
	_, total, err := statfs(p.storageDir())
	return total, err
}

// run runs podman with args.
func (p Podman) run(ctx context.Context, args ...string) ([]byte, int, error) {
	binary := p.Binary
	if binary == "" {
		binary = "podman"
	}
	run := p.Run
	if run == nil {
		run = RunCommand
	}
	out, code, err := run(ctx, binary, args...)
	if errors.Is(err, exec.ErrNotFound) {
		return nil, 0, fmt.Errorf("running %s: %w", binary, err)
	}
	if err != nil {
		return nil, 0, MarkRetryable(fmt.Errorf("running %s: %w", binary, err))
	}
	return out, code, nil
}

func (p Podman) storageDir() string {
	if p.StorageDir == "" {
		return DefaultStorageDir
	}
	return p.StorageDir
}

// permanentPodmanErrors are fragments of podman's messages for failures that another
// attempt will not fix: the image or repository does not exist, the credentials are refused,
// the reference is malformed.
var permanentPodmanErrors = []string{
	"manifest unknown", "name unknown", "not found", "unauthorized", "authentication required",
	"denied", "invalid reference format", "repository name must",
}

// podmanError is the failure of a podman command with its exit code and output: retryable
// unless the output says the image does not exist or may not be read.
func podmanError(command string, code int, output []byte) error {
	msg := strings.TrimSpace(string(output))
	err := fmt.Errorf("%s exited with %d: %s", command, code, oneLine(msg, maxErrorLen/2))
	lower := strings.ToLower(msg)
	for _, fragment := range permanentPodmanErrors {
		if strings.Contains(lower, fragment) {
			return err
		}
	}
	return MarkRetryable(err)
}

// RunCommand runs a command with os/exec and returns its combined output and exit code.
func RunCommand(ctx context.Context, name string, args ...string) ([]byte, int, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if ctx.Err() != nil {
		return out, 0, ctx.Err()
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return out, exitErr.ExitCode(), nil
	}
	if err != nil {
		return out, 0, err
	}
	return out, 0, nil
}
