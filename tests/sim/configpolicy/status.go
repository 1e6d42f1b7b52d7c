package configpolicy

import (
	"slices"
	"strings"
)

// Event reasons of the controller (configurationpolicy_controller.go constants).
const (
	reasonWantFoundExists    = "Resource found as expected"
	reasonWantFoundCreated   = "K8s creation success"
	reasonUpdateSuccess      = "K8s update success"
	reasonDeleteSuccess      = "K8s deletion success"
	reasonWantFoundNoMatch   = "Resource found but does not match"
	reasonWantFoundDNE       = "Resource not found but should exist"
	reasonWantNotFoundExists = "Resource found but should not exist"
	reasonWantNotFoundDNE    = "Resource not found as expected"
)

// event is one compliance finding for one object.
type event struct {
	compliant bool
	reason    string
	message   string
}

// objectResult holds the events of one object of a template, in order; key is "<ns>/<name>".
// names is set when it differs from the key's name (unnamed templates).
type objectResult struct {
	key    string
	names  []string
	events []event
}

// reasonText is how a known reason is worded in a condition (generateMessageWithReason).
type reasonText struct {
	reason  string
	summary string
	verb    string
}

var knownReasons = []reasonText{
	{reasonWantFoundExists, "K8s `must have` object already exists", "found as specified"},
	{reasonWantFoundCreated, reasonWantFoundCreated, "was created successfully"},
	{reasonUpdateSuccess, reasonUpdateSuccess, "was updated successfully"},
	{reasonDeleteSuccess, reasonDeleteSuccess, "was deleted successfully"},
	{reasonWantFoundDNE, "K8s does not have a `must have` object", "not found"},
	{reasonWantFoundNoMatch, "K8s does not have a `must have` object", "found but not as specified"},
	{reasonWantNotFoundDNE, "K8s `must not have` object already missing", "missing as expected"},
	{reasonWantNotFoundExists, "K8s has a `must not have` object", "found"},
}

// batchItem is one object's event in one batch.
type batchItem struct {
	key   string
	names []string
	event event
}

// batchEvents lines the objects' events up from the end: the last events of all objects form the
// last batch, and so on (batchedEvents).
func batchEvents(results []objectResult) [][]batchItem {
	n := 0
	for _, r := range results {
		n = max(n, len(r.events))
	}

	batches := make([][]batchItem, n)

	for _, r := range results {
		offset := n - len(r.events)
		for i, e := range r.events {
			batches[offset+i] = append(batches[offset+i], batchItem{key: r.key, names: r.names, event: e})
		}
	}

	return batches
}

// batchCondition words one batch as a condition (createStatus): only the NonCompliant events if
// there is one, grouped by reason in the controller's order.
func batchCondition(resource string, batch []batchItem) (bool, string, string) {
	if len(batch) == 1 {
		return singleCondition(resource, batch[0])
	}

	compliant := true

	for _, item := range batch {
		compliant = compliant && item.event.compliant
	}

	byReason := map[string][]batchItem{}
	others := []string{}

	for _, item := range batch {
		if item.event.compliant != compliant {
			continue
		}

		r := item.event.reason
		if _, seen := byReason[r]; !seen && !isKnownReason(r) {
			others = append(others, r)
		}

		byReason[r] = append(byReason[r], item)
	}

	slices.Sort(others)

	var reason, msg string

	for _, known := range knownReasons {
		if items, ok := byReason[known.reason]; ok {
			reason = joinReason(reason, known.summary)
			msg = knownReasonMessage(msg, resource, known.verb, items)
		}
	}

	for _, r := range others {
		reason = joinReason(reason, r)
		msg = otherReasonMessage(msg, byReason[r])
	}

	return compliant, reason, msg
}

// singleCondition words the batch of a single object, the common case, as batchCondition would.
func singleCondition(resource string, item batchItem) (bool, string, string) {
	e := item.event

	for _, known := range knownReasons {
		if known.reason != e.reason {
			continue
		}

		names := namesText(item)
		if names != "" {
			names = " [" + names + "]"
		}

		ns, _, _ := strings.Cut(item.key, "/")
		if ns != "" {
			ns = " in namespace " + ns
		}

		return e.compliant, known.summary, resource + names + " " + known.verb + ns
	}

	return e.compliant, e.reason, e.message
}

func isKnownReason(reason string) bool {
	for _, known := range knownReasons {
		if known.reason == reason {
			return true
		}
	}

	return false
}

func joinReason(reason, next string) string {
	if reason != "" {
		reason += "; "
	}

	return reason + next
}

// separate ends a non-empty message with "; " (setCompliancyDetailsMsgEnd).
func separate(msg string) string {
	if msg != "" && !strings.HasSuffix(msg, "; ") {
		msg += "; "
	}

	return msg
}

// nameGroup is the objects of one reason that share their names text.
type nameGroup struct {
	names string
	keys  []string
	items []batchItem
}

// groupByNames sorts the items by key and groups them by names text, sorted.
func groupByNames(items []batchItem) []nameGroup {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, func(a, b batchItem) int { return strings.Compare(a.key, b.key) })

	var groups []nameGroup

	for _, item := range sorted {
		names := namesText(item)

		i := slices.IndexFunc(groups, func(g nameGroup) bool { return g.names == names })
		if i < 0 {
			groups = append(groups, nameGroup{names: names})
			i = len(groups) - 1
		}

		groups[i].keys = append(groups[i].keys, item.key)
		groups[i].items = append(groups[i].items, item)
	}

	slices.SortFunc(groups, func(a, b nameGroup) int { return strings.Compare(a.names, b.names) })

	return groups
}

func namesText(item batchItem) string {
	if len(item.names) > 0 {
		return strings.Join(item.names, ", ")
	}

	_, name, _ := strings.Cut(item.key, "/")

	return name
}

// knownReasonMessage appends "<resource>[ [names]] <verb>[ in namespace ...]" parts: groups with
// the same namespaces share a part, parts are sorted by their namespace text.
func knownReasonMessage(msg, resource, verb string, items []batchItem) string {
	groups := groupByNames(items)
	msg = separate(msg)

	byNamespaces := map[string][]string{}
	suffixes := []string{}

	for _, g := range groups {
		suffix := namespaceSuffix(g.keys)
		if _, ok := byNamespaces[suffix]; !ok {
			suffixes = append(suffixes, suffix)
		}

		byNamespaces[suffix] = append(byNamespaces[suffix], g.names)
	}

	slices.Sort(suffixes)

	for j, suffix := range suffixes {
		if j != 0 {
			msg += "; "
		}

		names := byNamespaces[suffix]
		slices.Sort(names)

		joined := strings.Join(names, ", ")
		if joined != "" {
			joined = " [" + joined + "]"
		}

		msg += resource + joined + " " + verb + suffix
	}

	return msg
}

// otherReasonMessage appends the events' own messages.
func otherReasonMessage(msg string, items []batchItem) string {
	for _, g := range groupByNames(items) {
		msg = separate(msg)

		for j, item := range g.items {
			if j != 0 {
				msg += "; "
			}

			msg += item.event.message
		}
	}

	return msg
}

// namespaceSuffix is " in namespace a" or " in namespaces: a, b" for the keys' namespaces, or ""
// for cluster-scoped objects.
func namespaceSuffix(keys []string) string {
	var namespaces []string

	for _, key := range keys {
		ns, _, _ := strings.Cut(key, "/")
		if ns != "" && !slices.Contains(namespaces, ns) {
			namespaces = append(namespaces, ns)
		}
	}

	switch len(namespaces) {
	case 0:
		return ""
	case 1:
		return " in namespace " + namespaces[0]
	}

	slices.Sort(namespaces)

	return " in namespaces: " + strings.Join(namespaces, ", ")
}
