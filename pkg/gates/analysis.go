package gates

import (
	"strings"
	"time"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/analysis"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// Analysis is the rollout's analysis (spec.analysis) with the measurements taken for this
// decision, nil without one. A gate that cannot run (its query does not parse: stored
// before admission checked it, or changed since the start) is Invalid: never measured,
// inconclusive, never a pass.
func Analysis(a *ranv1alpha1.Analysis, measured map[string]analysis.Measurement) *rollout.Analysis {
	if a == nil {
		return nil
	}
	out := &rollout.Analysis{Abort: a.OnFailure != ranv1alpha1.AnalysisContinue, Measured: measured}
	for _, ag := range a.Gates {
		s, err := analysis.FromSpec(ag)
		if err != nil {
			s = analysis.Spec{Gate: analysis.Gate{Name: ag.Name}, Query: ag.Query, Invalid: "cannot run: " + err.Error()}
		}
		out.Gates = append(out.Gates, s)
	}
	return out
}

// AnalysisProblem says, before the start, why spec.analysis cannot run: the gates that
// cannot (FromSpec), and endpoint, what the gather found wrong with the query API's Secret
// ("" when nothing). Nil when it can run.
func AnalysisProblem(a *ranv1alpha1.Analysis, endpoint string) *rollout.Problem {
	if a == nil {
		return nil
	}
	var problems []string
	for _, ag := range a.Gates {
		if _, err := analysis.FromSpec(ag); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if endpoint != "" {
		problems = append(problems, endpoint)
	}
	if len(problems) == 0 {
		return nil
	}
	p := &rollout.Problem{Reason: ranv1alpha1.ReasonInvalidAnalysis, Message: "spec.analysis cannot run: " + strings.Join(problems, "; ")}
	if endpoint != "" {
		p.Recheck = SecretRecheck // a Secret made later changes nothing the operator watches
	}
	return p
}

// SecretRecheck is how often a rollout waiting for its analysis Secret looks again.
const SecretRecheck = 30 * time.Second
