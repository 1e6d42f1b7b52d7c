package upgradecheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
)

// The reasons of a HealthVerdict; an unhealthy y-stream cluster that is Upgradeable=False
// alone has ReasonUpgradeableFalse.
const (
	// ReasonHealthy: nothing keeps the upgrade from starting.
	ReasonHealthy = "Healthy"
	// ReasonHealthUnknown: an input was not read; the cluster counts as unhealthy.
	ReasonHealthUnknown = "HealthUnknown"
	// ReasonClusterOperatorsUnhealthy: ClusterOperators are Degraded=True or Available=False.
	ReasonClusterOperatorsUnhealthy = "ClusterOperatorsUnhealthy"
	// ReasonCriticalAlertsFiring: alerts of severity critical are firing.
	ReasonCriticalAlertsFiring = "CriticalAlertsFiring"
	// ReasonMultipleProblems: more than one kind of problem was found.
	ReasonMultipleProblems = "MultipleProblems"
)

const (
	severityCritical = "critical"
	stateFiring      = "firing"
)

// Alert is one alert of the cluster's Prometheus (or Alertmanager).
type Alert struct {
	// Name is the alertname label.
	Name string `json:"name"`
	// Severity is the severity label: critical, warning, info.
	Severity string `json:"severity"`
	// State is pending or firing.
	State string `json:"state"`
}

// HealthInput is what the pre-upgrade health check reads of a cluster. A nil slice or
// pointer means "not read" and fails the check; an empty, non-nil slice means "read, and
// there are none".
type HealthInput struct {
	// ClusterOperators are the cluster's ClusterOperators; nil when not read.
	ClusterOperators []configv1.ClusterOperator
	// Alerts are the cluster's alerts; nil when not read.
	Alerts []Alert
	// YStream says that the upgrade changes the minor (or major) version, so that the
	// ClusterVersion must not be Upgradeable=False.
	YStream bool
	// Cluster is the cluster's ClusterVersion; needed, and nil when not read, for a
	// y-stream upgrade only.
	Cluster *configv1.ClusterVersion
}

// Reasons of one run of the health check, on a cluster waiting for it or one it could not
// check.
const (
	// ReasonHealthCheckPending: the health check of the cluster has not answered yet.
	ReasonHealthCheckPending = "HealthCheckPending"
	// ReasonHealthCheckFailed: the health check could not run on the cluster.
	ReasonHealthCheckFailed = "HealthCheckFailed"
)

// HealthRun is what one run of the health check on a cluster says so far.
type HealthRun struct {
	// Done is false while the check runs.
	Done    bool
	Healthy bool
	// Reason and Message explain it: Health's, or why there is none yet.
	Reason, Message string
	// CollectedAt is when the spoke program collected the report; zero without one.
	CollectedAt time.Time
}

// HealthVerdict is the result of the health check.
type HealthVerdict struct {
	// Healthy says the upgrade may start.
	Healthy bool
	// Reason is one of ReasonHealthy, ReasonHealthUnknown, ReasonClusterOperatorsUnhealthy,
	// ReasonCriticalAlertsFiring, ReasonUpgradeableFalse or ReasonMultipleProblems.
	Reason string
	// Message is one sentence naming at most five operators or alerts of each kind.
	Message string
	// Problems lists every problem found, one per operator, alert or condition.
	Problems []string
}

// Health is the pre-upgrade health check, as the managed-upgrade-operator runs it: the
// cluster is unhealthy when a ClusterOperator is Degraded=True or Available=False, when an
// alert of severity critical is firing, or, for a y-stream upgrade, when the ClusterVersion
// is Upgradeable=False. Inputs that were not read make it unhealthy with
// ReasonHealthUnknown: it fails closed.
func Health(in HealthInput) HealthVerdict {
	if unread := unreadInputs(in); len(unread) > 0 {
		problems := make([]string, 0, len(unread))
		for _, u := range unread {
			problems = append(problems, u+" not read")
		}
		return HealthVerdict{Reason: ReasonHealthUnknown, Problems: problems,
			Message: fmt.Sprintf("Health of the cluster is unknown: %s not read", strings.Join(unread, " and "))}
	}
	var found []finding
	for _, f := range []finding{unhealthyOperators(in.ClusterOperators), firingCritical(in.Alerts), notUpgradeable(in)} {
		if len(f.problems) > 0 {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return HealthVerdict{Healthy: true, Reason: ReasonHealthy, Message: healthyMessage(in)}
	}
	v := HealthVerdict{Reason: found[0].reason}
	if len(found) > 1 {
		v.Reason = ReasonMultipleProblems
	}
	summaries := make([]string, 0, len(found))
	for _, f := range found {
		summaries = append(summaries, f.summary)
		v.Problems = append(v.Problems, f.problems...)
	}
	v.Message = "Cluster is not healthy: " + strings.Join(summaries, "; ")
	return v
}

// finding is one kind of health problem: its reason, its part of the message, and each
// problem.
type finding struct {
	reason   string
	summary  string
	problems []string
}

func unreadInputs(in HealthInput) []string {
	var unread []string
	if in.ClusterOperators == nil {
		unread = append(unread, "cluster operators")
	}
	if in.Alerts == nil {
		unread = append(unread, "alerts")
	}
	if in.YStream && in.Cluster == nil {
		unread = append(unread, "ClusterVersion")
	}
	return unread
}

// unhealthyOperators finds the operators that are Degraded=True or Available=False, by name.
func unhealthyOperators(cos []configv1.ClusterOperator) finding {
	sorted := slices.Clone(cos)
	slices.SortFunc(sorted, func(a, b configv1.ClusterOperator) int { return strings.Compare(a.Name, b.Name) })
	var named, problems []string
	for _, co := range sorted {
		var states []string
		if operatorCondition(co, configv1.OperatorDegraded) == configv1.ConditionTrue {
			states = append(states, "Degraded")
			problems = append(problems, fmt.Sprintf("ClusterOperator %s is Degraded", co.Name))
		}
		if operatorCondition(co, configv1.OperatorAvailable) == configv1.ConditionFalse {
			states = append(states, "Unavailable")
			problems = append(problems, fmt.Sprintf("ClusterOperator %s is not Available", co.Name))
		}
		if len(states) > 0 {
			named = append(named, fmt.Sprintf("%s (%s)", co.Name, strings.Join(states, ", ")))
		}
	}
	return finding{
		reason:   ReasonClusterOperatorsUnhealthy,
		summary:  fmt.Sprintf("%d %s degraded or unavailable: %s", len(named), plural(len(named), "cluster operator is", "cluster operators are"), namedList(named)),
		problems: problems,
	}
}

func operatorCondition(co configv1.ClusterOperator, t configv1.ClusterStatusConditionType) configv1.ConditionStatus {
	for _, c := range co.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// firingCritical finds the firing alerts of severity critical, each name once, sorted.
func firingCritical(alerts []Alert) finding {
	var names []string
	for _, a := range alerts {
		if strings.EqualFold(a.Severity, severityCritical) && strings.EqualFold(a.State, stateFiring) {
			names = append(names, a.Name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	problems := make([]string, 0, len(names))
	for _, n := range names {
		problems = append(problems, fmt.Sprintf("Critical alert %s is firing", n))
	}
	return finding{
		reason:   ReasonCriticalAlertsFiring,
		summary:  fmt.Sprintf("%d critical %s firing: %s", len(names), plural(len(names), "alert is", "alerts are"), namedList(names)),
		problems: problems,
	}
}

// notUpgradeable finds, for a y-stream upgrade, the ClusterVersion's Upgradeable=False.
func notUpgradeable(in HealthInput) finding {
	f := finding{reason: ReasonUpgradeableFalse}
	if !in.YStream {
		return f
	}
	if c := upgradeableFalse(in.Cluster); c != nil {
		f.summary = fmt.Sprintf("ClusterVersion is not upgradeable to a new minor version: %q", clip(c.Message))
		f.problems = []string{"ClusterVersion is Upgradeable=False: " + clip(c.Message)}
	}
	return f
}

func healthyMessage(in HealthInput) string {
	msg := fmt.Sprintf("Cluster is healthy: %d %s available and not degraded and no critical alert is firing",
		len(in.ClusterOperators), plural(len(in.ClusterOperators), "cluster operator is", "cluster operators are"))
	if in.YStream {
		msg += ", and the ClusterVersion is not Upgradeable=False"
	}
	return msg
}
