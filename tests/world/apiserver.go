package world

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// restartMu serializes restarts of a hub's kube-apiserver.
var restartMu sync.Mutex

// RestartAPIServer kills the hub's kube-apiserver, calls whileDown (nil: nothing), and
// starts it again on the same etcd, address, serving certificate and client CA, so that
// every client of the hub (Config) reconnects as to a restarted server: their requests fail
// while it is down, watches end and are started again. Everything stored in etcd stays.
//
// envtest resets the certificate directory of a stopped kube-apiserver that it made itself,
// and a new serving CA would make every client's config useless; the directory's files are
// therefore copied to a directory of the hub's, which the restarted server uses and which
// is removed when the hub stops.
func (h *Hub) RestartAPIServer(whileDown func()) error {
	restartMu.Lock()
	defer restartMu.Unlock()
	api := h.env.ControlPlane.APIServer
	if api == nil {
		return fmt.Errorf("the hub has no kube-apiserver")
	}
	kept, err := os.MkdirTemp("", "hub-apiserver-")
	if err != nil {
		return err
	}
	h.Go(func(ctx context.Context) {
		<-ctx.Done()
		_ = os.RemoveAll(kept)
	})
	if err := copyFiles(api.CertDir, kept); err != nil {
		return fmt.Errorf("keeping the kube-apiserver's certificates: %w", err)
	}
	// A SIGTERM with clients connected makes kube-apiserver drain for minutes; it is
	// killed, as a crash or an OOM kill would end it.
	if err := killListener(api.Port); err != nil {
		return err
	}
	if err := stopKilled(api.Stop); err != nil {
		return fmt.Errorf("stopping the kube-apiserver: %w", err)
	}
	if whileDown != nil {
		whileDown()
	}
	api.CertDir = kept
	if err := api.Start(); err != nil {
		return fmt.Errorf("starting the kube-apiserver again: %w", err)
	}
	return nil
}

// stopKilled runs envtest's Stop on a process just killed: Stop signals a process it has not
// seen exit, and fails with os.ErrProcessDone when the exit was reaped in between; a later
// Stop sees the exit and only cleans up.
func stopKilled(stop func() error) error {
	for range 100 {
		err := stop()
		if !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("the killed process was not seen to exit within 2 s")
}

// copyFiles copies the regular files of from into to.
func copyFiles(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		//nolint:gosec // names of envtest's own certificate files, into a directory of ours
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// killListener kills the kube-apiserver serving on port (a child of this process) and waits
// until it is gone.
func killListener(port string) error {
	return killProcess("kube-apiserver", "--secure-port="+port)
}

// killProcess kills the control-plane process command (a child of this process) that has arg
// among its arguments, and waits until it is gone.
func killProcess(command, arg string) error {
	procs, err := testenv.ControlPlaneProcesses()
	if err != nil {
		return err
	}
	for _, p := range procs {
		if p.Command != command {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			continue
		}
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
			return fmt.Errorf("killing %s %d: %w", command, p.PID, err)
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", p.PID)); os.IsNotExist(err) {
				return nil
			}
		}
		return fmt.Errorf("%s %d did not end after SIGKILL", command, p.PID)
	}
	return fmt.Errorf("no %s with %s", command, arg)
}

// RestartEtcd kills the hub's etcd (SIGKILL, as a crash would end it), calls whileDown,
// then starts it again on the same data and client URL. The kube-apiserver stays up and
// answers errors meanwhile, then reconnects.
func (h *Hub) RestartEtcd(whileDown func()) error {
	restartMu.Lock()
	defer restartMu.Unlock()
	etcd := h.env.ControlPlane.Etcd
	if etcd == nil || etcd.URL == nil {
		return fmt.Errorf("the hub has no etcd")
	}
	kept, err := os.MkdirTemp("", "hub-etcd-")
	if err != nil {
		return err
	}
	h.Go(func(ctx context.Context) {
		<-ctx.Done()
		_ = os.RemoveAll(kept)
	})
	if err := killProcess("etcd", "--listen-client-urls="+etcd.URL.String()); err != nil {
		return err
	}
	// envtest's Stop deletes the data directory it made: its state is copied out first.
	if err := os.CopyFS(kept, os.DirFS(etcd.DataDir)); err != nil {
		return fmt.Errorf("keeping etcd's data: %w", err)
	}
	if err := stopKilled(etcd.Stop); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	if whileDown != nil {
		whileDown()
	}
	etcd.DataDir = kept
	if err := etcd.Start(); err != nil {
		return fmt.Errorf("starting etcd again: %w", err)
	}
	return nil
}
