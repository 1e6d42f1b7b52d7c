package manifestwork

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
)

// FuzzExpected reads arbitrary expected-feedback annotations: an error names the template and
// the annotation; otherwise every key of the JSON object is expected, as text.
func FuzzExpected(f *testing.F) {
	for _, s := range []string{`{"succeeded": "1"}`, `{"ready": true, "replicas": 3, "ratio": 0.5}`, `{}`, `null`,
		`{"a": null}`, `{"a": {"b": 1}}`, `{"a": [1]}`, `[1,2]`, `"text"`, `{"a": 1e400}`, `{"a": 1`, ``, `{"a":"1","a":"2"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, annotation string) {
		tmpl := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tmpl",
			Annotations: map[string]string{AnnotationExpectedFeedback: annotation}}}
		got, err := Expected(tmpl)
		if err != nil {
			if !strings.Contains(err.Error(), "ManifestWorkReplicaSet ns/tmpl: annotation "+AnnotationExpectedFeedback) {
				t.Fatalf("error does not name the template: %v", err)
			}
			return
		}
		var object map[string]any
		if err := json.Unmarshal([]byte(annotation), &object); err != nil {
			t.Fatalf("accepted %q, which is no JSON object", annotation)
		}
		if len(got) != len(object) {
			t.Fatalf("Expected(%q) = %v: %d values for %d keys", annotation, got, len(got), len(object))
		}
	})
}

// FuzzExpectedValues reads TALM's annotation: errors name the template; an accepted one is a
// JSON list with one value per entry, each of a manifest index of at least 0.
func FuzzExpectedValues(f *testing.F) {
	for _, s := range []string{`[{"manifestIndex": 1, "name": "isPrepCompleted", "value": "True"}]`, `[]`, `null`, `{}`,
		`[{"manifestIndex": -1, "name": "a", "value": 1}]`, `[{"name": "a", "value": true}]`, `[{"manifestIndex": 0, "name": "", "value": "x"}]`,
		`[{"manifestIndex": 0, "name": "a", "value": {"b": 1}}]`, `[{"manifestIndex": 1.5, "name": "a", "value": 1}]`, `[`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, annotation string) {
		tmpl := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tmpl",
			Annotations: map[string]string{AnnotationExpectedValues: annotation}}}
		got, err := Expected(tmpl)
		if err != nil {
			if !strings.Contains(err.Error(), "ManifestWorkReplicaSet ns/tmpl: annotation "+AnnotationExpectedValues) {
				t.Fatalf("error does not name the template: %v", err)
			}
			return
		}
		var list []any
		if err := json.Unmarshal([]byte(annotation), &list); err != nil {
			t.Fatalf("accepted %q, which is no JSON list", annotation)
		}
		if len(got) != len(list) {
			t.Fatalf("Expected(%q) = %v: %d values for %d entries", annotation, got, len(got), len(list))
		}
		for _, v := range got {
			if v.Manifest < 0 || v.Name == "" {
				t.Fatalf("Expected(%q) = %v: an entry without its manifest or name", annotation, got)
			}
		}
	})
}

// FuzzObserve judges ManifestWorks with arbitrary status: Observe never panics, gives a
// known state with a message naming the work, and says Done only when the work is Applied
// and Available for its generation and reports the expected feedback; Degraded only with
// Degraded True.
func FuzzObserve(f *testing.F) {
	f.Add(`{"conditions":[{"type":"Applied","status":"True"},{"type":"Available","status":"True"}]}`, int64(1), `{"succeeded":"1"}`)
	f.Add(`{"conditions":[{"type":"Degraded","status":"True","observedGeneration":2,"message":"boom"}]}`, int64(2), ``)
	f.Add(`{"conditions":[{"type":"Applied","status":"True","observedGeneration":1},{"type":"Available","status":"True","observedGeneration":1}]}`, int64(2), ``)
	f.Add(`{"resourceStatus":{"manifests":[{"resourceMeta":{"kind":"Job","name":"j"},"conditions":[{"type":"Applied","status":"False","reason":"x"}],
"statusFeedback":{"values":[{"name":"succeeded","fieldValue":{"type":"Integer","integer":1}}]}}]},
"conditions":[{"type":"Applied","status":"True"},{"type":"Available","status":"True"},{"type":"Complete","status":"False"}]}`, int64(0), `{"succeeded":1}`)
	f.Add(`{"resourceStatus":{"manifests":[{"statusFeedback":{"values":[{"name":"a","fieldValue":{"type":"JsonRaw","jsonRaw":"{}"}},{"name":"a"}]}}]}}`, int64(-1), `{"a":"{}"}`)
	f.Add(`{"conditions":null,"resourceStatus":null}`, int64(0), `{"a":true}`)
	f.Fuzz(func(t *testing.T, status string, generation int64, expected string) {
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "sno-1", Name: "work", Generation: generation}}
		if err := json.Unmarshal([]byte(status), &w.Status); err != nil {
			t.Skip("not a ManifestWork status")
		}
		tmpl := &workv1alpha1.ManifestWorkReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{AnnotationExpectedFeedback: expected}}}
		want, err := Expected(tmpl)
		if err != nil {
			want = nil
		}
		o := Observe(w, want)
		if o.State < Missing || o.State > Degraded || !strings.Contains(o.Message, "sno-1/work") {
			t.Fatalf("Observe = %+v", o)
		}
		current := func(kind string) bool {
			c := meta.FindStatusCondition(w.Status.Conditions, kind)
			return c != nil && c.Status == metav1.ConditionTrue && (c.ObservedGeneration == 0 || c.ObservedGeneration == generation)
		}
		switch o.State {
		case Done:
			if !current(workv1.WorkApplied) || !current(workv1.WorkAvailable) || unmet(w, want) != "" {
				t.Fatalf("Done without being applied, available and reporting %v: %s", want, status)
			}
		case Degraded:
			if !current(workv1.WorkDegraded) {
				t.Fatalf("Degraded without Degraded True: %s", status)
			}
		}
	})
}
