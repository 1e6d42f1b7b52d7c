package story

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/cgu-operator/cgu-operator/pkg/talm"
)

// eventsOf keeps the events whose message names the cluster as a whole word, newest first,
// at most EventLimit.
func eventsOf(events []corev1.Event, cluster string) []Event {
	out := []Event{}
	for _, e := range events {
		if namesWord(e.Message, cluster) {
			out = append(out, Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count, Time: talm.LastSeen(e)})
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int { return b.Time.Compare(a.Time) })
	return out[:min(len(out), EventLimit)]
}

// namesWord reports whether text holds name as a whole word: "sno-5" is not in "sno-50",
// "sno-5.example.com" nor "x.sno-5", and is in "cluster sno-5." and "(sno-5)".
func namesWord(text, name string) bool {
	if name == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(text[from:], name)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(name)
		if (start == 0 || !wordByte(text[start-1]) && text[start-1] != '.') && endsWord(text, end) {
			return true
		}
		from = start + 1
	}
}

// endsWord reports whether a word may end at text[end]: at the end, before a character that
// is not part of a name, or before a dot that ends a sentence rather than a domain.
func endsWord(text string, end int) bool {
	switch {
	case end == len(text):
		return true
	case text[end] == '.':
		return end+1 == len(text) || !wordByte(text[end+1])
	}
	return !wordByte(text[end])
}

// wordByte reports whether b can be part of a cluster name.
func wordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}
