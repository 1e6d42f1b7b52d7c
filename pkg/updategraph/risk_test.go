package updategraph

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// answer is what a fake PromQL evaluation returns for one query.
type answer struct {
	match bool
	err   error
}

// byQuery is a RiskMatcher answering from a table keyed by query; unknown queries fail.
func byQuery(answers map[string]answer) RiskMatcher {
	return func(_ configv1.ConditionalUpdateRisk, promql string) (bool, error) {
		a, ok := answers[promql]
		if !ok {
			return false, errors.New("no series for " + promql)
		}
		return a.match, a.err
	}
}

func promqlRisk(name, query string) configv1.ConditionalUpdateRisk {
	return configv1.ConditionalUpdateRisk{
		Name: name, URL: "https://bugs.example.com/" + name, Message: name + " may hurt.",
		MatchingRules: []configv1.ClusterCondition{{Type: RuleTypePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: query}}},
	}
}

func withRules(r configv1.ConditionalUpdateRisk, rules ...configv1.ClusterCondition) configv1.ConditionalUpdateRisk {
	r.MatchingRules = append(r.MatchingRules, rules...)
	return r
}

var (
	always  = configv1.ClusterCondition{Type: RuleTypeAlways}
	unknown = configv1.ClusterCondition{Type: "Insights"}
	now     = metav1.NewTime(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
)

func TestRecommend(t *testing.T) {
	answers := map[string]answer{
		"hit": {match: true}, "miss": {match: false}, "broken": {err: errors.New("thanos unreachable")},
	}
	cases := map[string]struct {
		risks     []configv1.ConditionalUpdateRisk
		noMatcher bool
		status    metav1.ConditionStatus
		reason    string
		message   string
	}{
		"no risk applies": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("A", "miss"), promqlRisk("B", "miss")},
			status: metav1.ConditionTrue, reason: ReasonNotExposedToRisks, message: MessageNotExposedToRisks,
		},
		"one risk applies": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("A", "miss"), promqlRisk("B", "hit")},
			status: metav1.ConditionFalse, reason: "B", message: "B may hurt. https://bugs.example.com/B",
		},
		"two risks apply": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("A", "hit"), promqlRisk("B", "hit")},
			status: metav1.ConditionFalse, reason: ReasonMultipleReasons,
			message: "A may hurt. https://bugs.example.com/A\n\nB may hurt. https://bugs.example.com/B",
		},
		"evaluation fails": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("A", "broken")},
			status: metav1.ConditionUnknown, reason: ReasonEvaluationFailed,
			message: "Could not evaluate exposure to update risk A (thanos unreachable)\n" +
				"  A description: A may hurt.\n  A URL: https://bugs.example.com/A",
		},
		"two evaluations fail": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("A", "broken"), promqlRisk("B", "nothing")},
			status: metav1.ConditionUnknown, reason: ReasonEvaluationFailed,
			message: "Could not evaluate exposure to update risk A (thanos unreachable)\n" +
				"  A description: A may hurt.\n  A URL: https://bugs.example.com/A\n\n" +
				"Could not evaluate exposure to update risk B (no series for nothing)\n" +
				"  B description: B may hurt.\n  B URL: https://bugs.example.com/B",
		},
		"one applies, one fails": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("A", "broken"), promqlRisk("B", "hit")},
			status: metav1.ConditionFalse, reason: ReasonMultipleReasons,
			message: "Could not evaluate exposure to update risk A (thanos unreachable)\n" +
				"  A description: A may hurt.\n  A URL: https://bugs.example.com/A\n\n" +
				"B may hurt. https://bugs.example.com/B",
		},
		"Always rule": {
			risks:  []configv1.ConditionalUpdateRisk{{Name: "PreRelease", URL: "https://u", Message: "Early.", MatchingRules: []configv1.ClusterCondition{always}}},
			status: metav1.ConditionFalse, reason: "PreRelease", message: "Early. https://u",
		},
		"failed PromQL falls back to Always": {
			risks:  []configv1.ConditionalUpdateRisk{withRules(promqlRisk("A", "broken"), always)},
			status: metav1.ConditionFalse, reason: "A", message: "A may hurt. https://bugs.example.com/A",
		},
		"decided PromQL stops the walk": {
			risks:  []configv1.ConditionalUpdateRisk{withRules(promqlRisk("A", "miss"), always)},
			status: metav1.ConditionTrue, reason: ReasonNotExposedToRisks, message: MessageNotExposedToRisks,
		},
		"unknown rule type skipped": {
			risks: []configv1.ConditionalUpdateRisk{withRules(configv1.ConditionalUpdateRisk{Name: "A", URL: "https://u", Message: "M."},
				unknown, configv1.ClusterCondition{Type: RuleTypePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: "hit"}})},
			status: metav1.ConditionFalse, reason: "A", message: "M. https://u",
		},
		"no matcher fails closed": {
			risks: []configv1.ConditionalUpdateRisk{promqlRisk("A", "hit")}, noMatcher: true,
			status: metav1.ConditionUnknown, reason: ReasonEvaluationFailed,
			message: "Could not evaluate exposure to update risk A (no PromQL evaluator is configured)\n" +
				"  A description: A may hurt.\n  A URL: https://bugs.example.com/A",
		},
		"name that is not a reason": {
			risks:  []configv1.ConditionalUpdateRisk{promqlRisk("not a reason!", "hit")},
			status: metav1.ConditionFalse, reason: ReasonExposedToRisks,
			message: "not a reason! may hurt. https://bugs.example.com/not a reason!",
		},
		"no risks": {
			status: metav1.ConditionTrue, reason: ReasonNotExposedToRisks, message: MessageNotExposedToRisks,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			match := byQuery(answers)
			if tc.noMatcher {
				match = nil
			}
			got := Recommend(tc.risks, match, now)
			want := metav1.Condition{
				Type: ConditionRecommended, Status: tc.status, Reason: tc.reason, Message: tc.message, LastTransitionTime: now,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Recommend (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMatchRisk(t *testing.T) {
	cases := map[string]struct {
		rules   []configv1.ClusterCondition
		match   RiskMatcher
		want    bool
		wantErr error
	}{
		"no rules":           {wantErr: ErrNoEvaluableRule},
		"only unknown rules": {rules: []configv1.ClusterCondition{unknown}, wantErr: ErrNoEvaluableRule},
		"PromQL without query": {
			rules: []configv1.ClusterCondition{{Type: RuleTypePromQL}}, match: byQuery(nil), wantErr: errors.New("any"),
		},
		"nil matcher": {
			rules: []configv1.ClusterCondition{{Type: RuleTypePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: "q"}}}, wantErr: ErrNoMatcher,
		},
		"matcher says yes": {
			rules: []configv1.ClusterCondition{{Type: RuleTypePromQL, PromQL: &configv1.PromQLClusterCondition{PromQL: "q"}}},
			match: byQuery(map[string]answer{"q": {match: true}}), want: true,
		},
		"Always": {rules: []configv1.ClusterCondition{unknown, always}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := MatchRisk(configv1.ConditionalUpdateRisk{Name: "R", MatchingRules: tc.rules}, tc.match)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("MatchRisk: %v", err)
			case tc.wantErr != nil && err == nil:
				t.Fatalf("MatchRisk succeeded, want error %v", tc.wantErr)
			case tc.wantErr != nil && tc.wantErr.Error() != "any" && !errors.Is(err, tc.wantErr):
				t.Fatalf("MatchRisk error %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("MatchRisk = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMatcherReceivesRisk(t *testing.T) {
	var seen []string
	byName := func(r configv1.ConditionalUpdateRisk, _ string) (bool, error) {
		seen = append(seen, r.Name)
		return r.Name == "B", nil
	}
	got := Recommend([]configv1.ConditionalUpdateRisk{promqlRisk("A", "x"), promqlRisk("B", "y")}, byName, now)
	if got.Status != metav1.ConditionFalse || got.Reason != "B" {
		t.Errorf("Recommend = %s/%s, want False/B", got.Status, got.Reason)
	}
	if diff := cmp.Diff([]string{"A", "B"}, seen); diff != "" {
		t.Errorf("matcher calls (-want +got):\n%s", diff)
	}
}
