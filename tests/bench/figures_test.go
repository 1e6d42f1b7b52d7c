package bench_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Figures are one phase's figures as hack/benchcurve reads them, one JSON object a line in
// the file BENCH_JSON names: the scale curve fits them over the fleet's size.
type Figures struct {
	Clusters int    `json:"clusters"`
	Policies int    `json:"policies"`
	Phase    string `json:"phase"`
	Mode     string `json:"mode,omitempty"`
	// SettledSeconds is how long the hub world took to settle before the rollout.
	SettledSeconds float64 `json:"settledSeconds"`
	// ConvergedSeconds is the rollout's time; OverFloor its ratio to the Override floor of
	// the same run, 0 when that floor did not run.
	ConvergedSeconds float64 `json:"convergedSeconds"`
	OverFloor        float64 `json:"overFloor,omitempty"`
	// The operator's requests, writes (events aside) and events during the rollout.
	Requests int `json:"requests,omitempty"`
	Writes   int `json:"writes,omitempty"`
	Events   int `json:"events,omitempty"`
	// RSSMiB is the operator process's RSS peak; LargestBytes its largest object written.
	RSSMiB       float64 `json:"rssMiB,omitempty"`
	LargestBytes int64   `json:"largestBytes,omitempty"`
	Error        string  `json:"error,omitempty"`
}

// figuresJSON renders the figures of each phase of a run, a JSON line each.
func figuresJSON(c config, results []phaseResult) string {
	var floor time.Duration
	for _, r := range results {
		if r.phase == overrideFloor && r.err == nil {
			floor = r.converged
		}
	}
	var lines []string
	for _, r := range results {
		f := Figures{Clusters: c.clusters, Policies: c.policies, Phase: r.phase, Mode: string(c.mode),
			SettledSeconds: r.settled.Seconds(), ConvergedSeconds: r.converged.Seconds()}
		if phaseKinds[r.phase].operator && floor > 0 && r.converged > 0 {
			f.OverFloor = r.converged.Seconds() / floor.Seconds()
		}
		if rq := r.requests; rq != nil {
			f.Events = rq.after[eventCreates]
			f.Requests = total(rq.after, anyVerb)
			f.Writes = total(rq.after, isWrite) - f.Events
			f.LargestBytes = rq.largest
		}
		if r.operator != nil {
			f.RSSMiB = float64(r.operator.RSSPeak) / (1 << 20)
		}
		if r.err != nil {
			f.Error = r.err.Error()
		}
		data, _ := json.Marshal(f)
		lines = append(lines, string(data))
	}
	return strings.Join(lines, "\n")
}

func TestFiguresJSON(t *testing.T) {
	rq := requestCounts{after: map[string]int{eventCreates: 10, "PATCH placements": 4, "GET policies": 3}, largest: 99}
	out := figuresJSON(config{clusters: 5, policies: 2}, []phaseResult{
		{phase: overrideFloor, converged: 10 * time.Second},
		{phase: "operator-override", converged: 12 * time.Second, requests: &rq, operator: &childReport{RSSPeak: 64 << 20}},
	})
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), out)
	}
	var f Figures
	if err := json.Unmarshal([]byte(lines[1]), &f); err != nil {
		t.Fatal(err)
	}
	want := Figures{Clusters: 5, Policies: 2, Phase: "operator-override", ConvergedSeconds: 12, OverFloor: 1.2,
		Requests: 17, Writes: 4, Events: 10, RSSMiB: 64, LargestBytes: 99}
	if f != want {
		t.Errorf("figures %+v, want %+v", f, want)
	}
}
