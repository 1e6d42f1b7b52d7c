package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// The kube-apiserver module requires what the operator's module does at the operator's
// versions, so that the packages both build (client-go, apimachinery, grpc, otel and the
// rest) compile once: on a cold build cache, `make test` then compiles its test binaries in
// about 350 s after building kube-apiserver instead of about 600 s (docs/testing.md). A
// module the operator's go.mod bumps and this one does not fails here.
func TestKubeAPIServerSharesTheModuleVersions(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	ours := requires(t, filepath.Join(root, "go.mod"))
	tools := requires(t, filepath.Join(root, "hack", "envtest", "kube-apiserver", "go.mod"))
	replaced := replacements(t, filepath.Join(root, "hack", "envtest", "kube-apiserver", "go.mod"))
	shared := 0
	for mod, version := range tools {
		if r, ok := replaced[mod]; ok {
			version = r
		}
		want, ok := ours[mod]
		if !ok {
			continue
		}
		shared++
		// kube-aggregator is one the operator's module takes at v0.34 (through Open Cluster
		// Management) and kube-apiserver at its own release; it is not worth a downgrade.
		if version != want && mod != "k8s.io/kube-aggregator" {
			t.Errorf("%s: hack/envtest/kube-apiserver requires %s, the operator %s: bring it to %s (go get %s@%s there, then go mod tidy)",
				mod, version, want, want, mod, want)
		}
	}
	if shared < 50 {
		t.Errorf("only %d modules in both go.mod files: was the module list read?", shared)
	}
}

func requires(t *testing.T, path string) map[string]string {
	t.Helper()
	f := parse(t, path)
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	return out
}

func replacements(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range parse(t, path).Replace {
		out[r.Old.Path] = r.New.Version
	}
	return out
}

func parse(t *testing.T, path string) *modfile.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
