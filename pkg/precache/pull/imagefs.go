package pull

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// maxFileSize bounds a file ReadFile reads into memory.
const maxFileSize = 64 << 20

// The markers by which a layer deletes what the layers below it hold (the OCI image spec's
// whiteouts): ".wh.NAME" deletes NAME, ".wh..wh..opq" in a directory deletes what lower
// layers put in it.
const (
	whiteoutPrefix = ".wh."
	opaqueMarker   = ".wh..wh..opq"
)

// ReadFile reads the regular file at name in the image's filesystem, as a container of the
// image would see it: from the topmost layer that holds it, unless a layer above that one
// deleted it or a directory above it. It reads the layers from the top, so a file of the last
// layer costs one layer. The error wraps fs.ErrNotExist when the image has no such file.
func ReadFile(img v1.Image, name string) ([]byte, error) {
	name = cleanPath(name)
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("listing the image's layers: %w", err)
	}
	for i := len(layers) - 1; i >= 0; i-- {
		data, found, hidden, err := readFromLayer(layers[i], name)
		if err != nil {
			return nil, fmt.Errorf("reading layer %d of the image: %w", i+1, err)
		}
		if found {
			return data, nil
		}
		if hidden {
			break
		}
	}
	return nil, fmt.Errorf("the image has no file %s: %w", name, fs.ErrNotExist)
}

// readFromLayer reads the file at name from one layer: found tells whether the layer holds
// it; hidden whether the layer deletes it, or a directory above it, from the layers below.
func readFromLayer(layer v1.Layer, name string) (data []byte, found, hidden bool, err error) {
	rc, err := layer.Uncompressed()
	if err != nil {
		return nil, false, false, err
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return data, found, hidden, nil
		}
		if err != nil {
			return nil, false, false, fmt.Errorf("reading the layer's archive: %w", err)
		}
		entry := cleanPath(hdr.Name)
		switch {
		case entry == name && hdr.Typeflag == tar.TypeReg:
			if data, err = readLimited(tr, name); err != nil {
				return nil, false, false, err
			}
			found = true
		case deletes(entry, name):
			hidden = true
		}
	}
}

// deletes tells whether the layer entry is a whiteout that deletes name from lower layers.
func deletes(entry, name string) bool {
	dir, base := path.Split(entry)
	dir = strings.TrimSuffix(dir, "/")
	if base == opaqueMarker {
		return within(name, dir)
	}
	if !strings.HasPrefix(base, whiteoutPrefix) {
		return false
	}
	return within(name, path.Join(dir, strings.TrimPrefix(base, whiteoutPrefix)))
}

// within tells whether name is dir or lies under it; every name lies under the root "".
func within(name, dir string) bool {
	return dir == "" || name == dir || strings.HasPrefix(name, dir+"/")
}

// readLimited reads r to its end, failing when it holds more than maxFileSize bytes.
func readLimited(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxFileSize)
	}
	return data, nil
}

// WalkFiles calls fn on each regular file under dir in the image's flattened filesystem,
// with its path relative to the image's root. It reads every layer once.
func WalkFiles(img v1.Image, dir string, fn func(name string, r io.Reader) error) error {
	dir = cleanPath(dir)
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the image's filesystem: %w", err)
		}
		name := cleanPath(hdr.Name)
		if hdr.Typeflag != tar.TypeReg || name == dir || !within(name, dir) {
			continue
		}
		if err := fn(name, tr); err != nil {
			return err
		}
	}
}

// cleanPath is p relative to the image's root, without "./", a leading or trailing slash.
func cleanPath(p string) string {
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}
