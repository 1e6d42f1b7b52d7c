package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/mod/modfile"
)

// The tools modules that build kube-apiserver and etcd require what the operator's module
// does at the operator's versions, so that the packages they share (client-go, apimachinery,
// grpc, otel, prometheus and the rest) compile once: on a cold build cache, `make test` then
// compiles its test binaries in about 350 s after building kube-apiserver instead of about
// 600 s, and etcd builds mostly from what kube-apiserver compiled (docs/testing.md). A module
// the operator's go.mod bumps and a tools module does not fails here.
func TestToolsModulesShareTheModuleVersions(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	ours := requires(t, filepath.Join(root, "go.mod"))
	cases := map[string]struct {
		// least is how many modules the two go.mod files must have in common, to catch a
		// list that was not read.
		least int
		// exempt is a module the tools module may take at another version.
		exempt string
	}{
		// kube-aggregator is one the operator's module takes at v0.34 (through Open Cluster
		// Management) and kube-apiserver at its own release; it is not worth a downgrade.
		"kube-apiserver": {least: 50, exempt: "k8s.io/kube-aggregator"},
		"etcd":           {least: 25},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, "hack", "envtest", name, "go.mod")
			tools, replaced := requires(t, path), replacements(t, path)
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
				if version != want && mod != tc.exempt {
					t.Errorf("%s: hack/envtest/%s requires %s, the operator %s: bring it to %s (go get %s@%s there, then go mod tidy)",
						mod, name, version, want, want, mod, want)
				}
			}
			if shared < tc.least {
				t.Errorf("only %d modules in both go.mod files, want at least %d: was the module list read?", shared, tc.least)
			}
		})
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
