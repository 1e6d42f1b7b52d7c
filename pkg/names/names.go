// Package names makes the deterministic names of the objects the operator creates, within
// the length limits the hub imposes (a root policy's namespace and name together at most 62
// characters, label values such as a Placement's name at most 63).
package names

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// hashLength is the length of the suffix that keeps shortened names distinct.
const hashLength = 6

// Safe joins parts with "-" and returns the result when it fits in limit characters; a longer
// result is cut and ends with "-" and a hash of the whole, so that distinct inputs keep
// distinct names and the same input always gives the same name. Upper-case letters are
// lowered and characters other than letters, digits, "-" and "." become "-", so the result
// is a valid object name whenever limit is.
func Safe(limit int, parts ...string) string {
	full := sanitize(strings.Join(parts, "-"))
	if len(full) <= limit {
		return full
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(full))
	suffix := fmt.Sprintf("%08x", h.Sum32())[:hashLength]
	keep := limit - hashLength - 1
	if keep < 1 {
		return suffix[:min(limit, hashLength)]
	}
	head := strings.TrimRight(full[:keep], "-.")
	return head + "-" + suffix
}

// allowed are the characters a name keeps; sanitize replaces the others with "-".
const allowed = "abcdefghijklmnopqrstuvwxyz0123456789."

func sanitize(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range strings.ToLower(s) {
		c := byte('-')
		if i := strings.IndexRune(allowed, r); i >= 0 {
			c = allowed[i]
		}
		// A dot must sit between letters or digits: "..", ".-" and "-." become "-", which
		// leaves the names of valid inputs as they were.
		if n := len(b); n > 0 && (c == '.' && (b[n-1] == '.' || b[n-1] == '-') || c == '-' && b[n-1] == '.') {
			b[n-1] = '-'
			continue
		}
		b = append(b, c)
	}
	return strings.Trim(string(b), "-.")
}

// PolicyCopy is the name of the enforce copy of a managed policy made for a
// ClusterGroupUpgrade, in the ClusterGroupUpgrade's namespace: it keeps the copy's namespace
// and name within the propagator's 62 characters.
func PolicyCopy(cguNamespace, cguName, policyName string) string {
	return Safe(62-len(cguNamespace), cguName, policyName)
}

// Placement is the name of the Placement and PlacementBinding that bind a managed policy (or
// its copy) to the clusters of a ClusterGroupUpgrade's current batch; the namespace of the
// ClusterGroupUpgrade is part of it, since in Override mode these objects live in the
// policy's namespace, shared by every ClusterGroupUpgrade.
func Placement(cguNamespace, cguName, policyName string) string {
	return Safe(63, "cgu", cguNamespace, cguName, policyName)
}

// Template is the name of a ConfigurationPolicy inside an enforce copy: template names must
// be unique in a cluster namespace, and the original inform policy keeps its own.
func Template(cguName, templateName string) string {
	return Safe(63, cguName, templateName)
}

// nameSuffixLimit bounds the suffix of TALM's names (TALM draws five characters).
const nameSuffixLimit = 16

// Suffix is a name-suffix annotation as it may end a name: sanitized as Safe does, at most
// nameSuffixLimit characters; empty when nothing of it is left.
func Suffix(annotation string) string {
	s := sanitize(annotation)
	if len(s) > nameSuffixLimit {
		s = strings.TrimRight(s[:nameSuffixLimit], "-.")
	}
	return s
}

// WithSuffix is a name as TALM makes it with a suffix: base, cut to fit limit when needed,
// then "-" and suffix, which is kept whole (Suffix bounds it).
func WithSuffix(limit int, base, suffix string) string {
	base = sanitize(base)
	if keep := limit - len(suffix) - 1; len(base) > keep {
		base = strings.TrimRight(base[:max(keep, 0)], "-.")
	}
	if base == "" {
		return suffix
	}
	return base + "-" + suffix
}

// TALMPlacement is the name TALM gives, with suffix, the Placement and PlacementBinding of a
// managed policy of a ClusterGroupUpgrade: "<cgu>-<policy>-placement-<suffix>", at most 63
// characters (a Placement's name is a label value; TALM allows longer ones).
func TALMPlacement(cguName, policyName, suffix string) string {
	return WithSuffix(63, cguName+"-"+policyName+"-placement", suffix)
}

// LabelValue returns name as a label value: itself when it has at most 63 characters,
// otherwise shortened by Safe. Objects found by such a label must be checked against the full
// name they record.
func LabelValue(name string) string {
	return Safe(63, name)
}
