package rbac_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cgu-operator/cgu-operator/tests/testenv"
)

// The ClusterRole table of docs/reliability.md lists exactly the grants of
// config/rbac/role.yaml: none missing, none extra.
func TestDocsMatchTheClusterRole(t *testing.T) {
	root, err := testenv.Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(role); err != nil {
		t.Fatal(err)
	}
	var granted []string
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					granted = append(granted, grant{g, res, v}.String())
				}
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "reliability.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedGrants(t, string(doc))
	slices.Sort(granted)
	granted = slices.Compact(granted)
	for _, g := range granted {
		if !slices.Contains(documented, g) {
			t.Errorf("granted by role.yaml, not in the docs' table: %s", g)
		}
	}
	for _, g := range documented {
		if !slices.Contains(granted, g) {
			t.Errorf("in the docs' table, not granted by role.yaml: %s", g)
		}
	}
}

// documentedGrants reads the table under "#### ClusterRole `manager-role`": a row's empty
// group or resource cell repeats the one above.
func documentedGrants(t *testing.T, doc string) []string {
	start := strings.Index(doc, "#### ClusterRole `manager-role`")
	if start < 0 {
		t.Fatal("no ClusterRole section in docs/reliability.md")
	}
	var out []string
	group, resource := "", ""
	rows := 0
	sc := bufio.NewScanner(strings.NewReader(doc[start:]))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "####") && rows > 0 {
			break
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| API group") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 5 {
			continue
		}
		rows++
		if g := strings.TrimSpace(cells[1]); g != "" {
			group = strings.Trim(strings.Fields(g)[0], "`\"")
		}
		if r := strings.TrimSpace(cells[2]); r != "" {
			resource = strings.Trim(r, "`")
		}
		for _, v := range strings.Split(cells[3], ",") {
			out = append(out, grant{group, resource, strings.TrimSpace(v)}.String())
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
