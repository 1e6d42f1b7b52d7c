package sim

import (
	"maps"
	"slices"
	"time"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// Alert is an alert firing on a spoke, as the cluster's Prometheus and Alertmanager report it:
// its alertname and severity labels, its other labels, and when it started firing (activeAt).
type Alert struct {
	// Name is the alertname label, for example "KubeAPIErrorBudgetBurn".
	Name string
	// Severity is the severity label: "critical", "warning" or "info".
	Severity string
	// Labels are the alert's other labels (namespace, service, ...).
	Labels map[string]string
	// Since is when the alert started firing.
	Since time.Time
}

// SeverityCritical is the severity of the alerts that the managed-upgrade-operator's health
// checks count as a reason not to upgrade.
const SeverityCritical = "critical"

// alerts holds the alerts firing on a spoke. It is an Operator only to live among the spoke's
// operators: it changes nothing on the spoke. Tests set the list (SpokeSpec.Alerts,
// Simulator.SetAlerts); the simulated managed-upgrade-operator reads it in its health checks;
// how the hub-side operator is shown the alerts is decided with its health checks.
type alerts struct {
	firing []Alert
}

// Step does nothing: alerts fire and resolve only when a test says so.
func (*alerts) Step(configpolicy.Store, time.Time) (time.Duration, error) { return 0, nil }

// critical returns the names of the firing critical alerts (none for a nil list).
func (a *alerts) critical() []string {
	if a == nil {
		return nil
	}
	var names []string
	for _, al := range a.firing {
		if al.Severity == SeverityCritical {
			names = append(names, al.Name)
		}
	}
	return names
}

func copyAlerts(in []Alert) []Alert {
	out := slices.Clone(in)
	for i := range out {
		out[i].Labels = maps.Clone(out[i].Labels)
	}
	return out
}

// SetAlerts replaces the alerts firing on a spoke (nil: none) and makes the simulator sync it.
func (s *Simulator) SetAlerts(cluster string, firing []Alert) error {
	return s.changeOperator(cluster, func(op Operator) bool {
		a, ok := op.(*alerts)
		if ok {
			a.firing = copyAlerts(firing)
		}
		return ok
	})
}

// Alerts returns a copy of the alerts firing on a spoke.
func (s *Simulator) Alerts(cluster string) ([]Alert, error) {
	var out []Alert
	err := s.readOperator(cluster, func(op Operator) bool {
		a, ok := op.(*alerts)
		if ok {
			out = copyAlerts(a.firing)
		}
		return ok
	})
	return out, err
}
