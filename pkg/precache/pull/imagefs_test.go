package pull_test

import (
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
)

func TestReadFile(t *testing.T) {
	const file = "release-manifests/image-references"
	old := pulltest.Layer(t, pulltest.Files{file: []byte("old"), "release-manifests/other": []byte("x")})
	cases := map[string]struct {
		layers  []pulltest.Files
		want    string
		missing bool
	}{
		"the last layer holding it wins": {
			layers: []pulltest.Files{{"usr/bin/x": []byte("x")}, {"release-manifests/image-references": []byte("new")}, {"etc/motd": []byte("hi")}},
			want:   "new",
		},
		"a leading ./ in the archive": {
			layers: []pulltest.Files{{"./release-manifests/image-references": []byte("dot")}},
			want:   "dot",
		},
		"deleted by a whiteout": {
			layers:  []pulltest.Files{{"release-manifests/.wh.image-references": nil}},
			missing: true,
		},
		"its directory deleted": {
			layers:  []pulltest.Files{{".wh.release-manifests": nil}},
			missing: true,
		},
		"its directory made opaque": {
			layers:  []pulltest.Files{{"release-manifests/.wh..wh..opq": nil, "release-manifests/other": []byte("y")}},
			missing: true,
		},
		"a whiteout of another file": {
			layers: []pulltest.Files{{"release-manifests/.wh.other": nil}},
			want:   "old",
		},
		"written again after a delete": {
			layers: []pulltest.Files{{"release-manifests/.wh.image-references": nil}, {"release-manifests/image-references": []byte("again")}},
			want:   "again",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			layers := []v1.Layer{old}
			for _, files := range tc.layers {
				layers = append(layers, pulltest.Layer(t, files))
			}
			got, err := pull.ReadFile(pulltest.Image(t, nil, layers...), "/"+file)
			if tc.missing {
				if !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("ReadFile() = %q, %v; want an error wrapping fs.ErrNotExist", got, err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Errorf("ReadFile() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestWalkFiles(t *testing.T) {
	img := pulltest.Image(t, nil,
		pulltest.Layer(t, pulltest.Files{"configs/a/catalog.json": []byte("a1"), "configs/b/catalog.yaml": []byte("b"), "configsx/c": []byte("c"), "bin/opm": []byte("x")}),
		pulltest.Layer(t, pulltest.Files{"configs/a/catalog.json": []byte("a2"), "configs/.wh.b": nil}),
	)
	got := map[string]string{}
	err := pull.WalkFiles(img, "/configs/", func(name string, r io.Reader) error {
		data, err := io.ReadAll(r)
		got[name] = string(data)
		return err
	})
	if err != nil {
		t.Fatalf("WalkFiles() error: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"configs/a/catalog.json": "a2"}, got); diff != "" {
		t.Errorf("files mismatch (-want +got):\n%s", diff)
	}
	stop := errors.New("stop")
	var names []string
	err = pull.WalkFiles(img, "", func(name string, _ io.Reader) error {
		names = append(names, name)
		return stop
	})
	if !errors.Is(err, stop) || len(names) != 1 {
		t.Errorf("WalkFiles() = %v after %v, want the callback's error after one file", err, names)
	}
}
