package plan

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// A window batch keeps its size in every part of its record, and Without drops the window
// when it becomes wider than what is left.
func TestWindowRecords(t *testing.T) {
	p, err := Build(Input{Clusters: clusterNames("sno", 600), Canaries: []string{"sno-01"}, MaxConcurrency: 100, Window: true})
	if err != nil {
		t.Fatal(err)
	}
	records := Records(p, "ns", "w")
	if len(records) != 4 || records[1].Spec.Window != 100 || records[3].Spec.Window != 100 || records[0].Spec.Window != 0 {
		t.Fatalf("records: %d, windows %d %d %d", len(records), records[0].Spec.Window, records[1].Spec.Window, records[3].Spec.Window)
	}
	back, err := FromRecords(records, "w")
	if err != nil {
		t.Fatal(err)
	}
	if render(back) != render(Plan{Batches: p.Batches}) || back.Batches[1].Window != 100 {
		t.Fatalf("read back:\n%s\nwant:\n%s", render(back), render(p))
	}
	small := p.Without(set(p.Batches[1].Clusters[:550]...))
	if len(small.Batches) != 2 || len(small.Batches[1].Clusters) != 49 || small.Batches[1].Window != 0 {
		t.Fatalf("without 550 clusters: %s", render(small))
	}
}

// A progressive batch keeps its stages and what an unhealthy stage does in every part of its
// record, and through Without.
func TestProgressiveRecords(t *testing.T) {
	p, err := Build(Input{Clusters: clusterNames("sno", 600), Canaries: []string{"sno-01"}, MaxConcurrency: 100,
		Progressive: &Growth{Factor: 5, Stop: true}})
	if err != nil {
		t.Fatal(err)
	}
	records := Records(p, "ns", "p")
	for i, r := range records[1:] {
		if !slices.Equal(r.Spec.Stages, []int{1, 5, 25, 100}) || r.Spec.OnUnhealthy != ranv1alpha1.UnhealthyStop {
			t.Fatalf("record %d: stages %v, onUnhealthy %q", i+1, r.Spec.Stages, r.Spec.OnUnhealthy)
		}
	}
	if records[0].Spec.Stages != nil || records[0].Spec.OnUnhealthy != "" {
		t.Fatalf("the canary's record is staged: %+v", records[0].Spec)
	}
	back, err := FromRecords(records, "p")
	if err != nil {
		t.Fatal(err)
	}
	if render(back) != render(Plan{Batches: p.Batches}) {
		t.Fatalf("read back:\n%s\nwant:\n%s", render(back), render(p))
	}
	if small := p.Without(set(p.Batches[1].Clusters[:500]...)); !slices.Equal(small.Batches[1].Stages, p.Batches[1].Stages) || !small.Batches[1].StopUnhealthy {
		t.Fatalf("without 500 clusters: %s", render(small))
	}
	reset, err := Build(Input{Clusters: clusterNames("sno", 10), MaxConcurrency: 5, Progressive: &Growth{Factor: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if r := Records(reset, "ns", "r"); r[0].Spec.OnUnhealthy != ranv1alpha1.UnhealthyReset {
		t.Fatalf("onUnhealthy %q, want Reset", r[0].Spec.OnUnhealthy)
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	p, err := Build(Input{Clusters: clusterNames("sno", 1200), Canaries: []string{"sno-07"}, MaxConcurrency: 600})
	if err != nil {
		t.Fatal(err)
	}
	records := Records(p, "ztp-install", "cgu-big")
	// 1 canary record, then batches of 600 in parts of 250, 250, 100, and the rest (599).
	var shape []int
	for _, r := range records {
		shape = append(shape, len(r.Spec.Clusters))
		if len(r.Spec.Clusters) > ranv1alpha1.ClusterDetailLimit || r.Labels[ranv1alpha1.LabelUpgradeName] != "cgu-big" {
			t.Fatalf("record %s: %d clusters, labels %v", r.Name, len(r.Spec.Clusters), r.Labels)
		}
	}
	if want := []int{1, 250, 250, 100, 250, 250, 99}; !slices.Equal(shape, want) {
		t.Fatalf("record sizes %v, want %v", shape, want)
	}
	if records[2].Name != "cgu-big-b2-p1" || records[2].Spec.Index != 2 || records[2].Spec.Part != 1 {
		t.Fatalf("third record %s index %d part %d", records[2].Name, records[2].Spec.Index, records[2].Spec.Part)
	}

	shuffled := slices.Clone(records)
	rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	other := Records(Plan{Batches: []Batch{{Clusters: []string{"x"}}}}, "ztp-install", "cgu-other")
	back, err := FromRecords(append(shuffled, other...), "cgu-big")
	if err != nil {
		t.Fatal(err)
	}
	if render(back) != render(Plan{Batches: p.Batches}) {
		t.Fatalf("the plan read back differs:\n%s\nwant\n%s", render(back), render(Plan{Batches: p.Batches}))
	}
}

func TestFromRecordsRefusesAnIncompletePlan(t *testing.T) {
	p, _ := Build(Input{Clusters: clusterNames("sno", 600), MaxConcurrency: 300})
	records := Records(p, "ns", "cgu")
	for name, drop := range map[string]int{"a part": 1, "a whole batch": 0} {
		t.Run(name, func(t *testing.T) {
			kept := slices.Delete(slices.Clone(records), drop, drop+1)
			if name == "a whole batch" {
				kept = slices.Delete(slices.Clone(records), 0, 2)
			}
			if _, err := FromRecords(kept, "cgu"); err == nil || !strings.Contains(err.Error(), "the plan of cgu has") {
				t.Fatalf("error %v, want one about a missing record", err)
			}
		})
	}
}

func TestRecordLabelsFitForLongNames(t *testing.T) {
	long := strings.Repeat("c", 200)
	r := Records(Plan{Batches: []Batch{{Clusters: []string{"a"}}}}, "ns", long)[0]
	if v := r.Labels[ranv1alpha1.LabelUpgradeName]; len(v) > 63 || r.Spec.Upgrade != long || len(r.Name) > 253 {
		t.Fatalf("label %q (%d), upgrade %d chars, name %d chars", v, len(v), len(r.Spec.Upgrade), len(r.Name))
	}
}

// A plan recorded in part (a pass cut while it wrote the records) is not whole; records of an
// earlier version, which do not count the batches, never are.
func TestWhole(t *testing.T) {
	p := Plan{Batches: []Batch{{Clusters: []string{"a"}}, {Clusters: []string{"b"}}}}
	records := Records(p, "ns", "cgu")
	if !Whole(records, "cgu") {
		t.Fatal("every record: not whole")
	}
	if Whole(records[:1], "cgu") {
		t.Fatal("the first batch's record only: whole")
	}
	records[0].Spec.Batches, records[1].Spec.Batches = 0, 0
	if Whole(records, "cgu") {
		t.Fatal("records that do not count the batches: whole")
	}
}
