package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

type listOptions struct {
	*env
	allNamespaces bool
	output        string
}

func newListCommand(e *env) *cobra.Command {
	o := &listOptions{env: e}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the ClusterGroupUpgrades of a namespace, or of every namespace",
		Long: `List the ClusterGroupUpgrades of the namespace (-n, or the kubeconfig's), or of every
namespace with -A, sorted by namespace and name: their state, the current batch out of
the batches of the plan, the clusters done (completed, timed out or failed) out of the
clusters of the plan, and their age.

With -o json or -o yaml, print a List of the ClusterGroupUpgrade objects; -o name prints
each one's clustergroupupgrade.ran.openshift.io/NAME, -o jsonpath=... and -o go-template=...
read the List as kubectl's do.`,
		Example: `  kubectl cgu list -n ztp-upgrades
  kubectl cgu ls -A
  kubectl cgu list -o yaml
  kubectl cgu list -A -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.state}{"\n"}{end}'`,
		Args: cobra.NoArgs,
		RunE: runE(o.run),
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "List the ClusterGroupUpgrades of every namespace")
	cmd.Flags().StringVarP(&o.output, "output", "o", outputTable, outputHelp)
	return cmd
}

func (o *listOptions) run(ctx context.Context, _ []string) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	c, namespace, err := o.client()
	if err != nil {
		return err
	}
	var list ranv1alpha1.ClusterGroupUpgradeList
	if err := c.List(ctx, &list, listScope(o.allNamespaces, namespace)...); err != nil {
		return fmt.Errorf("listing ClusterGroupUpgrades: %w", err)
	}
	items := list.Items
	slices.SortFunc(items, func(a, b ranv1alpha1.ClusterGroupUpgrade) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	if o.output != outputTable {
		return printData(o.IOStreams.Out, o.output, listObject(items))
	}
	if len(items) == 0 {
		return noneFound(o.IOStreams.ErrOut, "ClusterGroupUpgrades", namespace, o.allNamespaces)
	}
	return writeList(o.IOStreams.Out, o.painter(), items, o.allNamespaces, o.now())
}

// listScope is where a list command reads: the namespace, or every one with -A.
func listScope(all bool, namespace string) []client.ListOption {
	if all {
		return nil
	}
	return []client.ListOption{client.InNamespace(namespace)}
}

// noneFound says on w that a list command found nothing.
func noneFound(w io.Writer, kinds, namespace string, all bool) error {
	where := fmt.Sprintf("in namespace %s", namespace)
	if all {
		where = "in any namespace"
	}
	_, err := fmt.Fprintf(w, "No %s found %s\n", kinds, where)
	return err
}

// writeList writes the table of ClusterGroupUpgrades.
func writeList(w io.Writer, p painter, items []ranv1alpha1.ClusterGroupUpgrade, namespaces bool, now time.Time) error {
	t := &table{header: []string{"NAME", "STATE", "BATCH", "CLUSTERS", "AGE"}}
	if namespaces {
		t.header = append([]string{"NAMESPACE"}, t.header...)
	}
	for _, cgu := range items {
		var row []cell
		if namespaces {
			row = append(row, plain(cgu.Namespace))
		}
		st := cgu.Status
		t.add(append(row, plain(cgu.Name), stateCell(orDash(string(st.State))), plain(orDash(st.Progress.Batch)),
			plain(orDash(st.Progress.Clusters)), plain(age(cgu.CreationTimestamp.Time, now)))...)
	}
	return t.write(w, p, "")
}

// objectList is a List of objects as kubectl prints one.
type objectList struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []any  `json:"items"`
	Metadata   struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

func listObject(items []ranv1alpha1.ClusterGroupUpgrade) objectList {
	out := objectList{APIVersion: "v1", Kind: "List", Items: make([]any, 0, len(items))}
	for i := range items {
		out.Items = append(out.Items, printable(&items[i]))
	}
	return out
}

// printable returns a copy of a ClusterGroupUpgrade to print: with its apiVersion and kind,
// without managedFields, as kubectl shows objects.
func printable(cgu *ranv1alpha1.ClusterGroupUpgrade) *ranv1alpha1.ClusterGroupUpgrade {
	return printableCopy(cgu, ranv1alpha1.GroupVersion, "ClusterGroupUpgrade")
}
