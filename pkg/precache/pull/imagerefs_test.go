package pull

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseImageReferences(t *testing.T) {
	cases := map[string]struct {
		data    string
		want    []string
		wantErr string
	}{
		"tags in order": {
			data: `{"kind":"ImageStream","apiVersion":"image.openshift.io/v1","spec":{"tags":[
				{"name":"cli","from":{"kind":"DockerImage","name":"quay.io/ocp@sha256:aa"}},
				{"name":"etcd","from":{"kind":"DockerImage","name":"quay.io/ocp@sha256:bb"}}]}}`,
			want: []string{"quay.io/ocp@sha256:aa", "quay.io/ocp@sha256:bb"},
		},
		"tags of another kind are skipped": {
			data: `{"kind":"ImageStream","spec":{"tags":[
				{"name":"x","from":{"kind":"ImageStreamTag","name":"other:latest"}},
				{"name":"cli","from":{"kind":"DockerImage","name":"quay.io/ocp@sha256:aa"}}]}}`,
			want: []string{"quay.io/ocp@sha256:aa"},
		},
		"not JSON":         {data: `kind: ImageStream`, wantErr: "decoding image-references"},
		"another kind":     {data: `{"kind":"ConfigMap"}`, wantErr: `image-references is of kind "ConfigMap", want ImageStream`},
		"no image":         {data: `{"kind":"ImageStream","spec":{"tags":[]}}`, wantErr: "image-references names no image"},
		"tag without name": {data: `{"kind":"ImageStream","spec":{"tags":[{"name":"cli","from":{"kind":"DockerImage"}}]}}`, wantErr: `tag "cli" names no image`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseImageReferences([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseImageReferences() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseImageReferences() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("images mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseImageReferences checks that the parser never panics, that what it returns is
// non-empty, and that formatting what it returns and parsing it again gives the same images.
func FuzzParseImageReferences(f *testing.F) {
	f.Add([]byte(`{"kind":"ImageStream","spec":{"tags":[{"name":"cli","from":{"kind":"DockerImage","name":"quay.io/ocp@sha256:aa"}}]}}`))
	f.Add([]byte(`{"kind":"ImageStream","spec":{"tags":[{"name":"a","from":{"kind":"ImageStreamTag","name":"x"}},{"name":"b","from":{"kind":"DockerImage","name":"r/b:1"}}]}}`))
	f.Add([]byte(`{"kind":"ImageStream","spec":{"tags":null}}`))
	f.Add([]byte(`{"kind":"ImageStream","spec":{"tags":[{"from":{"kind":"DockerImage","name":""}}]}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"kind":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, err := ParseImageReferences(data)
		if err != nil {
			return
		}
		if len(refs) == 0 {
			t.Fatal("no error and no image")
		}
		for _, ref := range refs {
			if ref == "" {
				t.Fatal("an empty image")
			}
		}
		again, err := FormatImageReferences(refs)
		if err != nil {
			t.Fatalf("FormatImageReferences() error: %v", err)
		}
		back, err := ParseImageReferences(again)
		if err != nil {
			t.Fatalf("parsing the formatted images: %v", err)
		}
		if diff := cmp.Diff(refs, back); diff != "" {
			t.Fatalf("round trip mismatch (-first +second):\n%s", diff)
		}
	})
}
