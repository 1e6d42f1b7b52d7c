package hubtemplate

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzAnalyze checks that Analyze and Rewrite never panic, that Rewrite keeps valid JSON
// valid, and that a template rewritten for another namespace reads the same ConfigMaps
// there.
func FuzzAnalyze(f *testing.F) {
	for _, seed := range []string{
		`{"data": {"v": "{{hub fromConfigMap \"\" \"site-data\" (printf \"%s-version\" .ManagedClusterName) hub}}"}}`,
		`{"data": {"v": "{{hub fromConfigMap \"ztp-site\" \"site-data\" \"v\" hub}}", "w": "{{ lookup \"v1\" \"Pod\" \"\" \"x\" }}"}}`,
		`{"a": "{{hub if eq .ManagedClusterName \"a\" hub}}", "b": "{{hub end hub}}"}`,
		`{"{{hub- copyConfigMapData \"ztp-site\" \"x\" -hub}}": ["{{hub fromSecret \"\" \"s\" \"k\" hub}}", 1, true, null]}`,
		`{"v": "{{hub (lookup \"v1\" \"ConfigMap\" \"ztp-site\" \"cm\").data.k | default \"x\" hub}}"}`,
		`{"v": "{{hub $n := \"x\" hub}}{{hub \"k\" | fromConfigMap \"\" $n hub}}"}`,
		`{"v": "{{hub define \"t\" hub}}{{hub fromConfigMap \"\" \"a\" \"b\" hub}}{{hub end hub}}{{hub template \"t\" hub}}"}`,
		`{"v": "{{hub if .X hub}}"}`,
		`{"v": "{{hub fromConfigMap 'a' ` + "`ztp-site`" + ` \"hub}}\" hub}}"}`,
		`{"v": "{{hub`,
		`"{{hub unknownFunc hub}}"`,
		`{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		original := Analyze(policyNamespace, [][]byte{raw})
		rewritten := Rewrite(raw, policyNamespace, "cgu-ns")
		if json.Valid(raw) && !json.Valid(rewritten) {
			t.Fatalf("Rewrite made invalid JSON of %s: %s", raw, rewritten)
		}
		if original.Unsupported != "" {
			return
		}
		copied := Analyze("cgu-ns", [][]byte{rewritten})
		if copied.Unsupported != "" || !slices.Equal(original.ConfigMaps, copied.ConfigMaps) {
			t.Fatalf("%s reads %q; rewritten as %s it reads %q (%s)", raw, original.ConfigMaps, rewritten, copied.ConfigMaps, copied.Unsupported)
		}
	})
}
