package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestExitCode(t *testing.T) {
	cases := map[string]struct {
		err  error
		want int
	}{
		"success":                        {nil, ExitOK},
		"an error of the hub":            {hubError(errors.New("connection refused")), ExitHubError},
		"a wrapped error keeps its code": {fmt.Errorf("reading: %w", &exitError{code: ExitNotFound, err: errors.New("x")}), ExitNotFound},
		"hubError keeps a code":          {hubError(&exitError{code: ExitNotFound}), ExitNotFound},
		"a usage error":                  {usageError("bad"), ExitUsage},
		"an error of the command line":   {errors.New(`unknown command "x" for "kubectl cgu"`), ExitUsage},
		"a state code without a message": {&exitError{code: ExitTimedOut}, ExitTimedOut},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
	if hubError(nil) != nil {
		t.Error("hubError(nil) is not nil")
	}
}

// TestRunWithoutHub runs command lines that fail before talking to a hub.
func TestRunWithoutHub(t *testing.T) {
	cases := map[string]struct {
		args       []string
		want       int
		wantStderr string
	}{
		"no command prints the help": {nil, ExitOK, ""},
		"an unknown command":         {[]string{"frobnicate"}, ExitUsage, `Error: Unknown command "frobnicate" for "kubectl cgu"`},
		"status without a NAME":      {[]string{"status"}, ExitUsage, "Error: Missing NAME: kubectl cgu status NAME"},
		"plan with two NAMEs":        {[]string{"plan", "a", "b"}, ExitUsage, "Error: One NAME expected, got 2 arguments: kubectl cgu plan NAME"},
		"an unknown flag":            {[]string{"list", "--frobnicate"}, ExitUsage, "Error: Unknown flag: --frobnicate"},
		"train approve without VERSION": {[]string{"train", "approve", "edge"}, ExitUsage,
			"Error: NAME and VERSION expected, got 1 argument: kubectl cgu train approve NAME VERSION"},
		"a bad output format":         {[]string{"status", "x", "-o", "xml"}, ExitUsage, `Error: Unknown output format "xml"`},
		"a bad colour":                {[]string{"list", "--color", "sometimes"}, ExitUsage, `Error: Unknown --color value "sometimes"`},
		"a kubeconfig that is absent": {[]string{"list", "--kubeconfig", "/nonexistent/kubeconfig"}, ExitHubError, "Error: Loading the kubeconfig"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			o := Options{IOStreams: genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}}
			if got := Run(context.Background(), o, tc.args); got != tc.want {
				t.Errorf("exit code %d, want %d; stderr:\n%s", got, tc.want, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.wantStderr)
			}
		})
	}
}
