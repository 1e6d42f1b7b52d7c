package pull_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
)

func TestOCILayout(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	l, err := pull.NewOCILayout(dir)
	if err != nil {
		t.Fatalf("NewOCILayout() error: %v", err)
	}
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "quay.io/a/b:1"
	if has, err := l.Has(ctx, ref); err != nil || has {
		t.Fatalf("Has() on an empty layout = %t, %v; want false", has, err)
	}
	// Concurrent Puts of the same image under two references and of one reference twice.
	var wg sync.WaitGroup
	for _, r := range []string{ref, ref, "quay.io/a/b@sha256:x"} {
		wg.Go(func() {
			if n, err := l.Put(ctx, r, img); err != nil || n <= 2048 {
				t.Errorf("Put(%s) = %d, %v", r, n, err)
			}
		})
	}
	wg.Wait()
	checkReopened(t, dir)
}

// checkReopened checks the layout in dir, opened again, after TestOCILayout's Puts.
func checkReopened(t *testing.T, dir string) {
	t.Helper()
	reopened, err := pull.NewOCILayout(dir)
	if err != nil {
		t.Fatalf("NewOCILayout() of an existing layout error: %v", err)
	}
	refs, err := reopened.Refs()
	if err != nil || len(refs) != 2 {
		t.Errorf("Refs() = %v, %v; want the two references once each", refs, err)
	}
	if _, err := reopened.Image("quay.io/a/c:1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Image() of a missing reference error = %v, want fs.ErrNotExist", err)
	}
	free, err := reopened.FreeBytes()
	total, err2 := reopened.TotalBytes()
	if err != nil || err2 != nil || free <= 0 || total < free {
		t.Errorf("FreeBytes(), TotalBytes() = %d, %d (%v, %v); want 0 < free <= total", free, total, err, err2)
	}
}

func TestOCILayoutErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := pull.NewOCILayout(filepath.Join(file, "store")); err == nil {
		t.Error("NewOCILayout() under a file succeeded, want an error")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.json"), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := pull.NewOCILayout(dir)
	if err != nil {
		t.Fatalf("NewOCILayout() error: %v", err)
	}
	if _, err := l.Has(context.Background(), "quay.io/a/b:1"); err == nil {
		t.Error("Has() with a broken index succeeded, want an error")
	}
}
