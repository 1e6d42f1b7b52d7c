package configpolicy

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// handle evaluates one target of a template (handleObjects).
func (ev *evaluation) handle(t *objectTemplate, m Mapping, tg target) objectResult {
	res := objectResult{key: tg.ns + "/" + tg.name}

	if tg.name == "" {
		return ev.handleUnnamed(t, m, tg, res)
	}

	existing, err := ev.store.Get(t.gvk, listNamespace(m, tg.ns), tg.name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		res.events = []event{{reason: "api error", message: fmt.Sprintf(
			"Error retrieving an object for object-template at index [%d]: %v", t.index, err)}}

		return res
	}

	res.events = ev.handleObject(t, m, tg, existing, ev.p.remediation)

	return res
}

// handleUnnamed evaluates a template without a name against every object of its kind in the
// namespace. It only informs.
func (ev *evaluation) handleUnnamed(t *objectTemplate, m Mapping, tg target, res objectResult) objectResult {
	// The controller treats a failed list as an empty one.
	objs, _ := ev.store.List(t.gvk, listNamespace(m, tg.ns))

	var matching []*unstructured.Unstructured

	for _, obj := range objs {
		if matchesTemplate(t, obj) {
			matching = append(matching, obj)
			res.names = append(res.names, obj.GetName())
		}
	}

	if len(matching) == 1 {
		tg.name = matching[0].GetName()
		res.events = ev.handleObject(t, m, tg, matching[0], configpolicyv1.Inform)

		return res
	}

	res.events = []event{unnamedEvent(t, len(matching) > 0, len(objs) > 0)}

	return res
}

// unnamedEvent is the finding for an unnamed template that matched no object or several.
func unnamedEvent(t *objectTemplate, exists, anyOfKind bool) event {
	switch {
	case t.ctype.IsMustNotHave() && exists:
		return event{reason: reasonWantNotFoundExists}
	case t.ctype.IsMustNotHave():
		return event{compliant: true, reason: reasonWantNotFoundDNE}
	case exists:
		return event{compliant: true, reason: reasonWantFoundExists}
	case anyOfKind:
		return event{reason: reasonWantFoundNoMatch}
	}

	return event{reason: reasonWantFoundDNE}
}

// handleObject evaluates one named object (handleSingleObj); existing is nil when it is absent.
func (ev *evaluation) handleObject(
	t *objectTemplate, m Mapping, tg target, existing *unstructured.Unstructured,
	remediation configpolicyv1.RemediationAction,
) []event {
	shouldExist := !t.ctype.IsMustNotHave()

	switch {
	case existing == nil && shouldExist:
		notFound := event{reason: reasonWantFoundDNE}
		if !remediation.IsEnforce() {
			return []event{notFound}
		}

		return []event{notFound, ev.create(t, m, tg)}
	case existing != nil && !shouldExist:
		return []event{ev.remove(t, m, tg, remediation)}
	case existing == nil:
		return []event{{compliant: true, reason: reasonWantNotFoundDNE}}
	}

	return ev.handlePresent(t, m, tg, existing, remediation)
}

// create enforces a missing musthave object (enforceByCreating).
func (ev *evaluation) create(t *objectTemplate, m Mapping, tg target) event {
	id := identifier(tg.name, tg.ns)

	obj := t.newObject(tg.ns, tg.name)
	obj.SetCreationTimestamp(metav1.NewTime(ev.now))

	if err := ev.store.Create(obj); err != nil {
		return event{reason: "K8s creation error", message: fmt.Sprintf(
			"%v %v is missing, and cannot be created, reason: `%v`", m.Resource, id, err)}
	}

	msg := m.Resource + " " + id + " was created successfully"
	if t.hasStatus {
		return event{
			reason:  reasonWantFoundCreated + ", status unchecked",
			message: msg + ", the status of the object will be verified in the next evaluation",
		}
	}

	return event{compliant: true, reason: reasonWantFoundCreated, message: msg}
}

// remove handles an existing mustnothave object: deleted on enforce (enforceByDeleting).
func (ev *evaluation) remove(
	t *objectTemplate, m Mapping, tg target, remediation configpolicyv1.RemediationAction,
) event {
	if !remediation.IsEnforce() {
		return event{reason: reasonWantNotFoundExists}
	}

	id := identifier(tg.name, tg.ns)

	err := ev.store.Delete(t.gvk, listNamespace(m, tg.ns), tg.name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return event{reason: "K8s deletion error", message: fmt.Sprintf(
			"%v %v exists, and cannot be deleted, reason: `%v`", m.Resource, id, err)}
	}

	return event{compliant: true, reason: reasonDeleteSuccess, message: m.Resource + " " + id + " was deleted successfully"}
}

// handlePresent compares an existing musthave or mustonlyhave object and enforces it.
func (ev *evaluation) handlePresent(
	t *objectTemplate, m Mapping, tg target, existing *unstructured.Unstructured,
	remediation configpolicyv1.RemediationAction,
) []event {
	out := ev.checkAndUpdate(t, m, tg, existing, remediation)
	events := make([]event, 0, 2)

	if out.triedUpdate && !strings.Contains(out.message, "Error validating the object") {
		events = append(events, event{reason: reasonWantFoundNoMatch})
	}

	switch {
	case out.violation && out.message != "":
		return append(events, event{reason: "K8s update template error", message: out.message})
	case out.violation:
		return append(events, event{reason: reasonWantFoundNoMatch})
	case remediation.IsEnforce() && out.updated:
		return append(events, event{compliant: true, reason: reasonUpdateSuccess})
	}

	return append(events, event{compliant: true, reason: reasonWantFoundExists})
}

// identifier is "[name]" with " in namespace ns" when a namespace is known (identifierStr).
func identifier(name, ns string) string {
	id := ""
	if name != "" {
		id = "[" + name + "]"
	}

	if ns == "" {
		return id
	}

	if id != "" {
		id += " "
	}

	return id + "in namespace " + ns
}

// messagePrefix is "<resource> [name]" with the namespace of a namespaced kind (getMsgPrefix).
func messagePrefix(m Mapping, tg target) string {
	prefix := m.Resource + " [" + tg.name + "]"
	if m.Namespaced {
		prefix += " in namespace " + tg.ns
	}

	return prefix
}
