// Package pulltest builds what tests of pre-caching pull from: an OCI registry served in
// process over HTTP, which can fail requests on demand, and release and index images shaped
// like OpenShift's. The unit tests of package pull use it, and the hub's end-to-end tests use
// it to run the real precache program in the spoke simulator.
package pulltest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Registry is an OCI registry (go-containerregistry's, in memory) served over HTTP on the
// loopback interface, so that references to it are pulled over plain HTTP. It can answer
// 503 Service Unavailable to some requests before handling them.
type Registry struct {
	// Host is the registry's "127.0.0.1:port", the first part of its images' references.
	Host string

	server   *httptest.Server
	failNext atomic.Int64
	failAll  atomic.Bool
	requests atomic.Int64
	failed   atomic.Int64
	latency  atomic.Int64
}

// NewRegistry starts a registry, closed when the test ends.
func NewRegistry(t T) *Registry {
	t.Helper()
	r := &Registry{}
	handler := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		r.delay(req)
		if r.shouldFail() {
			r.failed.Add(1)
			http.Error(w, "the registry is unavailable (pulltest)", http.StatusServiceUnavailable)
			return
		}
		handler.ServeHTTP(w, req)
	}))
	t.Cleanup(r.server.Close)
	r.Host = strings.TrimPrefix(r.server.URL, "http://")
	return r
}

// shouldFail tells whether to fail the request at hand, taking it from the failures asked.
func (r *Registry) shouldFail() bool {
	if r.failAll.Load() {
		return true
	}
	for {
		n := r.failNext.Load()
		if n <= 0 {
			return false
		}
		if r.failNext.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// SetLatency delays every answer by d, as a registry across a network would; zero answers
// at once.
func (r *Registry) SetLatency(d time.Duration) {
	r.latency.Store(int64(d))
}

// delay waits the latency before answering req, or until req is abandoned.
func (r *Registry) delay(req *http.Request) {
	d := time.Duration(r.latency.Load())
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-req.Context().Done():
	}
}

// FailNext makes the registry answer 503 to the next n requests.
func (r *Registry) FailNext(n int) {
	r.failNext.Store(int64(n))
}

// FailAll makes the registry answer 503 to every request while on is true.
func (r *Registry) FailAll(on bool) {
	r.failAll.Store(on)
}

// Requests counts the requests the registry received, failed ones included.
func (r *Registry) Requests() int64 {
	return r.requests.Load()
}

// Failed counts the requests the registry answered with 503 on demand.
func (r *Registry) Failed() int64 {
	return r.failed.Load()
}

// Ref is the reference of repo:tag in the registry.
func (r *Registry) Ref(repo, tag string) string {
	return fmt.Sprintf("%s/%s:%s", r.Host, repo, tag)
}

// Push pushes img as repo:tag and returns its reference by digest, "HOST/repo@sha256:...",
// the form release payloads and catalogs name images by.
func (r *Registry) Push(t T, repo, tag string, img v1.Image) string {
	t.Helper()
	ref, err := name.ParseReference(r.Ref(repo, tag))
	if err != nil {
		t.Fatalf("parsing the reference of %s:%s: %v", repo, tag, err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatalf("reading the digest of %s: %v", ref, err)
	}
	return fmt.Sprintf("%s/%s@%s", r.Host, repo, digest)
}

// PushRandom pushes an image of random content, layers layers of layerSize bytes each, as
// repo:tag and returns its reference by digest.
func (r *Registry) PushRandom(t T, repo, tag string, layerSize, layers int64) string {
	t.Helper()
	img, err := random.Image(layerSize, layers)
	if err != nil {
		t.Fatalf("making a random image for %s: %v", repo, err)
	}
	return r.Push(t, repo, tag, img)
}

// Files is the content of some files of an image, by path from the image's root.
type Files map[string][]byte

// Layer is a layer holding the files, with their directories, in path order.
func Layer(t T, files Files) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, p := range sortedKeys(files) {
		for _, dir := range parents(p) {
			if !dirs[dir] {
				dirs[dir] = true
				writeEntry(t, tw, &tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755}, nil)
			}
		}
		writeEntry(t, tw, &tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[p]))}, files[p])
	}
	if err := tw.Close(); err != nil {
		t.Fatalf("closing a layer's archive: %v", err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	})
	if err != nil {
		t.Fatalf("making a layer: %v", err)
	}
	return layer
}

// writeEntry writes one archive entry.
func writeEntry(t T, tw *tar.Writer, hdr *tar.Header, content []byte) {
	t.Helper()
	if err := tw.WriteHeader(hdr); err != nil {
		t.Fatalf("writing %s to a layer: %v", hdr.Name, err)
	}
	if _, err := tw.Write(content); err != nil {
		t.Fatalf("writing %s to a layer: %v", hdr.Name, err)
	}
}

// Image is an image of the layers, bottom first, with the labels in its config.
func Image(t T, labels map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatalf("making an image: %v", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("reading an image's config: %v", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Config.Labels = labels
	cfg.OS, cfg.Architecture = "linux", "amd64"
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatalf("setting an image's config: %v", err)
	}
	return img
}

// T is what the helpers need of a test: testing.TB and Ginkgo's GinkgoT() both serve.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}
