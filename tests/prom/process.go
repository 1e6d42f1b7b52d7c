// Package prom runs the real Prometheus and Alertmanager binaries for tests: Debian's
// prometheus and prometheus-alertmanager packages, which `make prometheus` installs. Each
// server listens on a free loopback port, keeps its configuration, storage and output in a
// directory the test gives it, and stops when the test says so. A test whose binary is missing
// fails with an error saying how to install it: it never skips.
package prom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// readyTimeout bounds the wait for a server to become ready when the caller's context sets
	// no shorter deadline.
	readyTimeout = 30 * time.Second
	// readyPoll is how often a starting server is asked whether it is ready.
	readyPoll = 100 * time.Millisecond
	// stopGrace is how long a server has to stop on SIGTERM before it is killed.
	stopGrace = 10 * time.Second
	// logTail is how much of a server's output an error shows.
	logTail = 2000
)

// findBinary returns the path of the first of names on the PATH, or the path the environment
// variable env names.
func findBinary(env string, names ...string) (string, error) {
	if path := os.Getenv(env); path != "" {
		return path, nil
	}
	for _, name := range names {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%s is not installed: `make prometheus` installs Debian's prometheus and "+
		"prometheus-alertmanager packages, or set %s to the binary", strings.Join(names, " or "), env)
}

// freeAddress returns a loopback address with a port nothing listens on.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// process is a server binary run for a test. It is not safe for concurrent use.
type process struct {
	name string
	path string
	args []string
	// addr is the server's host:port; the server answers GET /-/ready once it is ready.
	addr string
	// logPath receives the server's output, across restarts.
	logPath string

	cmd    *exec.Cmd
	exited chan struct{}
	// waitErr is how the process ended; it is set before exited is closed.
	waitErr error
}

func (p *process) url() string { return "http://" + p.addr }

// start runs the server and waits until it is ready, bounded by ctx and readyTimeout. A
// server that does not become ready is stopped.
func (p *process) start(ctx context.Context) error {
	if p.cmd != nil {
		return fmt.Errorf("%s is already running at %s", p.name, p.addr)
	}
	out, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s output: %w", p.name, err)
	}
	cmd := exec.Command(p.path, p.args...) //nolint:gosec // The binary and its flags are the test's own.
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() {
		p.waitErr = cmd.Wait()
		_ = out.Close()
		close(exited)
	}()
	p.cmd, p.exited = cmd, exited
	if err := p.waitReady(ctx); err != nil {
		_ = p.stop()
		return err
	}
	return nil
}

// waitReady asks the server whether it is ready until it is, it exits, or the wait times out.
func (p *process) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	ticker := time.NewTicker(readyPoll)
	defer ticker.Stop()
	for {
		if ready(ctx, p.url()+"/-/ready") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w%s", p.name, p.addr, ctx.Err(), p.output())
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready: %w%s", p.name, p.exitError(), p.output())
		case <-ticker.C:
		}
	}
}

// ready reports whether GET url answers 200.
func ready(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop asks the server to stop (SIGTERM), kills it if it has not stopped after stopGrace,
// and waits for it. It returns an error when the server had exited by itself before.
func (p *process) stop() error {
	if p.cmd == nil {
		return nil
	}
	defer func() { p.cmd = nil }()
	select {
	case <-p.exited:
		return fmt.Errorf("%s had exited: %w%s", p.name, p.exitError(), p.output())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	grace := time.NewTimer(stopGrace)
	defer grace.Stop()
	select {
	case <-p.exited:
	case <-grace.C:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return nil
}

// exitError is how the process ended, once it has: an exit status 0 is an error too, since a
// server is not meant to end by itself.
func (p *process) exitError() error {
	if p.waitErr == nil {
		return errors.New("exit status 0")
	}
	return p.waitErr
}

// output returns the end of the server's output, to explain an error.
func (p *process) output() string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	if len(data) > logTail {
		data = data[len(data)-logTail:]
	}
	return fmt.Sprintf("; the end of its output (%s):\n%s", p.logPath, data)
}
