package pull_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
)

// recorder is a Runner that records the command lines and answers as its script says.
type recorder struct {
	lines  []string
	output string
	code   int
	err    error
}

func (r *recorder) run(_ context.Context, name string, args ...string) ([]byte, int, error) {
	r.lines = append(r.lines, strings.Join(append([]string{name}, args...), " "))
	return []byte(r.output), r.code, r.err
}

func TestPodmanHas(t *testing.T) {
	const ref = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:0123"
	cases := map[string]struct {
		rec       recorder
		want      bool
		wantErr   string
		retryable bool
	}{
		"present": {rec: recorder{code: 0}, want: true},
		"absent":  {rec: recorder{code: 1}},
		"podman fails": {
			rec:       recorder{code: 125, output: "Error: database is locked\n"},
			wantErr:   "podman image exists " + ref + " exited with 125: Error: database is locked",
			retryable: true,
		},
		"podman missing": {rec: recorder{err: exec.ErrNotFound}, wantErr: "executable file not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := pull.Podman{Binary: "/usr/bin/podman", Authfile: "/var/lib/kubelet/config.json", Run: tc.rec.run}
			got, err := p.Has(context.Background(), ref)
			if diff := cmp.Diff([]string{"/usr/bin/podman image exists " + ref}, tc.rec.lines); diff != "" {
				t.Errorf("command lines mismatch (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || pull.IsRetryable(err) != tc.retryable {
					t.Errorf("Has() error = %v (retryable %t), want %q (retryable %t)", err, pull.IsRetryable(err), tc.wantErr, tc.retryable)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Has() = %t, %v; want %t", got, err, tc.want)
			}
		})
	}
}

func TestPodmanPut(t *testing.T) {
	const ref = "registry.example.com:5000/olm/ptp-operator:v4.16.1"
	img, err := random.Image(1024, 2)
	if err != nil {
		t.Fatalf("random.Image() error: %v", err)
	}
	wantBytes, err := pull.ImageSize(img)
	if err != nil {
		t.Fatalf("ImageSize() error: %v", err)
	}
	cases := map[string]struct {
		podman    pull.Podman
		rec       recorder
		wantLine  string
		wantErr   string
		retryable bool
	}{
		"with the kubelet's auth file": {
			podman:   pull.Podman{Authfile: "/var/lib/kubelet/config.json"},
			wantLine: "podman pull --authfile /var/lib/kubelet/config.json " + ref,
		},
		"without auth file": {
			podman:   pull.Podman{Binary: "/host/usr/bin/podman"},
			wantLine: "/host/usr/bin/podman pull " + ref,
		},
		"the image does not exist": {
			podman:   pull.Podman{Authfile: "/auth.json"},
			rec:      recorder{code: 125, output: "Trying to pull " + ref + "...\nError: initializing source docker://" + ref + ": reading manifest v4.16.1 in registry.example.com:5000/olm/ptp-operator: manifest unknown\n"},
			wantLine: "podman pull --authfile /auth.json " + ref,
			wantErr:  "podman pull " + ref + " exited with 125: Trying to pull",
		},
		"the registry is down": {
			podman:    pull.Podman{Authfile: "/auth.json"},
			rec:       recorder{code: 125, output: "Error: initializing source: pinging container registry registry.example.com:5000: Get \"https://registry.example.com:5000/v2/\": dial tcp 10.0.0.1:5000: connect: connection refused\n"},
			wantLine:  "podman pull --authfile /auth.json " + ref,
			wantErr:   "connection refused",
			retryable: true,
		},
		"podman could not start": {
			podman:    pull.Podman{},
			rec:       recorder{err: errors.New("fork/exec: resource temporarily unavailable")},
			wantLine:  "podman pull " + ref,
			wantErr:   "running podman: fork/exec",
			retryable: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.podman.Run = tc.rec.run
			n, err := tc.podman.Put(context.Background(), ref, img)
			if diff := cmp.Diff([]string{tc.wantLine}, tc.rec.lines); diff != "" {
				t.Errorf("command lines mismatch (-want +got):\n%s", diff)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || pull.IsRetryable(err) != tc.retryable {
					t.Errorf("Put() error = %v (retryable %t), want %q (retryable %t)", err, pull.IsRetryable(err), tc.wantErr, tc.retryable)
				}
				return
			}
			if err != nil || n != wantBytes {
				t.Errorf("Put() = %d, %v; want %d", n, err, wantBytes)
			}
		})
	}
}

func TestPodmanSpace(t *testing.T) {
	p := pull.Podman{StorageDir: t.TempDir()}
	free, err := p.FreeBytes()
	if err != nil || free <= 0 {
		t.Errorf("FreeBytes() = %d, %v; want a positive size", free, err)
	}
	total, err := p.TotalBytes()
	if err != nil || total < free {
		t.Errorf("TotalBytes() = %d, %v; want at least the free %d", total, err, free)
	}
	if _, err := (pull.Podman{StorageDir: "/does/not/exist"}).FreeBytes(); err == nil {
		t.Error("FreeBytes() of a missing directory succeeded, want an error")
	}
}

func TestRunCommand(t *testing.T) {
	out, code, err := pull.RunCommand(context.Background(), "sh", "-c", "echo out; echo err >&2; exit 7")
	if err != nil || code != 7 || string(out) != "out\nerr\n" {
		t.Errorf("RunCommand() = %q, %d, %v; want both outputs and exit code 7", out, code, err)
	}
	if _, _, err := pull.RunCommand(context.Background(), "/does/not/exist"); err == nil {
		t.Error("RunCommand() of a missing program succeeded, want an error")
	}
}
