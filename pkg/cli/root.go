// Package cli is the kubectl-cgu plugin (`kubectl cgu`, `oc cgu`): commands that show
// ClusterGroupUpgrades, their plans and progress, as people and scripts need them. Each
// subcommand lives in its own file and registers itself in NewRootCommand; what they share
// (the hub client, output formats, colour, exit codes) is here and in printers.go.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// Exit codes. Every command exits with one of the first four; `status --exit-state` maps
// the rollout's state to the last four instead of 0.
const (
	// ExitOK: the command did what was asked.
	ExitOK = 0
	// ExitHubError: the hub could not be reached or refused a request.
	ExitHubError = 1
	// ExitUsage: an unknown command, a missing NAME, an unknown flag or a bad flag value.
	ExitUsage = 2
	// ExitNotFound: the named ClusterGroupUpgrade (or ImageBasedGroupUpgrade,
	// ManagedClustersUpgrade, ReleaseTrain) does not exist.
	ExitNotFound = 3
	// ExitRunning (status --exit-state): NotStarted or NotCompleted.
	ExitRunning = 10
	// ExitCannotStart (status --exit-state): CannotStart.
	ExitCannotStart = 11
	// ExitTimedOut (status --exit-state): TimedOut.
	ExitTimedOut = 12
)

// exitCodesHelp documents the exit codes in the root command's long help.
const exitCodesHelp = `Exit codes:
  0   success (status --exit-state: the rollout is Completed)
  1   error talking to the hub
  2   usage error: unknown command, missing NAME, unknown flag or bad flag value
  3   the named ClusterGroupUpgrade (or IBGU, MCU, ReleaseTrain) does not exist
  10  status --exit-state: NotStarted or NotCompleted
  11  status --exit-state: CannotStart
  12  status --exit-state: TimedOut`

// Options are what the command tree takes from its caller: the streams it writes to and
// the clock it reads (tests pass a fake one so that output is deterministic).
type Options struct {
	IOStreams genericiooptions.IOStreams
	// Now tells the time; nil means time.Now.
	Now func() time.Time
	// Getenv reads the environment (NO_COLOR); nil means os.Getenv.
	Getenv func(string) string
}

// DefaultOptions writes to the process's standard streams and reads the real clock.
func DefaultOptions() Options {
	return Options{
		IOStreams: genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr},
		Now:       time.Now, Getenv: os.Getenv,
	}
}

// env is what every subcommand shares: the options, the kubeconfig flags and the colour
// flag.
type env struct {
	Options
	config *genericclioptions.ConfigFlags
	color  string
}

// now returns the time of the options' clock.
func (e *env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// painter returns the painter for the command's output, per --color.
func (e *env) painter() painter {
	getenv := e.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	on, _ := colorEnabled(e.color, isTerminal(e.IOStreams.Out), getenv("NO_COLOR"))
	return painter{on: on}
}

// width returns the width of the output, for wrapping lists.
func (e *env) width() int { return width(e.IOStreams.Out) }

// restConfig returns the configuration reaching the hub and the namespace the kubeconfig
// flags name.
func (e *env) restConfig() (*rest.Config, string, error) {
	cfg, err := e.config.ToRESTConfig()
	if err != nil {
		return nil, "", hubError(fmt.Errorf("loading the kubeconfig: %w", err))
	}
	namespace, _, err := e.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", hubError(fmt.Errorf("reading the namespace from the kubeconfig: %w", err))
	}
	return cfg, namespace, nil
}

// client returns a client of the hub and the namespace the kubeconfig flags name.
func (e *env) client() (client.Client, string, error) {
	cfg, namespace, err := e.restConfig()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme()})
	if err != nil {
		return nil, "", hubError(fmt.Errorf("creating a client of the hub: %w", err))
	}
	return c, namespace, nil
}

// newScheme knows every kind the commands read.
func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		ranv1alpha1.AddToScheme, lcmv1alpha1.AddToScheme, authenticationv1.AddToScheme, policyv1.AddToScheme, clusterv1.Install, clusterv1beta1.Install, workv1alpha1.Install,
		viewv1beta1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

// NewRootCommand returns the kubectl-cgu command tree.
func NewRootCommand(o Options) *cobra.Command {
	e := &env{Options: o, config: genericclioptions.NewConfigFlags(true)}
	e.config.CacheDir = nil // no discovery cache: the commands know their kinds
	root := &cobra.Command{
		Use:   "kubectl-cgu",
		Short: "Show ClusterGroupUpgrades: their state, plan and progress",
		Long: `Show ClusterGroupUpgrades (ran.openshift.io/v1alpha1): their state, what they wait for,
their plan of batches, and the progress of each cluster. Works as "kubectl cgu" and "oc cgu".

` + exitCodesHelp,
		Annotations:       map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl cgu"},
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return checkColor(e.color) },
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(o.IOStreams.In)
	root.SetOut(o.IOStreams.Out)
	root.SetErr(o.IOStreams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: ExitUsage, err: err} })
	e.config.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&e.color, "color", colorAuto,
		`When to colour the output: auto (when stdout is a terminal and NO_COLOR is not set), always or never`)
	root.AddCommand(newListCommand(e), newStatusCommand(e), newPlanCommand(e),
		newApproveCommand(e), newPauseCommand(e), newResumeCommand(e), newFreezeCommand(e), newUnfreezeCommand(e), newEnableCommand(e), newDashboardCommand(e), newPreflightCommand(e), newGeneratePolicyCommand(e),
		newIBGUCommand(e), newMCUCommand(e), newTrainCommand(e))
	return root
}

// Run runs the command tree with args (without the program name), prints an error the
// way kubectl does, and returns the exit code.
func Run(ctx context.Context, o Options, args []string) int {
	root := NewRootCommand(o)
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	cmd, err := root.ExecuteContextC(ctx)
	code := ExitCode(err)
	if err != nil && err.Error() != "" {
		fmt.Fprintf(o.IOStreams.ErrOut, "Error: %s\n", capitalize(err.Error()))
		if code == ExitUsage && cmd != nil {
			fmt.Fprintf(o.IOStreams.ErrOut, "See '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return code
}

// capitalize returns s with its first letter in upper case.
func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

// exitError is an error with the exit code it calls for; an empty err only sets the code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// ExitCode returns the exit code for the error a command returned: nil is success, an
// error of the commands carries its code, and anything else comes from parsing the
// command line, a usage error.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitUsage
}

// usageError is a usage error with a formatted message.
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// hubError marks an error reading the hub; an error already carrying a code keeps it.
func hubError(err error) error {
	if err == nil {
		return nil
	}
	var e *exitError
	if errors.As(err, &e) {
		return err
	}
	return &exitError{code: ExitHubError, err: err}
}

// exactlyOneName accepts exactly one NAME argument.
func exactlyOneName(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return usageError("missing NAME: %s NAME", cmd.CommandPath())
	case 1:
		return nil
	}
	return usageError("one NAME expected, got %d arguments: %s NAME", len(args), cmd.CommandPath())
}

// runE makes every error of a command's run an error of the hub unless it carries its
// own exit code.
func runE(run func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return hubError(run(cmd.Context(), args))
	}
}
