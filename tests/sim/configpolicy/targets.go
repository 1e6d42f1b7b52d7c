package configpolicy

import (
	"fmt"
	"slices"
	"strings"
)

// targets lists the objects a template applies to (determineDesiredObjects): one per namespace
// for named and unnamed templates, one per selected object for an objectSelector. A returned event
// replaces all object findings.
func (ev *evaluation) targets(t *objectTemplate, m Mapping) ([]target, *event) {
	namespaces, errEvent := ev.templateNamespaces(t, m)
	if errEvent != nil {
		return nil, errEvent
	}

	if len(namespaces) == 0 {
		return nil, missingNamespace(t)
	}

	var targets []target

	if t.name == "" && t.hasSelector {
		var errEvent *event

		targets, errEvent = ev.selectedTargets(t, m, namespaces)
		if errEvent != nil {
			return nil, errEvent
		}
	} else {
		targets = make([]target, len(namespaces))
		for i, ns := range namespaces {
			targets[i] = target{ns: ns, name: t.name}
		}
	}

	if t.decodeErr != nil {
		return nil, t.decodeErr
	}

	if t.ctype.IsMustNotHave() && t.name == "" && t.hasSelector {
		return ev.unwantedSelected(t, m, targets, namespaces)
	}

	return targets, nil
}

// templateNamespaces returns the namespaces a template applies to: the namespaceSelector's for a
// namespaced kind without metadata.namespace, else the template's namespace ("" when unset).
func (ev *evaluation) templateNamespaces(t *objectTemplate, m Mapping) ([]string, *event) {
	if !m.Namespaced || t.ns != "" {
		return t.nsList, nil
	}

	if !ev.namespacesDone {
		ev.namespaces, ev.namespacesErr = ev.p.namespaces.selectNamespaces(ev.store)
		ev.namespacesDone = true
	}

	if ev.namespacesErr != nil {
		return nil, &event{reason: "namespaceSelector error", message: fmt.Sprintf(
			"Error filtering namespaces with provided namespaceSelector: %v", ev.namespacesErr)}
	}

	return ev.namespaces, nil
}

func missingNamespace(t *objectTemplate) *event {
	name := t.name
	if name != "" {
		name = " " + name
	}

	return &event{reason: "K8s missing namespace", message: fmt.Sprintf("namespaced object%s of kind %s has no "+
		"namespace specified from the policy namespaceSelector nor the object metadata", name, t.gvk.Kind)}
}

// selectedTargets lists the objects chosen by the template's objectSelector in each namespace.
func (ev *evaluation) selectedTargets(t *objectTemplate, m Mapping, namespaces []string) ([]target, *event) {
	if t.selectorErr != nil {
		return nil, &event{reason: "objectSelector error", message: fmt.Sprintf(
			"Error parsing provided objectSelector in the object-template at index [%d]: %v", t.index, t.selectorErr)}
	}

	var targets []target

	for _, ns := range namespaces {
		objs, err := ev.store.List(t.gvk, listNamespace(m, ns))
		if err != nil {
			return nil, &event{reason: "objectSelector error", message: fmt.Sprintf("Error listing resources with "+
				"provided objectSelector in the object-template at index [%d]: %v", t.index, err)}
		}

		for _, obj := range objs {
			if t.selector.Matches(objectLabels(obj)) {
				targets = append(targets, target{ns: ns, name: obj.GetName(), obj: obj})
			}
		}
	}

	if len(targets) == 0 {
		return nil, &event{compliant: true, message: fmt.Sprintf(
			"No objects of kind %s were matched from the policy objectSelector", t.gvk.Kind)}
	}

	return targets, nil
}

// unwantedSelected narrows selected objects of an unnamed mustnothave template to those whose
// content matches the template; none left is compliant.
func (ev *evaluation) unwantedSelected(
	t *objectTemplate, m Mapping, targets []target, namespaces []string,
) ([]target, *event) {
	matching := slices.DeleteFunc(slices.Clone(targets), func(tg target) bool {
		return !matchesTemplate(t, tg.obj)
	})

	if len(matching) > 0 {
		return matching, nil
	}

	label := "namespace"
	if len(namespaces) > 1 {
		label = "namespaces:"
	}

	return nil, &event{compliant: true, message: fmt.Sprintf("%s missing as expected in %s %s",
		m.Resource, label, strings.Join(namespaces, ", "))}
}

// listNamespace is the namespace to list a kind in: none for cluster-scoped kinds.
func listNamespace(m Mapping, ns string) string {
	if m.Namespaced {
		return ns
	}

	return ""
}
