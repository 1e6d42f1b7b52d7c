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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kindView is a command that lists the objects of one kind, or shows one by name: `ibgu`
// and `mcu`. Items and Show and Table are the kind's; the rest is shared.
type kindView[T client.Object] struct {
	*env
	allNamespaces bool
	output        string
	// kind is the kind's name, plural its plural, as messages say them.
	kind, plural string
	// get returns an empty object, list the listed objects.
	get  func() T
	list func(ctx context.Context, c client.Client, opts ...client.ListOption) ([]T, error)
	// printable is the copy -o json|yaml prints.
	printable func(T) any
	show      func(w io.Writer, p painter, obj T, now time.Time) error
	table     func(w io.Writer, p painter, items []T, namespaces bool, now time.Time) error
}

// command is the cobra command of the view, with its -A and -o flags.
func (v *kindView[T]) command(use, short, long, example string) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example, Args: cobra.MaximumNArgs(1), RunE: runE(v.run)}
	cmd.Flags().BoolVarP(&v.allNamespaces, "all-namespaces", "A", false, "List the "+v.plural+" of every namespace")
	cmd.Flags().StringVarP(&v.output, "output", "o", outputTable, outputHelp)
	return cmd
}

func (v *kindView[T]) run(ctx context.Context, args []string) error {
	if err := checkOutput(v.output); err != nil {
		return err
	}
	c, namespace, err := v.client()
	if err != nil {
		return err
	}
	if len(args) == 1 {
		obj := v.get()
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: args[0]}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return &exitError{code: ExitNotFound, err: fmt.Errorf("%s %s/%s not found", v.kind, namespace, args[0])}
			}
			return hubError(fmt.Errorf("reading %s %s/%s: %w", v.kind, namespace, args[0], err))
		}
		if v.output != outputTable {
			return printData(v.IOStreams.Out, v.output, v.printable(obj))
		}
		return v.show(v.IOStreams.Out, v.painter(), obj, v.now())
	}
	items, err := v.list(ctx, c, listScope(v.allNamespaces, namespace)...)
	if err != nil {
		return hubError(fmt.Errorf("listing %s: %w", v.plural, err))
	}
	slices.SortFunc(items, func(a, b T) int {
		return cmp.Or(strings.Compare(a.GetNamespace(), b.GetNamespace()), strings.Compare(a.GetName(), b.GetName()))
	})
	if v.output != outputTable {
		out := objectList{APIVersion: "v1", Kind: "List", Items: make([]any, 0, len(items))}
		for _, item := range items {
			out.Items = append(out.Items, v.printable(item))
		}
		return printData(v.IOStreams.Out, v.output, out)
	}
	if len(items) == 0 {
		return noneFound(v.IOStreams.ErrOut, v.plural, namespace, v.allNamespaces)
	}
	return v.table(v.IOStreams.Out, v.painter(), items, v.allNamespaces, v.now())
}

// printableCopy returns a copy of obj to print, as kubectl shows objects: with its apiVersion
// and kind, without managedFields.
func printableCopy[T client.Object](obj T, gv schema.GroupVersion, kind string) T {
	out := obj.DeepCopyObject().(T)
	out.GetObjectKind().SetGroupVersionKind(gv.WithKind(kind))
	out.SetManagedFields(nil)
	return out
}

// pointers returns pointers to the items of a list, for kindView.list.
func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}
