package names

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzSafe checks Safe's promises for any input: the result fits the limit, is the same
// for the same input, is a valid DNS-1123 subdomain (and a valid label value within 63
// characters), and is empty only when no part holds a letter or a digit.
func FuzzSafe(f *testing.F) {
	f.Add(62, "ztp-install", "sno-1")
	f.Add(63, "cgu-"+strings.Repeat("n", 253), "platform-upgrade")
	f.Add(63, "a..b", "c.-d")
	f.Add(7, "UPPER_case", "ünïcödé")
	f.Add(1, "-.-", ".x.")
	f.Add(253, "a.", "-b")
	f.Add(20, "abcdefghijklm.", ".nopqrstuvwxyz")
	f.Add(0, "x", "y")
	f.Fuzz(func(t *testing.T, limit int, a, b string) {
		limit = 1 + abs(limit)%253
		got := Safe(limit, a, b)
		if got != Safe(limit, a, b) {
			t.Fatalf("Safe(%d, %q, %q) is not deterministic", limit, a, b)
		}
		if len(got) > limit {
			t.Fatalf("Safe(%d, %q, %q) = %q: %d characters", limit, a, b, got, len(got))
		}
		if got == "" {
			if strings.ContainsFunc(a+b, alnum) {
				t.Fatalf("Safe(%d, %q, %q) is empty", limit, a, b)
			}
			return
		}
		if errs := validation.IsDNS1123Subdomain(got); len(errs) > 0 {
			t.Fatalf("Safe(%d, %q, %q) = %q: %v", limit, a, b, got, errs)
		}
		if limit <= validation.LabelValueMaxLength {
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Fatalf("Safe(%d, %q, %q) = %q is no label value: %v", limit, a, b, got, errs)
			}
		}
	})
}

// FuzzNames checks the names of the objects a rollout makes: an enforce copy's namespace
// and name fit the propagator's 62 characters, a Placement's name is a label value.
func FuzzNames(f *testing.F) {
	f.Add("ztp-install", "sno-1", "platform-upgrade")
	f.Add(strings.Repeat("n", 50), strings.Repeat("c", 253), strings.Repeat("p", 253))
	f.Add("default", "a.b", "c.d")
	f.Fuzz(func(t *testing.T, namespace, cgu, policy string) {
		if len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1123Subdomain(cgu)) > 0 ||
			len(validation.IsDNS1123Subdomain(policy)) > 0 || len(namespace) > 55 {
			t.Skip("not names the API server accepts, or a namespace too long for a copy")
		}
		if c := PolicyCopy(namespace, cgu, policy); len(namespace)+1+len(c) > 63 || len(validation.IsDNS1123Subdomain(c)) > 0 {
			t.Fatalf("PolicyCopy(%q, %q, %q) = %q", namespace, cgu, policy, c)
		}
		for _, n := range []string{Placement(namespace, cgu, policy), Template(cgu, policy), LabelValue(cgu)} {
			if errs := validation.IsValidLabelValue(n); len(errs) > 0 || len(validation.IsDNS1123Subdomain(n)) > 0 {
				t.Fatalf("%q from (%q, %q, %q): %v", n, namespace, cgu, policy, errs)
			}
		}
	})
}

func alnum(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' }

func abs(n int) int {
	if n < 0 {
		return -(n + 1)
	}
	return n
}
