package train

import (
	"strings"

	"github.com/blang/semver/v4"
)

// Newest returns the newest of versions, by semantic version; those that do not parse
// count as older than any that does. Empty when there is none.
func Newest(versions []string) string {
	out := ""
	for _, v := range versions {
		if out == "" || Newer(v, out) {
			out = v
		}
	}
	return out
}

// Newer reports whether version a is newer than b.
func Newer(a, b string) bool { return compareVersions(a, b) > 0 }

// compareVersions orders versions by semantic version, those that do not parse first, by
// text among themselves.
func compareVersions(a, b string) int {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	switch {
	case errA == nil && errB == nil:
		return va.Compare(vb)
	case errA == nil:
		return 1
	case errB == nil:
		return -1
	}
	return strings.Compare(a, b)
}
