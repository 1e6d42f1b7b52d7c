package configpolicy

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	configpolicyv1 "open-cluster-management.io/config-policy-controller/api/v1"
)

// comparison is the outcome of comparing an object with a template (handleKeys).
type comparison struct {
	merged []mergedKey
	// errMsg reports a template that cannot be applied to the object.
	errMsg string
	// updateNeeded is set when a field other than status differs.
	updateNeeded bool
	// statusMismatch is set when status differs; enforcement cannot fix it.
	statusMismatch bool
	// missing is set when fields matched only as omitted zero values.
	missing bool
	// removed are the top-level fields mustonlyhave drops.
	removed []string

	labels, annotations       map[string]string
	hasLabels, hasAnnotations bool
}

// mergedKey is a top-level field as enforcement would write it.
type mergedKey struct {
	key   string
	value any
}

type keyOutcome struct {
	merged  any
	update  bool
	missing bool
	errMsg  string
}

// compareObject compares every top-level field of the template with the object.
func compareObject(t *objectTemplate, existing *unstructured.Unstructured) comparison {
	c := comparison{merged: make([]mergedKey, 0, len(t.keys))}

	for _, key := range t.keys {
		onlyHave := t.ctype.IsMustOnlyHave()
		if key == "metadata" && t.mdType != "" {
			onlyHave = t.mdType.IsMustOnlyHave()
		}

		out := compareKey(t, key, existing, onlyHave, false)
		c.missing = c.missing || out.missing

		if out.errMsg == "" && key == "metadata" {
			out.errMsg = c.setMetadata(out.merged)
		}

		if out.errMsg != "" {
			c.errMsg = out.errMsg
			c.updateNeeded = true

			return c
		}

		c.merged = append(c.merged, mergedKey{key: key, value: out.merged})

		switch {
		case out.update && key == "status":
			c.statusMismatch = true
		case out.update:
			c.updateNeeded = true
		}
	}

	if t.ctype.IsMustOnlyHave() {
		c.removed = extraKeys(t, existing)
		c.updateNeeded = c.updateNeeded || len(c.removed) > 0
	}

	return c
}

// matchesTemplate reports whether an object of an unnamed template matches its content
// (buildNameList): omitted fields equal zero values, no fields are removed.
func matchesTemplate(t *objectTemplate, obj *unstructured.Unstructured) bool {
	for _, key := range t.keys {
		out := compareKey(t, key, obj, t.ctype.IsMustOnlyHave(), true)
		if out.errMsg != "" || out.update {
			return false
		}
	}

	return true
}

// compareKey merges and compares one top-level field (handleSingleKey).
func compareKey(t *objectTemplate, key string, existing *unstructured.Unstructured, onlyHave, zero bool) keyOutcome {
	desired := t.object[key]
	if key == "metadata" {
		desired = t.meta
	}

	current, present := existing.Object[key]

	merged, missing, errMsg := mergeKey(key, desired, current, onlyHave, zero)
	if errMsg != "" {
		return keyOutcome{merged: merged, missing: missing || !present, errMsg: errMsg}
	}

	if key == "metadata" {
		merged, current = metadataForCompare(merged, current, t.gvk == NamespaceGVK)
	}

	equal, miss := equivalent(merged, current, zero)

	return keyOutcome{merged: merged, update: !equal, missing: missing || miss || !present}
}

// mergeKey merges a top-level template field into the object's field; mustonlyhave keeps the
// template's field as it is.
func mergeKey(key string, desired, current any, onlyHave, zero bool) (any, bool, string) {
	mismatch := func() string {
		return fmt.Sprintf(
			"Error merging changes into key \"%s\": object type of template and existing do not match", key)
	}

	switch d := desired.(type) {
	case []any:
		switch c := current.(type) {
		case []any:
			if onlyHave {
				return d, false, ""
			}

			merged, missing := mergeLists(d, c, zero)

			return merged, missing, ""
		case nil:
			return d, false, ""
		}

		return d, false, mismatch()
	case map[string]any:
		switch c := current.(type) {
		case map[string]any:
			if onlyHave {
				return d, false, ""
			}

			merged, missing := mergeMaps(d, c, zero)

			return merged, missing, ""
		case nil:
			return d, false, ""
		}

		return d, false, mismatch()
	}

	return desired, false, ""
}

// metadataForCompare reduces both sides to the compared labels and annotations; on a Namespace
// the OpenShift SCC annotations of the object count as desired (fmtMetadataForCompare).
func metadataForCompare(merged, current any, isNamespace bool) (map[string]any, map[string]any) {
	mm, _ := merged.(map[string]any)
	cm, _ := current.(map[string]any)
	fm, fc := comparedMetadata(mm), comparedMetadata(cm)

	if _, ok := fm["labels"]; !ok {
		delete(fc, "labels")
	}

	if _, ok := fm["annotations"]; !ok {
		delete(fc, "annotations")

		return fm, fc
	}

	currentAnnotations, ok := fc["annotations"].(map[string]any)
	mergedAnnotations, ok2 := fm["annotations"].(map[string]any)

	if !isNamespace || !ok || !ok2 {
		return fm, fc
	}

	for k, v := range currentAnnotations {
		if _, set := mergedAnnotations[k]; !set && strings.HasPrefix(k, "openshift.io/sa.scc.") {
			mergedAnnotations[k] = v
		}
	}

	return fm, fc
}

// setMetadata records the labels and annotations enforcement writes, or returns the message for
// values that are not strings.
func (c *comparison) setMetadata(merged any) string {
	md, ok := merged.(map[string]any)
	if !ok {
		return ""
	}

	var err error

	c.annotations, c.hasAnnotations, err = unstructured.NestedStringMap(md, "annotations")
	if err != nil {
		msg, _ := strings.CutPrefix(err.Error(), ".annotations accessor error: ")

		return "invalid annotation, error: " + msg
	}

	c.labels, c.hasLabels, err = unstructured.NestedStringMap(md, "labels")
	if err != nil {
		msg, _ := strings.CutPrefix(err.Error(), ".labels accessor error: ")

		return "invalid label, error: " + msg
	}

	return ""
}

// extraKeys lists the object's top-level fields that mustonlyhave removes.
func extraKeys(t *objectTemplate, existing *unstructured.Unstructured) []string {
	serviceAccount := existing.GetKind() == "ServiceAccount" && existing.GetAPIVersion() == "v1"

	var out []string

	for k := range existing.Object {
		if _, ok := t.object[k]; ok || k == "status" || k == "metadata" {
			continue
		}

		if serviceAccount && (k == "secrets" || k == "imagePullSecrets") {
			continue
		}

		out = append(out, k)
	}

	slices.Sort(out)

	return out
}

// updateOutcome is what checkAndUpdateResource reports.
type updateOutcome struct {
	violation   bool
	message     string
	triedUpdate bool
	updated     bool
}

// checkAndUpdate compares an existing object and, on enforce, updates it; it retries on conflicts
// with a fresh copy like the controller.
func (ev *evaluation) checkAndUpdate(
	t *objectTemplate, m Mapping, tg target, existing *unstructured.Unstructured,
	remediation configpolicyv1.RemediationAction,
) updateOutcome {
	for attempt := 0; ; attempt++ {
		c := compareObject(t, existing)

		out, conflict := ev.apply(t, m, tg, existing, &c, remediation)
		if !conflict || attempt == 2 {
			return out
		}

		fresh, err := ev.store.Get(t.gvk, listNamespace(m, tg.ns), tg.name)
		if err != nil {
			return out
		}

		existing = fresh
	}
}

// apply decides on a comparison: the stored status never changes, a field that matched only as an
// omitted zero value counts when the update would store it (the dry-run update), and inform stops
// before writing. It reports whether the write met a conflict.
func (ev *evaluation) apply(
	t *objectTemplate, m Mapping, tg target, existing *unstructured.Unstructured, c *comparison,
	remediation configpolicyv1.RemediationAction,
) (updateOutcome, bool) {
	if c.errMsg != "" {
		return updateOutcome{violation: true, message: c.errMsg, triedUpdate: true}, false
	}

	if !c.updateNeeded && !c.missing {
		return updateOutcome{violation: c.statusMismatch}, false
	}

	if !c.specChanged(existing) {
		if !c.statusMismatch {
			return updateOutcome{}, false
		}

		return updateOutcome{violation: true, triedUpdate: c.updateNeeded}, false
	}

	if remediation.IsInform() {
		return updateOutcome{violation: true}, false
	}

	msg, err := ev.write(t, m, tg, existing, c)
	if err != nil {
		return updateOutcome{violation: true, message: msg, triedUpdate: c.updateNeeded}, errors.Is(err, ErrConflict)
	}

	return updateOutcome{violation: c.statusMismatch, triedUpdate: c.updateNeeded, updated: true}, false
}

// write updates the object, or deletes and creates it with recreateOption Always. It returns the
// compliance message for a failure.
func (ev *evaluation) write(
	t *objectTemplate, m Mapping, tg target, existing *unstructured.Unstructured, c *comparison,
) (string, error) {
	prefix := messagePrefix(m, tg)

	if t.recreate != configpolicyv1.Always {
		err := ev.store.Update(c.updatedObject(existing))

		return writeErrorMessage(err, existing.GetKind(), prefix, "update"), err
	}

	err := ev.store.Delete(t.gvk, listNamespace(m, tg.ns), tg.name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Sprintf("%s failed to delete when recreating with the error %v", prefix, err), err
	}

	obj := t.newObject(tg.ns, tg.name)
	obj.SetCreationTimestamp(metav1.NewTime(ev.now))
	err = ev.store.Create(obj)

	return writeErrorMessage(err, existing.GetKind(), prefix, "recreate"), err
}

// writeErrorMessage words a failed write (getUpdateErrorMsg).
func writeErrorMessage(err error, kind, prefix, action string) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNotFound):
		return fmt.Sprintf("`%v` is not present and must be created", kind)
	}

	return fmt.Sprintf("%s failed to %s with the error `%v`", prefix, action, err)
}

// updatedObject is the object enforcement sends: the existing one with the merged fields, the
// mustonlyhave removals and the merged labels and annotations, and with its own status.
func (c *comparison) updatedObject(existing *unstructured.Unstructured) *unstructured.Unstructured {
	obj := make(map[string]any, len(existing.Object)+len(c.merged))

	for k, v := range existing.Object {
		if !slices.Contains(c.removed, k) {
			obj[k] = v
		}
	}

	for _, mk := range c.merged {
		if mk.key != "status" && mk.key != "metadata" {
			obj[mk.key] = mk.value
		}
	}

	if c.hasLabels || c.hasAnnotations {
		md, _ := existing.Object["metadata"].(map[string]any)
		md = maps.Clone(md)

		if c.hasLabels {
			md["labels"] = anyMap(c.labels)
		}

		if c.hasAnnotations {
			md["annotations"] = anyMap(c.annotations)
		}

		obj["metadata"] = md
	}

	return &unstructured.Unstructured{Object: obj}
}

// specChanged reports whether the update would change the stored object, which is what the
// controller's dry-run update tells it. The store keeps what it is given, so this compares the
// merged fields with the stored ones outside status; like an API server it drops empty labels and
// annotations.
func (c *comparison) specChanged(existing *unstructured.Unstructured) bool {
	if len(c.removed) > 0 {
		return true
	}

	for _, mk := range c.merged {
		if mk.key != "status" && mk.key != "metadata" && !jsonEqual(mk.value, existing.Object[mk.key]) {
			return true
		}
	}

	md, _ := existing.Object["metadata"].(map[string]any)

	return c.hasLabels && !stringMapEqual(c.labels, md["labels"]) ||
		c.hasAnnotations && !stringMapEqual(c.annotations, md["annotations"])
}

// stringMapEqual compares labels or annotations, an empty map being equal to none and the kubectl
// last-applied annotation ignored.
func stringMapEqual(want map[string]string, got any) bool {
	gm, _ := got.(map[string]any)
	n := 0

	for k, v := range gm {
		if k == lastAppliedAnnotation {
			continue
		}

		n++

		if w, ok := want[k]; !ok || w != v {
			return false
		}
	}

	_, wantLastApplied := want[lastAppliedAnnotation]
	if wantLastApplied {
		n++
	}

	return n == len(want)
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}

	return out
}
