package configpolicy

import (
	"fmt"
	"path/filepath"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// namespaceSelector is a parsed spec.namespaceSelector (pkg/common/namespace_selection.go, filter,
// and pattern_util.go, Matches).
type namespaceSelector struct {
	empty       bool
	selector    labels.Selector
	selectorErr error
	include     []string
	exclude     []string
	// skipTerminating is set by terminatingInclusion Never. The API server defaults the field to
	// Default, which the controller's default flag value turns into IfMatch.
	skipTerminating bool
}

func prepareNamespaceSelector(target configpolicyv1.Target) namespaceSelector {
	sel := namespaceSelector{
		empty:           target.IsEmpty(),
		selector:        labels.Everything(),
		skipTerminating: target.TerminatingInclusion == "Never",
	}

	if target.LabelSelector != nil {
		sel.selector, sel.selectorErr = metav1.LabelSelectorAsSelector(target.LabelSelector)
	}

	for _, p := range target.Include {
		sel.include = append(sel.include, string(p))
	}

	for _, p := range target.Exclude {
		sel.exclude = append(sel.exclude, string(p))
	}

	return sel
}

// selectNamespaces returns the sorted names of the Namespaces in the store that the selector
// chooses. On a bad pattern it returns the names chosen so far with the error.
func (sel *namespaceSelector) selectNamespaces(store Store) ([]string, error) {
	if sel.empty {
		return nil, nil
	}

	if sel.selectorErr != nil {
		return nil, fmt.Errorf("error parsing namespace LabelSelector: %w", sel.selectorErr)
	}

	all, err := store.List(NamespaceGVK, "")
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}

	var chosen []string

	for _, ns := range all {
		if sel.skipTerminating && ns.GetDeletionTimestamp() != nil {
			continue
		}

		if !sel.selector.Matches(objectLabels(ns)) {
			continue
		}

		ok, err := sel.matchesPatterns(ns.GetName())
		if err != nil {
			slices.Sort(chosen)

			return chosen, err
		}

		if ok {
			chosen = append(chosen, ns.GetName())
		}
	}

	slices.Sort(chosen)

	return chosen, nil
}

// matchesPatterns applies the include globs (all names when there are none) and the exclude globs.
func (sel *namespaceSelector) matchesPatterns(name string) (bool, error) {
	included, err := anyMatch(sel.include, name, "include")
	if err != nil || (!included && len(sel.include) > 0) {
		return false, err
	}

	excluded, err := anyMatch(sel.exclude, name, "exclude")

	return !excluded, err
}

func anyMatch(patterns []string, name, what string) (bool, error) {
	for _, p := range patterns {
		ok, err := filepath.Match(p, name)
		if err != nil {
			return false, fmt.Errorf("error parsing '%s' pattern '%s': %w", what, p, err)
		}

		if ok {
			return true, nil
		}
	}

	return false, nil
}

// objectLabels reads an object's labels for a selector without copying them.
func objectLabels(obj *unstructured.Unstructured) labels.Labels {
	md, _ := obj.Object["metadata"].(map[string]any)
	lbls, _ := md["labels"].(map[string]any)

	return unstructuredLabels(lbls)
}

type unstructuredLabels map[string]any

func (l unstructuredLabels) Has(label string) bool {
	_, ok := l[label].(string)

	return ok
}

func (l unstructuredLabels) Get(label string) string {
	v, _ := l[label].(string)

	return v
}

func (l unstructuredLabels) Lookup(label string) (string, bool) {
	v, ok := l[label].(string)

	return v, ok
}
