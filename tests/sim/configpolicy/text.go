package configpolicy

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The controller compares scalars, and groups and sorts list items, by their fmt.Sprint text.
// These helpers give the same answers without building the text when the types allow it.

// scalarText renders a JSON scalar as fmt's %v verb does.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "<nil>"
	default:
		return fmt.Sprint(v)
	}
}

// textEqual reports whether fmt.Sprint(a) == fmt.Sprint(b) for JSON values. Values of the same
// shape are compared without building their text; only different composite values need it, since
// fmt can print different values alike (["", "x"] and [" x"]).
func textEqual(a, b any) bool {
	switch a := a.(type) {
	case string:
		if b, ok := b.(string); ok {
			return a == b
		}
	case int64:
		if b, ok := b.(int64); ok {
			return a == b
		}
	case bool:
		if b, ok := b.(bool); ok {
			return a == b
		}
	case nil:
		if b == nil {
			return true
		}
	}

	if !composite(a) && !composite(b) {
		return scalarText(a) == scalarText(b)
	}

	return sameText(a, b) || string(appendText(nil, a)) == string(appendText(nil, b))
}

func composite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}

	return false
}

// sameText reports, without building text, that a and b print alike because they have the same
// shape and their scalars print alike. False does not mean they print differently.
func sameText(a, b any) bool {
	return sameTree(a, b, func(a, b any) bool { return !composite(b) && textEqual(a, b) })
}

// sameTree reports whether a and b are maps and lists of the same shape whose leaves pair up
// under leaf (called with a leaf of a and whatever b holds at the same place).
func sameTree(a, b any, leaf func(a, b any) bool) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}

		for k, av := range a {
			bv, ok := b[k]
			if !ok || !sameTree(av, bv, leaf) {
				return false
			}
		}

		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}

		for i := range a {
			if !sameTree(a[i], b[i], leaf) {
				return false
			}
		}

		return true
	}

	return leaf(a, b)
}

// appendText appends fmt's %v text of a JSON value: maps with sorted keys, lists in order.
func appendText(buf []byte, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		return appendMap(buf, v, appendText)
	case []any:
		buf = append(buf, '[')

		for i, item := range v {
			if i > 0 {
				buf = append(buf, ' ')
			}

			buf = appendText(buf, item)
		}

		return append(buf, ']')
	}

	return append(buf, scalarText(v)...)
}

// appendMap appends fmt's %v text of a map, "map[k1:v1 k2:v2]" with sorted keys, each value
// written by appendValue.
func appendMap(buf []byte, m map[string]any, appendValue func([]byte, any) []byte) []byte {
	buf = append(buf, "map["...)

	for i, k := range sortedKeys(m) {
		if i > 0 {
			buf = append(buf, ' ')
		}

		buf = append(buf, k...)
		buf = append(buf, ':')
		buf = appendValue(buf, m[k])
	}

	return append(buf, ']')
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}

	slices.Sort(keys)

	return keys
}

// zeroText reports whether v prints like the zero value of its type, which is how the controller
// decides that an omitted field equals a zero value in the template.
func zeroText(v any) bool {
	switch v := v.(type) {
	case string:
		return v == ""
	case bool:
		return !v
	case int64:
		return v == 0
	case int:
		return v == 0
	case float64:
		return scalarText(v) == "0"
	default:
		return fmt.Sprint(reflect.Zero(reflect.TypeOf(v)).Interface()) == fmt.Sprint(v)
	}
}

// appendSortKey appends the text the controller sorts list items by: fmt's %v of the value with
// every nested list sorted (sortAndSprint).
func appendSortKey(buf []byte, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		return appendMap(buf, v, appendSortKey)
	case []any:
		parts := make([]string, len(v))
		for i, item := range v {
			parts[i] = sortKey(item)
		}

		slices.Sort(parts)

		buf = append(buf, '[')
		buf = append(buf, strings.Join(parts, " ")...)

		return append(buf, ']')
	default:
		return append(buf, scalarText(v)...)
	}
}

func sortKey(v any) string {
	if s, ok := v.(string); ok {
		return s
	}

	return string(appendSortKey(nil, v))
}

type keyedItem struct {
	key  string
	item any
}

// sortedItems returns the list sorted by sort key, leaving the argument alone.
func sortedItems(list []any) []any {
	keyed := make([]keyedItem, len(list))
	for i, item := range list {
		keyed[i] = keyedItem{key: sortKey(item), item: item}
	}

	slices.SortStableFunc(keyed, func(a, b keyedItem) int { return strings.Compare(a.key, b.key) })

	out := make([]any, len(list))
	for i := range keyed {
		out[i] = keyed[i].item
	}

	return out
}

// sameValue reports whether a and b are the same map or list (not merely equal ones), or equal
// scalars of one type. Such values are equivalent under every comparison the controller makes.
func sameValue(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)

		return ok && a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	case []any:
		b, ok := b.([]any)

		return ok && len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
	case string:
		b, ok := b.(string)

		return ok && a == b
	case int64:
		b, ok := b.(int64)

		return ok && a == b
	case bool:
		b, ok := b.(bool)

		return ok && a == b
	}

	return false
}

// deepSame reports whether a and b are equal values of the same Go types. Equal lists of such
// items sort alike and compare as equivalent, so the controller's sorting can be skipped.
func deepSame(a, b any) bool {
	return sameTree(a, b, func(a, b any) bool {
		if a == nil {
			return b == nil
		}

		return sameValue(a, b)
	})
}

// textHash is the FNV-1a hash of fmt's %v text of a JSON value, computed without building the
// text: equal texts have equal hashes.
type textHash uint64

const (
	fnvOffset textHash = 14695981039346656037
	fnvPrime  textHash = 1099511628211
)

func hashText(v any) textHash {
	h := fnvOffset
	h.add(v)

	return h
}

func (h *textHash) write(s string) {
	for i := range len(s) {
		*h ^= textHash(s[i])
		*h *= fnvPrime
	}
}

func (h *textHash) writeBytes(b []byte) {
	for _, c := range b {
		*h ^= textHash(c)
		*h *= fnvPrime
	}
}

func (h *textHash) add(v any) {
	switch v := v.(type) {
	case map[string]any:
		var small [16]string

		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}

		slices.Sort(keys)
		h.write("map[")

		for i, k := range keys {
			if i > 0 {
				h.write(" ")
			}

			h.write(k)
			h.write(":")
			h.add(v[k])
		}

		h.write("]")
	case []any:
		h.write("[")

		for i, item := range v {
			if i > 0 {
				h.write(" ")
			}

			h.add(item)
		}

		h.write("]")
	default:
		h.addScalar(v)
	}
}

func (h *textHash) addScalar(v any) {
	var buf [32]byte

	switch v := v.(type) {
	case string:
		h.write(v)
	case int64:
		h.writeBytes(strconv.AppendInt(buf[:0], v, 10))
	case bool:
		h.writeBytes(strconv.AppendBool(buf[:0], v))
	default:
		h.write(scalarText(v))
	}
}

// jsonEqual reports whether two JSON values are equal as an API server would store them: numbers
// by value, whatever their Go type.
func jsonEqual(a, b any) bool {
	return sameTree(a, b, func(a, b any) bool {
		if an, ok := number(a); ok {
			bn, ok := number(b)

			return ok && an == bn
		}

		return reflect.DeepEqual(a, b)
	})
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case int32:
		return float64(v), true
	case float64:
		return v, true
	}

	return 0, false
}
