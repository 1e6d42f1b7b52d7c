package pull

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
)

// Store is where images are precached: the node's image store.
type Store interface {
	// Has tells whether the store holds the image ref names.
	Has(ctx context.Context, ref string) (bool, error)
	// Put stores img, fetched from ref, under ref, and returns how many bytes it pulled.
	Put(ctx context.Context, ref string, img v1.Image) (bytes int64, err error)
	// FreeBytes is the free space of the store's filesystem.
	FreeBytes() (int64, error)
	// TotalBytes is the size of the store's filesystem.
	TotalBytes() (int64, error)
}

// RefAnnotation is the annotation of an OCI layout's index entries that holds the reference
// an image was pulled by.
const RefAnnotation = "org.opencontainers.image.ref.name"

// OCILayout is a Store in an OCI image layout directory: each image's blobs under blobs/ and
// an entry in index.json annotated with its reference. Tests and demos use it in place of
// the node's containers storage. It is safe for concurrent use by one process.
type OCILayout struct {
	path layout.Path
	// mu serializes the updates of index.json, which are read-modify-write.
	mu sync.Mutex
}

// NewOCILayout opens the OCI image layout in dir, creating it when dir holds none.
func NewOCILayout(dir string) (*OCILayout, error) {
	p, err := layout.FromPath(dir)
	if errors.Is(err, fs.ErrNotExist) {
		p, err = layout.Write(dir, empty.Index)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the OCI layout %s: %w", dir, err)
	}
	return &OCILayout{path: p}, nil
}

// Dir is the layout's directory.
func (l *OCILayout) Dir() string {
	return string(l.path)
}

// Has tells whether index.json has an entry for ref.
func (l *OCILayout) Has(_ context.Context, ref string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	refs, err := l.refs()
	if err != nil {
		return false, err
	}
	_, ok := refs[ref]
	return ok, nil
}

// Put writes img's blobs, then adds its entry to index.json unless ref has one already.
// The bytes are the size of img's manifest, config and layers.
func (l *OCILayout) Put(_ context.Context, ref string, img v1.Image) (int64, error) {
	if err := l.path.WriteImage(img); err != nil {
		return 0, fmt.Errorf("writing %s to the OCI layout: %w", ref, err)
	}
	desc, err := partial.Descriptor(img)
	if err != nil {
		return 0, fmt.Errorf("describing %s: %w", ref, err)
	}
	desc.Annotations = map[string]string{RefAnnotation: ref}
	size, err := ImageSize(img)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	refs, err := l.refs()
	if err != nil {
		return 0, err
	}
	if _, ok := refs[ref]; ok {
		return size, nil
	}
	if err := l.path.AppendDescriptor(*desc); err != nil {
		return 0, fmt.Errorf("adding %s to the OCI layout's index: %w", ref, err)
	}
	return size, nil
}

// Refs are the references of the layout's images, sorted.
func (l *OCILayout) Refs() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	refs, err := l.refs()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(refs))
	for ref := range refs {
		out = append(out, ref)
	}
	sort.Strings(out)
	return out, nil
}

// Image is the image stored under ref.
func (l *OCILayout) Image(ref string) (v1.Image, error) {
	l.mu.Lock()
	refs, err := l.refs()
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	digest, ok := refs[ref]
	if !ok {
		return nil, fmt.Errorf("the OCI layout has no image %s: %w", ref, fs.ErrNotExist)
	}
	img, err := l.path.Image(digest)
	if err != nil {
		return nil, fmt.Errorf("reading %s from the OCI layout: %w", ref, err)
	}
	return img, nil
}

// FreeBytes is the free space of the layout directory's filesystem.
func (l *OCILayout) FreeBytes() (int64, error) {
	free, _, err := statfs(l.Dir())
	return free, err
}

// TotalBytes is the size of the layout directory's filesystem.
func (l *OCILayout) TotalBytes() (int64, error) {
	_, total, err := statfs(l.Dir())
	return total, err
}

// refs maps the references of index.json's entries to their digests; l.mu must be held.
func (l *OCILayout) refs() (map[string]v1.Hash, error) {
	index, err := l.path.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("reading the OCI layout's index: %w", err)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading the OCI layout's index: %w", err)
	}
	refs := make(map[string]v1.Hash, len(manifest.Manifests))
	for _, desc := range manifest.Manifests {
		if ref := desc.Annotations[RefAnnotation]; ref != "" {
			refs[ref] = desc.Digest
		}
	}
	return refs, nil
}

// ImageSize is the size in bytes of what pulling img transfers: its manifest, config and
// (compressed) layers.
func ImageSize(img v1.Image) (int64, error) {
	manifest, err := img.Manifest()
	if err != nil {
		return 0, fmt.Errorf("reading the image's manifest: %w", err)
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, fmt.Errorf("reading the image's manifest: %w", err)
	}
	size := int64(len(raw)) + manifest.Config.Size
	for _, layer := range manifest.Layers {
		size += layer.Size
	}
	return size, nil
}
