package cli_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/cli"
	"github.com/cgu-operator/cgu-operator/tests/golden"
)

// settle bounds how long the hub takes to carry a change through the operator, the
// propagator and the simulated spokes.
const settle = 60 * time.Second

// joinFleet adds n clusters named <label>-1..n, labelled fleet=<label>, each with a
// simulated spoke on version from; it returns their names.
func joinFleet(ctx context.Context, label string, n int) []string {
	return fleet.MustJoinFleet(ctx, label, n)
}

// placeUpgradePolicy creates the inform policy <label>-upgrade, upgrading to version to,
// placed on the fleet label, and waits until every cluster of the fleet reports on it.
func placeUpgradePolicy(ctx context.Context, label string, clusters int) *policyv1.Policy {
	return fleet.MustPlaceUpgradePolicy(ctx, label, clusters, settle)
}

// result is what one run of the plugin printed and its exit code.
type result struct {
	out, errOut string
	code        int
}

// kubectlCGU runs the plugin on the hub with args, on the operator's fake clock, colour
// off (the output is no terminal).
func kubectlCGU(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	o := cli.Options{
		IOStreams: genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut},
		Now:       clock.Now, Getenv: func(string) string { return "" },
	}
	code := cli.Run(ctx, o, append([]string{"--kubeconfig", kubeconfig}, args...))
	return result{out: out.String(), errOut: errOut.String(), code: code}
}

// succeeds runs the plugin and expects it to succeed; it returns its output.
func succeeds(ctx context.Context, args ...string) string {
	r := kubectlCGU(ctx, args...)
	ExpectWithOffset(1, r.code).To(Equal(cli.ExitOK), "kubectl cgu %s: %s", strings.Join(args, " "), r.errOut)
	return r.out
}

// matchGolden compares got with testdata/<name>.golden, or rewrites the file with -update.
func matchGolden(name, got string) {
	ExpectWithOffset(1, golden.Check(name, got)).To(Succeed())
}

// lastColumn is the last column of a table's rows.
var lastColumn = regexp.MustCompile(`(?m)^(.*\S\s+)\S+$`)

// withoutAge replaces the AGE column of list's table, the last one, by "<age>": the API
// server stamps creationTimestamp with the real time, the operator and the commands run on
// the fake clock.
func withoutAge(table string) string {
	lines := strings.SplitAfterN(table, "\n", 2)
	if len(lines) < 2 {
		return table
	}
	return lines[0] + lastColumn.ReplaceAllString(lines[1], "${1}<age>")
}

// rowsOf keeps a table's header and the rows whose first column is first.
func rowsOf(table, first string) string {
	lines := strings.SplitAfter(table, "\n")
	out := lines[0]
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 0 && f[0] == first {
			out += l
		}
	}
	return out
}
