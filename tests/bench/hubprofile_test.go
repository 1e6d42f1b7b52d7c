package bench_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// hubProfileSeconds is how long the hub's profiles sample from the rollout's start: the
// same span in every phase, so that the profiles compare side by side.
const hubProfileSeconds = 60

// hubProfile starts, when BENCH_HUBPROFILE names a path prefix, two CPU profiles of a
// phase's hub for hubProfileSeconds: the kube-apiserver's (from its /debug/pprof endpoint,
// to <prefix>.<name>.apiserver) and the test process's, which runs the propagator, the
// placement controller, the simulated spokes and the floor driver (to <prefix>.<name>.hub);
// name is the phase and its run, <phase>.<run>.
// The returned function waits for both and reports what failed; it is a no-op without the
// variable.
func hubProfile(ctx context.Context, cfg *rest.Config, name string) func() error {
	prefix := os.Getenv("BENCH_HUBPROFILE")
	if prefix == "" {
		return func() error { return nil }
	}
	base := prefix + "." + name
	apiserver := make(chan error, 1)
	go func() { apiserver <- apiserverProfile(ctx, cfg, base+".apiserver") }()
	stopOwn, ownErr := cpuProfile(base + ".hub")
	timer := time.AfterFunc(hubProfileSeconds*time.Second, func() {
		if stopOwn != nil {
			stopOwn()
		}
	})
	return func() error {
		if timer.Stop() && stopOwn != nil {
			stopOwn()
		}
		if ownErr != nil {
			return fmt.Errorf("profiling the test process: %w", ownErr)
		}
		return <-apiserver
	}
}

// apiserverProfile writes the kube-apiserver's CPU profile over hubProfileSeconds to path.
func apiserverProfile(ctx context.Context, cfg *rest.Config, path string) error {
	body, err := hubGet(ctx, cfg, fmt.Sprintf("/debug/pprof/profile?seconds=%d", hubProfileSeconds))
	if err != nil {
		return fmt.Errorf("profiling the kube-apiserver: %w", err)
	}
	defer body.Close()
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// hubGet reads a path of the kube-apiserver's that is not an API (its metrics, its
// profiles) as the hub's admin; the caller closes the body.
func hubGet(ctx context.Context, cfg *rest.Config, path string) (io.ReadCloser, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return resp.Body, nil
}
