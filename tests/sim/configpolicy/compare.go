package configpolicy

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// This file holds the field comparison of the config-policy-controller (mergeSpecs, mergeArrays,
// deeplyEquivalent, checkFieldsAreEquivalent, checkListsAreEquivalent). For musthave the existing
// value is folded into the template value and the result compared with the existing value; the
// result is also what enforcement writes. Every function returns, besides its answer, whether a
// field was matched only because it was omitted where the template has a zero value ("missing"):
// the controller then asks the API server with a dry-run update.
//
// Nothing here modifies its arguments: templates are shared by every simulated cluster and
// existing objects are shared with the store.

// mergeValue folds an existing value into a template value (mergeSpecsHelper).
func mergeValue(tmpl, existing any, zero bool) (any, bool) {
	switch t := tmpl.(type) {
	case map[string]any:
		if e, ok := existing.(map[string]any); ok {
			return mergeMaps(t, e, zero)
		}
	case []any:
		if e, ok := existing.([]any); ok && len(e) > 0 {
			return mergeLists(t, e, zero)
		}
	case nil:
		if e, ok := existing.(map[string]any); ok {
			return e, false
		}
	}

	return tmpl, false
}

// mergeMaps returns the template map with the existing map's other fields added. It is "missing"
// when the template has a field the existing map lacks.
func mergeMaps(tmpl, existing map[string]any, zero bool) (map[string]any, bool) {
	out := make(map[string]any, len(tmpl)+len(existing))
	for k, v := range tmpl {
		out[k] = v
	}

	missing := false

	for k, ev := range existing {
		tv, ok := tmpl[k]
		if !ok {
			out[k] = ev

			continue
		}

		merged, miss := mergeValue(tv, ev, zero)
		out[k] = merged
		missing = missing || miss
	}

	return out, missing || len(out) > len(existing)
}

// mergeLists merges a template list into an existing list (mergeArrays, musthave). Each distinct
// existing item, in order, claims as many not yet claimed template items as it occurs: a template
// item is claimed when, merged with the existing item, it equals it, or when both are maps with the
// same non-empty "name". Claimed template items are replaced by the merge; existing items left
// unclaimed are appended, so the result equals the existing list exactly when every template item
// is contained in some existing item.
func mergeLists(tmpl, existing []any, zero bool) ([]any, bool) {
	out := make([]any, len(tmpl), len(tmpl)+len(existing))
	copy(out, tmpl)

	claimed := make([]bool, len(tmpl))
	firsts := sameTextIndexes(existing)
	missing := false

	for i, item := range existing {
		if firsts[i] != i {
			continue
		}

		want := countOf(firsts, i)
		got := 0

		for ti, tv := range tmpl {
			if claimed[ti] {
				continue
			}

			merged, claim, miss := mergeItem(tv, item, zero, missing)
			missing = miss

			if claim {
				got++
				out[ti] = merged
				claimed[ti] = true
			}

			if got == want {
				break
			}
		}

		for ; got < want; got++ {
			out = append(out, item)
		}
	}

	return out, missing
}

// mergeItem merges one template item into one existing item. It returns the merge, whether the
// template item is claimed (the merge equals the existing item, or both are maps with the same
// name) and the updated missing flag. As in the controller, merging two maps resets the flag to
// that merge's own, and a template item that is not a map, tried against an existing map, is taken
// as a nil map: it is claimed by an empty map and then written as null.
func mergeItem(tmpl, existing any, zero, missing bool) (any, bool, bool) {
	merged := tmpl
	named := false

	if em, ok := existing.(map[string]any); ok {
		tm, ok := tmpl.(map[string]any)
		if !ok {
			merged = map[string]any(nil)
		} else {
			named = sameName(em, tm)
			merged, missing = mergeMaps(tm, em, zero)
		}
	}

	equal, miss := equivalent(merged, existing, zero)

	return merged, equal || named, missing || miss
}

func sameName(existing, tmpl map[string]any) bool {
	name, ok := existing["name"].(string)
	if !ok || name == "" {
		return false
	}

	tmplName, ok := tmpl["name"].(string)

	return ok && tmplName == name
}

// sameTextIndexes groups list items by their fmt text, as the controller does: for each item, the
// index of the first item with the same text. Texts are only built for items whose hashes collide.
func sameTextIndexes(list []any) []int {
	firsts := make([]int, len(list))
	hashes := make([]textHash, len(list))

	for i, item := range list {
		hashes[i] = hashText(item)
		firsts[i] = i

		for j := range i {
			if firsts[j] == j && hashes[j] == hashes[i] && (deepSame(list[j], item) || textEqual(list[j], item)) {
				firsts[i] = j

				break
			}
		}
	}

	return firsts
}

func countOf(firsts []int, first int) int {
	n := 0

	for _, f := range firsts {
		if f == first {
			n++
		}
	}

	return n
}

// equivalent compares a merged value with the existing one (deeplyEquivalent).
func equivalent(merged, existing any, zero bool) (bool, bool) {
	if sameValue(merged, existing) {
		return true, false
	}

	switch m := merged.(type) {
	case map[string]any:
		if e, ok := existing.(map[string]any); ok {
			return mapsEquivalent(m, e, zero)
		}

		return false, false
	case []any:
		if len(m) == 0 && existing == nil {
			return true, false
		}

		if e, ok := existing.([]any); ok {
			return listsEquivalent(m, e)
		}

		return false, false
	}

	if zero && existing == nil && merged != nil {
		return zeroText(merged), true
	}

	if zero && merged == nil && existing != nil {
		return zeroText(existing), false
	}

	return textEqual(merged, existing), false
}

// mapsEquivalent reports whether every field of merged equals the existing field
// (checkFieldsAreEquivalent). merged must have at least as many fields as existing.
func mapsEquivalent(merged, existing map[string]any, zero bool) (bool, bool) {
	if len(merged) < len(existing) {
		return false, false
	}

	missing := false

	for k, mv := range merged {
		equal, miss := fieldEquivalent(mv, existing, k, zero)
		missing = missing || miss

		if !equal {
			return false, missing
		}
	}

	return true, missing
}

func fieldEquivalent(mv any, existing map[string]any, key string, zero bool) (bool, bool) {
	ev, present := existing[key]
	if sameValue(mv, ev) {
		return true, false
	}

	switch mv := mv.(type) {
	case map[string]any:
		em, ok := ev.(map[string]any)
		if !ok {
			return zero && len(mv) == 0, false
		}

		return mapsEquivalent(mv, em, zero)
	case []any:
		el, ok := ev.([]any)
		if !ok {
			return len(mv) == 0, false
		}

		if len(mv) != len(el) {
			return false, false
		}

		return listsEquivalent(el, mv)
	case string:
		return stringEquivalent(mv, ev, present), false
	}

	if ev == nil && mv != nil {
		return zeroText(mv), true
	}

	return textEqual(ev, mv), false
}

// stringEquivalent compares quantities ("1Gi" and "1024Mi") by value and other strings by text.
func stringEquivalent(mv string, ev any, present bool) bool {
	q, err := resource.ParseQuantity(mv)
	if err != nil {
		return present && textEqual(ev, mv)
	}

	es, ok := ev.(string)
	if !ok {
		return false
	}

	eq, err := resource.ParseQuantity(es)

	return err == nil && eq.Equal(q)
}

// listsEquivalent compares two lists regardless of order (checkListsAreEquivalent): both are
// sorted by sort key and compared item by item, map items of b against those of a with zero values
// equal to omitted fields.
func listsEquivalent(a, b []any) (bool, bool) {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false, false
	}

	if sameItems(a, b) {
		return true, false
	}

	sa, sb := sortedItems(a), sortedItems(b)
	missing := false

	for i, av := range sa {
		am, ok := av.(map[string]any)
		if !ok {
			if !textEqual(av, sb[i]) {
				return false, missing
			}

			continue
		}

		bm, ok := sb[i].(map[string]any)
		if !ok {
			return false, missing
		}

		equal, miss := mapsEquivalent(bm, am, true)
		missing = missing || miss

		if !equal {
			return false, missing
		}
	}

	return true, missing
}

func sameItems(a, b []any) bool {
	for i := range a {
		if !deepSame(a[i], b[i]) {
			return false
		}
	}

	return true
}
