package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/golden"
)

// policySamples are the upgrade policy samples, as kubectl cgu generate-policy writes them.
var policySamples = map[string]cli.PolicyOptions{
	"clusterversion-z-stream.yaml": {Name: "ocp-4-16-12", Namespace: "ztp-policies", Kind: cli.KindClusterVersion,
		Version: "4.16.12", Wave: 100},
	"clusterversion-y-stream.yaml": {Name: "ocp-4-17-0", Namespace: "ztp-policies", Kind: cli.KindClusterVersion,
		Version: "4.17.0", Channel: "stable-4.17", Wave: 100},
	"upgradeconfig.yaml": {Name: "muo-4-16-12", Namespace: "ztp-policies", Kind: cli.KindUpgradeConfig,
		Version: "4.16.12", Channel: "stable-4.16", UpgradeAt: time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)},
}

// The policy samples are what generate-policy writes (go test ./pkg/cli/ -update rewrites
// them, keeping their comments).
func TestPolicySamples(t *testing.T) {
	for file, o := range policySamples {
		t.Run(file, func(t *testing.T) {
			p, err := cli.GeneratePolicy(o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cli.PolicyYAML(p)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("..", "..", "samples", "policies", file)
			data, err := os.ReadFile(path)
			if err != nil && !golden.Updating() {
				t.Fatal(err)
			}
			comments, body := splitComments(string(data))
			if golden.Updating() {
				if err := os.WriteFile(path, []byte(comments+string(got)), 0o600); err != nil {
					t.Fatal(err)
				}
				return
			}
			if body != string(got) {
				t.Fatalf("%s differs from generate-policy's output (go test ./pkg/cli/ -update):\n%s", path, got)
			}
		})
	}
}

func TestGeneratePolicyRefusesBadInput(t *testing.T) {
	cases := map[string]struct {
		o    cli.PolicyOptions
		want string
	}{
		"no version":                   {cli.PolicyOptions{Name: "p", Kind: cli.KindClusterVersion}, "is not a release version"},
		"unknown kind":                 {cli.PolicyOptions{Name: "p", Kind: "Machine", Version: "4.16.12"}, "--kind must be ClusterVersion or UpgradeConfig"},
		"UpgradeConfig without a time": {cli.PolicyOptions{Name: "p", Kind: cli.KindUpgradeConfig, Version: "4.16.12"}, "needs --upgrade-at"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := cli.GeneratePolicy(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// splitComments splits the leading comment lines of a file from the rest.
func splitComments(s string) (string, string) {
	i := 0
	for i < len(s) && strings.HasPrefix(s[i:], "#") {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return s, ""
		}
		i += j + 1
	}
	return s[:i], s[i:]
}
