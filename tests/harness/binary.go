package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// BinaryNamespace holds the leader lease of the operator's binary.
const BinaryNamespace = "cgu-operator-system"

// Binaries runs the operator's production binary (cmd/manager) against the hub, as a
// process of its own that a test can SIGKILL at any instant: nothing of the binary's state
// survives a kill but what it wrote to the hub. It is built once. The binary runs with the
// options of the harness's in-process operator (the update service, the precache timeout,
// QPS), on the real clock, with leader election on and a short lease, so that a process
// started after a kill waits about BinaryLease for the dead leader's lease.
type Binaries struct {
	env        *Env
	path       string
	kubeconfig string
	out        io.Writer
	started    int
}

// BinaryLease is the binary's leader lease duration.
const BinaryLease = "3s"

// BuildBinary builds cmd/manager into dir and returns what starts it, its output (logs)
// going to out. The hub's in-process operator keeps running: stop it (StopOperator) before
// starting the binary.
func (e *Env) BuildBinary(ctx context.Context, dir string, out io.Writer) (*Binaries, error) {
	root, err := testenv.Root()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/manager")
	build.Dir = root
	if output, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building cmd/manager: %w: %s", err, output)
	}
	kubeconfig, err := e.Hub.KubeConfig()
	if err != nil {
		return nil, err
	}
	b := &Binaries{env: e, path: path, kubeconfig: filepath.Join(dir, "kubeconfig"), out: out}
	if err := os.WriteFile(b.kubeconfig, kubeconfig, 0o600); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: BinaryNamespace}}
	if err := e.Hub.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", BinaryNamespace, err)
	}
	return b, nil
}

// Process is one run of the binary.
type Process struct {
	// Name tells the runs apart in the output: binary-1, binary-2, ...
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
	err  error
}

// Start starts the binary, with extra flags after the harness's.
func (b *Binaries) Start(extra ...string) (*Process, error) {
	b.started++
	opts := b.env.operators.opts
	args := []string{
		"--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--leader-elect=true", "--leader-election-namespace=" + BinaryNamespace,
		"--leader-elect-lease-duration=" + BinaryLease, "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms",
		fmt.Sprintf("--kube-api-qps=%g", opts.QPS), fmt.Sprintf("--kube-api-burst=%d", opts.Burst),
		"--update-service=" + opts.UpdateService, "--precache-timeout=" + opts.PrecacheTimeout.String(),
		fmt.Sprintf("--ztp=%v", opts.ZTP), "--ztp-settle=" + opts.ZTPSettle.String(),
		"--zap-log-level=info",
	}
	p := &Process{Name: fmt.Sprintf("binary-%d", b.started), done: make(chan struct{})}
	p.cmd = exec.Command(b.path, append(args, extra...)...) //nolint:gosec // the binary BuildBinary built, with the harness's flags
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+b.kubeconfig)
	prefix := &prefixWriter{prefix: p.Name + " ", out: b.out}
	p.cmd.Stdout, p.cmd.Stderr = prefix, prefix
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.Name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Kill SIGKILLs the process and waits until it is gone.
func (p *Process) Kill() error {
	return p.signal(syscall.SIGKILL)
}

// Stop SIGTERMs the process and waits until it exited; an exit other than 0 is an error,
// but for a process the signal ended before it installed its handler (it had just started).
func (p *Process) Stop() error {
	select {
	case <-p.done:
		return nil // killed, or ended, before
	default:
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
		return fmt.Errorf("%s: %w", p.Name, p.err)
	}
	return nil
}

func (p *Process) signal(sig syscall.Signal) error {
	var err error
	p.once.Do(func() { err = p.cmd.Process.Signal(sig) })
	if err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signalling %s: %w", p.Name, err)
	}
	<-p.done
	return nil
}

// Exited is closed once the process ended.
func (p *Process) Exited() <-chan struct{} { return p.done }

// prefixWriter writes each line with a prefix.
type prefixWriter struct {
	mu     sync.Mutex
	prefix string
	out    io.Writer
	rest   string
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	text := w.rest + string(p)
	lines := strings.Split(text, "\n")
	w.rest = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if _, err := io.WriteString(w.out, w.prefix+l+"\n"); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
