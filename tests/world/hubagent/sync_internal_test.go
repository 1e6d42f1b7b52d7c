package hubagent

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
)

func TestApplyDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Generation: 3, Labels: map[string]string{"train": "a"}}}
	applied := applyRecord{generation: 3, labels: map[string]string{"train": "a"}, resyncAt: now.Add(time.Minute)}
	with := func(change func(*applyRecord)) *applyRecord {
		r := applied
		change(&r)
		return &r
	}
	cases := map[string]struct {
		last *applyRecord
		want bool
	}{
		"never applied":             {last: nil, want: true},
		"applied, nothing new":      {last: &applied, want: false},
		"the last pass asked again": {last: with(func(r *applyRecord) { r.again = true }), want: true},
		"a new generation":          {last: with(func(r *applyRecord) { r.generation = 2 }), want: true},
		"other labels":              {last: with(func(r *applyRecord) { r.labels = nil }), want: true},
		"the resync is due":         {last: with(func(r *applyRecord) { r.resyncAt = now }), want: true},
		"the resync is yet to be":   {last: with(func(r *applyRecord) { r.resyncAt = now.Add(time.Nanosecond) }), want: false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(applyDue(work, c.last, now)).To(Equal(c.want))
		})
	}
}
