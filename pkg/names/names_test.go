package names

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

func TestSafe(t *testing.T) {
	cases := map[string]struct {
		max   int
		parts []string
		want  string
	}{
		"short names are joined":        {63, []string{"cgu", "upgrade"}, "cgu-upgrade"},
		"exactly at the limit":          {11, []string{"cgu", "upgrade"}, "cgu-upgrade"},
		"upper case and odd characters": {63, []string{"My_CGU", "Policy:1"}, "my-cgu-policy-1"},
		"edges are trimmed":             {63, []string{"-a.", "b-"}, "a-b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Safe(tc.max, tc.parts...); got != tc.want {
				t.Fatalf("Safe(%d, %q) = %q, want %q", tc.max, tc.parts, got, tc.want)
			}
		})
	}
}

func TestSafeShortensLongNames(t *testing.T) {
	cases := map[string]struct {
		max        int
		parts      []string
		wantPrefix string
	}{
		"cut with a hash":                  {30, []string{"cgu", strings.Repeat("long-policy-", 6)}, "cgu-long-policy-long-po-"},
		"a cut ending in a separator":      {12, []string{"abcd", "efghijkl"}, "abcd-"},
		"a limit below the hash":           {4, []string{"abcdef"}, ""},
		"a cut in the middle of the joint": {13, []string{"abcdef", "ghijkl"}, "abcdef-"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Safe(tc.max, tc.parts...)
			if len(got) > tc.max || !dnsLabel.MatchString(got) || !strings.HasPrefix(got, tc.wantPrefix) {
				t.Fatalf("Safe(%d, %q) = %q: want a valid name of at most %d characters starting %q", tc.max, tc.parts, got, tc.max, tc.wantPrefix)
			}
			if got != Safe(tc.max, tc.parts...) {
				t.Fatalf("Safe is not deterministic for %q", tc.parts)
			}
		})
	}
}

func TestDistinctInputsKeepDistinctNames(t *testing.T) {
	seen := map[string]string{}
	for i := range 2000 {
		policy := fmt.Sprintf("%s-%04d", strings.Repeat("p", 70), i)
		got := PolicyCopy("ztp-install", "cgu-platform-upgrade", policy)
		if other, dup := seen[got]; dup {
			t.Fatalf("%s and %s both became %s", other, policy, got)
		}
		seen[got] = policy
		if len("ztp-install")+len(got) > 62 {
			t.Fatalf("%s/%s exceeds the propagator's 62 characters", "ztp-install", got)
		}
		if got != PolicyCopy("ztp-install", "cgu-platform-upgrade", policy) {
			t.Fatalf("the name of %s is not deterministic", policy)
		}
	}
}

func TestNamesFitTheirLimits(t *testing.T) {
	ns, cgu, policy := strings.Repeat("n", 63), strings.Repeat("c", 253), strings.Repeat("p", 253)
	if got := PolicyCopy(ns[:40], cgu, policy); len(got)+40 > 62 || !dnsLabel.MatchString(got) {
		t.Fatalf("PolicyCopy = %q", got)
	}
	for _, got := range []string{Placement(ns, cgu, policy), Template(cgu, policy)} {
		if len(got) > 63 || !dnsLabel.MatchString(got) {
			t.Fatalf("%q exceeds 63 characters or is not a valid name", got)
		}
	}
}

// A label value is its own label value: the orphan sweep names an owner by it.
func TestLabelValueOfALabelValue(t *testing.T) {
	for _, name := range []string{"upgrade", strings.Repeat("n", 63), strings.Repeat("long-name.", 25)} {
		if v := LabelValue(name); LabelValue(v) != v {
			t.Errorf("LabelValue(%q) = %q, whose label value is %q", name, v, LabelValue(v))
		}
	}
}

func TestSuffixAndTALMNames(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"a suffix as TALM's scenarios set it":      {Suffix("kuttl"), "kuttl"},
		"a suffix sanitized as a name":             {Suffix("Night_Run."), "night-run"},
		"a long suffix bounded":                    {Suffix(strings.Repeat("s", 40)), strings.Repeat("s", 16)},
		"nothing left of a suffix":                 {Suffix("__"), ""},
		"TALM's Placement name":                    {TALMPlacement("cgu-a", "policy1-common-cluster-version-policy", "kuttl"), "cgu-a-policy1-common-cluster-version-policy-placement-kuttl"},
		"a long Placement name keeps its suffix":   {TALMPlacement(strings.Repeat("c", 60), "p", "kuttl"), strings.Repeat("c", 57) + "-kuttl"},
		"a base cut on a dash does not end in one": {WithSuffix(7, "abc-defgh", "xy"), "abc-xy"},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", name, tc.got, tc.want)
		}
	}
	if n := TALMPlacement(strings.Repeat("c", 253), strings.Repeat("p", 253), "abcde"); len(n) > 63 || !strings.HasSuffix(n, "-abcde") {
		t.Errorf("TALMPlacement of long names = %q (%d characters)", n, len(n))
	}
}
