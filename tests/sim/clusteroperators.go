package sim

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

var clusterOperatorGVK = configv1.GroupVersion.WithKind("ClusterOperator")

// defaultClusterOperators are the cluster operators every simulated spoke runs unless its
// SpokeSpec names others, in the order an update reaches them (the payload's run levels):
// etcd and the control plane first, machine-config last.
var defaultClusterOperators = []string{
	"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "openshift-apiserver",
	"authentication", "ingress", "operator-lifecycle-manager", "network", "dns", "machine-config",
}

// operatorNamespaces are the namespaces (listed in status.relatedObjects) of the operators whose
// namespace is not "openshift-<name>".
var operatorNamespaces = map[string]string{
	"network":                    "openshift-network-operator",
	"machine-config":             "openshift-machine-config-operator",
	"operator-lifecycle-manager": "openshift-operator-lifecycle-manager",
	"openshift-apiserver":        "openshift-apiserver",
}

// Reasons and messages of the conditions the simulated cluster operators report when all is
// well, as the operators built on OpenShift's library-go report them.
const (
	reasonAsExpected = "AsExpected"
	messageAllIsWell = "All is well"
)

// ClusterOperatorCondition is a condition a test imposes on one cluster operator of a spoke, for
// example Degraded=True or Upgradeable=False. It replaces the condition of that type the
// simulated operator would report, until cleared.
type ClusterOperatorCondition struct {
	// Operator is the ClusterOperator's name, for example "machine-config".
	Operator string
	// Type is the condition type: Available, Progressing, Degraded or Upgradeable.
	Type configv1.ClusterStatusConditionType
	// Status of the condition.
	Status configv1.ConditionStatus
	// Reason and Message of the condition.
	Reason, Message string
}

// ClusterOperators simulates the config.openshift.io/v1 ClusterOperators of a spoke. Each
// reports status.versions (the "operator" version is the cluster's version) and the conditions
// Available, Progressing, Degraded and Upgradeable. While the ClusterVersion's newest history
// entry is Partial, the operators move to the target version one after the other, spread evenly
// over Duration, each reporting Progressing=True ("Working towards <version>") while it rolls
// out; the last one reports the new version only once the history says Completed, as
// machine-config finishes last on a real cluster. An operator that the ClusterVersion's Failing
// condition names ("Cluster operator <name> is degraded", "... is not available") reports
// Degraded=True or Available=False. Like the cluster-version operator, it also writes the
// ClusterVersion's Upgradeable=False condition while any ClusterOperator is Upgradeable=False.
type ClusterOperators struct {
	// Names of the cluster operators, in the order an update reaches them.
	Names []string
	// Duration is how long an update takes (the cluster-version operator's Behaviour.Duration
	// when the spoke joined).
	Duration time.Duration
	// imposed holds the conditions tests imposed, by operator name.
	imposed map[string][]ClusterOperatorCondition
	// last is what the operator last stored for each ClusterOperator, so that a round in which
	// nothing changed converts nothing.
	last map[string]storedCO
}

// NewClusterOperators returns the simulated cluster operators of a spoke.
func NewClusterOperators(spec SpokeSpec) *ClusterOperators {
	o := &ClusterOperators{Names: spec.ClusterOperators, Duration: spec.Behaviour.Duration}
	if len(o.Names) == 0 {
		o.Names = slices.Clone(defaultClusterOperators)
	}
	for _, c := range spec.ClusterOperatorConditions {
		o.impose(c)
	}
	return o
}

// impose makes an operator report a condition until cleared.
func (o *ClusterOperators) impose(c ClusterOperatorCondition) {
	if o.imposed == nil {
		o.imposed = map[string][]ClusterOperatorCondition{}
	}
	list := slices.DeleteFunc(o.imposed[c.Operator], func(old ClusterOperatorCondition) bool { return old.Type == c.Type })
	o.imposed[c.Operator] = append(list, c)
}

// coState is what one cluster operator reports at a point of an update.
type coState struct {
	// version is the operator's version; target the one it works towards, if any.
	version, target string
	// degraded and unavailable carry the messages of the failures the ClusterVersion reports.
	degraded, unavailable string
}

// Step writes each ClusterOperator as its operator reports it at now and returns when the next
// one reaches the new version during an update.
func (o *ClusterOperators) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	cv, err := getClusterVersion(objects)
	if err != nil {
		return 0, err
	}
	states, again := o.plan(cv, now)
	for i, name := range o.Names {
		if err := o.store(objects, name, states[i], now); err != nil {
			return 0, err
		}
	}
	return again, aggregateUpgradeable(objects, cv, now)
}

// plan returns what each operator reports at now and how long until that next changes.
func (o *ClusterOperators) plan(cv *configv1.ClusterVersion, now time.Time) ([]coState, time.Duration) {
	states := make([]coState, len(o.Names))
	history := cv.Status.History
	if len(history) == 0 {
		return states, 0
	}
	current := history[0]
	if current.State != configv1.PartialUpdate {
		for i := range states {
			states[i].version = current.Version
		}
		return states, 0
	}
	previous := previousVersion(history)
	var again time.Duration
	n := time.Duration(len(states))
	for i := range states {
		start := current.StartedTime.Add(o.Duration * time.Duration(i) / n)
		done := current.StartedTime.Add(o.Duration * time.Duration(i+1) / n)
		last := i == len(states)-1
		switch {
		case !last && !now.Before(done):
			states[i].version = current.Version
		case !now.Before(start):
			states[i] = coState{version: previous, target: current.Version}
			if !last {
				again = soonest(again, done.Sub(now))
			}
		default:
			states[i].version = previous
			again = soonest(again, start.Sub(now))
		}
	}
	o.failures(cv, states)
	return states, again
}

// previousVersion returns the version of the newest completed update before the current one.
func previousVersion(history []configv1.UpdateHistory) string {
	for _, h := range history[1:] {
		if h.State == configv1.CompletedUpdate {
			return h.Version
		}
	}
	return history[0].Version
}

// failures marks the operator that the ClusterVersion's Failing condition blames.
func (o *ClusterOperators) failures(cv *configv1.ClusterVersion, states []coState) {
	failing := findCVCondition(cv, "Failing")
	if failing == nil || failing.Status != configv1.ConditionTrue {
		return
	}
	for i, name := range o.Names {
		switch failing.Message {
		case "Cluster operator " + name + " is degraded":
			states[i].degraded = "Unable to apply " + cv.Status.Desired.Version + ": " + failing.Message
		case "Cluster operator " + name + " is not available":
			states[i].unavailable = "Unable to apply " + cv.Status.Desired.Version + ": " + failing.Message
		}
	}
}

func findCVCondition(cv *configv1.ClusterVersion, t configv1.ClusterStatusConditionType) *configv1.ClusterOperatorStatusCondition {
	for i := range cv.Status.Conditions {
		if cv.Status.Conditions[i].Type == t {
			return &cv.Status.Conditions[i]
		}
	}
	return nil
}

// conditions returns the conditions an operator reports in a state, the imposed ones replacing
// the computed ones.
func (o *ClusterOperators) conditions(name string, st coState) []ClusterOperatorCondition {
	healthy := func(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus) ClusterOperatorCondition {
		return ClusterOperatorCondition{Operator: name, Type: t, Status: s, Reason: reasonAsExpected, Message: messageAllIsWell}
	}
	out := []ClusterOperatorCondition{
		healthy(configv1.OperatorAvailable, configv1.ConditionTrue),
		healthy(configv1.OperatorProgressing, configv1.ConditionFalse),
		healthy(configv1.OperatorDegraded, configv1.ConditionFalse),
		healthy(configv1.OperatorUpgradeable, configv1.ConditionTrue),
	}
	if st.unavailable != "" {
		out[0] = ClusterOperatorCondition{Type: configv1.OperatorAvailable, Status: configv1.ConditionFalse,
			Reason: "UpdateFailed", Message: st.unavailable}
	}
	if st.target != "" {
		out[1] = ClusterOperatorCondition{Type: configv1.OperatorProgressing, Status: configv1.ConditionTrue,
			Message: "Working towards " + st.target}
	}
	if st.degraded != "" {
		out[2] = ClusterOperatorCondition{Type: configv1.OperatorDegraded, Status: configv1.ConditionTrue,
			Reason: "UpdateFailed", Message: st.degraded}
	}
	for _, c := range o.imposed[name] {
		i := slices.IndexFunc(out, func(have ClusterOperatorCondition) bool { return have.Type == c.Type })
		if i < 0 {
			out = append(out, c)
		} else {
			out[i] = c
		}
	}
	return out
}

// store writes one ClusterOperator when what it reports changed.
func (o *ClusterOperators) store(objects configpolicy.Store, name string, st coState, now time.Time) error {
	existing, err := objects.Get(clusterOperatorGVK, "", name)
	if err != nil && !errors.Is(err, configpolicy.ErrNotFound) {
		return err
	}
	var current configv1.ClusterOperatorStatus
	if existing != nil {
		if current, err = o.storedStatus(existing); err != nil {
			return err
		}
	}
	desired := current.DeepCopy()
	for _, c := range o.conditions(name, st) {
		setCOCondition(&desired.Conditions, c, metav1.NewTime(now))
	}
	desired.Versions = nil
	if st.version != "" {
		desired.Versions = []configv1.OperandVersion{{Name: "operator", Version: st.version}}
	}
	desired.RelatedObjects = relatedObjects(name)
	// desired starts as a copy of current: plain DeepEqual suffices and is much cheaper.
	if existing != nil && reflect.DeepEqual(&current, desired) {
		return nil
	}
	if err := writeClusterOperator(objects, name, existing, desired); err != nil {
		return err
	}
	stored, err := objects.Get(clusterOperatorGVK, "", name)
	if err != nil {
		return err
	}
	if o.last == nil {
		o.last = map[string]storedCO{}
	}
	o.last[name] = storedCO{resourceVersion: stored.GetResourceVersion(), status: *desired}
	return nil
}

// storedCO is what the operator last stored for a ClusterOperator.
type storedCO struct {
	resourceVersion string
	status          configv1.ClusterOperatorStatus
}

// storedStatus returns the status of a stored ClusterOperator, converting it only when
// something else wrote it since this operator did.
func (o *ClusterOperators) storedStatus(obj *unstructured.Unstructured) (configv1.ClusterOperatorStatus, error) {
	if last, ok := o.last[obj.GetName()]; ok && last.resourceVersion == obj.GetResourceVersion() {
		return *last.status.DeepCopy(), nil
	}
	co := &configv1.ClusterOperator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, co); err != nil {
		return configv1.ClusterOperatorStatus{}, fmt.Errorf("ClusterOperator %s: %w", obj.GetName(), err)
	}
	return co.Status, nil
}

// writeClusterOperator creates a ClusterOperator with status, or replaces the status of the
// existing one.
func writeClusterOperator(objects configpolicy.Store, name string, existing *unstructured.Unstructured,
	status *configv1.ClusterOperatorStatus) error {
	if existing != nil {
		m, err := toMap(status)
		if err != nil {
			return err
		}
		obj := existing.DeepCopy()
		obj.Object["status"] = m
		return objects.Update(obj)
	}
	obj, err := toUnstructured(&configv1.ClusterOperator{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: "ClusterOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     *status,
	})
	if err != nil {
		return err
	}
	return objects.Create(obj)
}

func relatedObjects(name string) []configv1.ObjectReference {
	ns, ok := operatorNamespaces[name]
	if !ok {
		ns = "openshift-" + name
	}
	return []configv1.ObjectReference{{Resource: "namespaces", Name: ns}}
}

// setCOCondition sets a condition, moving lastTransitionTime only when the status changes.
func setCOCondition(conditions *[]configv1.ClusterOperatorStatusCondition, c ClusterOperatorCondition, now metav1.Time) {
	for i := range *conditions {
		have := &(*conditions)[i]
		if have.Type != c.Type {
			continue
		}
		if have.Status != c.Status {
			have.LastTransitionTime = now
		}
		have.Status, have.Reason, have.Message = c.Status, c.Reason, c.Message
		return
	}
	*conditions = append(*conditions, configv1.ClusterOperatorStatusCondition{
		Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, LastTransitionTime: now,
	})
}

// aggregateUpgradeable does what the cluster-version operator does with the ClusterOperators'
// Upgradeable conditions: while any is False, the ClusterVersion cv (as read from objects)
// reports Upgradeable=False naming them ("Cluster operator <name> should not be upgraded
// between minor versions: <message>", with the operator's reason; several: reason
// ClusterOperatorsNotUpgradeable); otherwise it reports no Upgradeable condition.
func aggregateUpgradeable(objects configpolicy.Store, cv *configv1.ClusterVersion, now time.Time) error {
	operators, err := objects.List(clusterOperatorGVK, "")
	if err != nil {
		return err
	}
	var reasons, messages, names []string
	for _, obj := range operators {
		conditions, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "conditions")
		list, _ := conditions.([]any)
		for _, c := range list {
			m, _ := c.(map[string]any)
			if m["type"] == string(configv1.OperatorUpgradeable) && m["status"] == string(configv1.ConditionFalse) {
				reason, _ := m["reason"].(string)
				message, _ := m["message"].(string)
				names, reasons, messages = append(names, obj.GetName()), append(reasons, reason), append(messages, message)
			}
		}
	}
	before := slices.Clone(cv.Status.Conditions)
	cv.Status.Conditions = slices.Clone(cv.Status.Conditions)
	setUpgradeable(cv, names, reasons, messages, metav1.NewTime(now))
	if reflect.DeepEqual(before, cv.Status.Conditions) {
		return nil
	}
	obj, err := toUnstructured(cv)
	if err != nil {
		return err
	}
	return objects.Update(obj)
}

// notUpgradeablePrefixes start the messages of the Upgradeable conditions this simulation writes
// on the ClusterVersion; it removes no other.
var notUpgradeablePrefixes = []string{"Cluster operator ", "Multiple cluster operators "}

func setUpgradeable(cv *configv1.ClusterVersion, names, reasons, messages []string, now metav1.Time) {
	switch len(names) {
	case 0:
		cv.Status.Conditions = slices.DeleteFunc(cv.Status.Conditions, func(c configv1.ClusterOperatorStatusCondition) bool {
			return c.Type == configv1.OperatorUpgradeable && slices.ContainsFunc(notUpgradeablePrefixes, func(p string) bool {
				return strings.HasPrefix(c.Message, p)
			})
		})
	case 1:
		setCVCondition(cv, configv1.OperatorUpgradeable, configv1.ConditionFalse, reasons[0],
			fmt.Sprintf("Cluster operator %s should not be upgraded between minor versions: %s", names[0], messages[0]), now)
	default:
		lines := make([]string, len(names))
		for i := range names {
			lines[i] = fmt.Sprintf("Cluster operator %s should not be upgraded between minor versions: %s: %s",
				names[i], reasons[i], messages[i])
		}
		setCVCondition(cv, configv1.OperatorUpgradeable, configv1.ConditionFalse, "ClusterOperatorsNotUpgradeable",
			"Multiple cluster operators should not be upgraded between minor versions:\n* "+strings.Join(lines, "\n* "), now)
	}
}

// SetClusterOperatorCondition makes a cluster operator of a spoke report a condition, for
// example Degraded=True, Available=False or Upgradeable=False, until
// ClearClusterOperatorConditions; the spoke is synced at once.
func (s *Simulator) SetClusterOperatorCondition(cluster, name string, t configv1.ClusterStatusConditionType,
	status configv1.ConditionStatus, reason, message string) error {
	return s.changeClusterOperators(cluster, name, func(o *ClusterOperators) {
		o.impose(ClusterOperatorCondition{Operator: name, Type: t, Status: status, Reason: reason, Message: message})
	})
}

// ClearClusterOperatorConditions drops the conditions imposed on a cluster operator of a spoke:
// it reports what its state gives again.
func (s *Simulator) ClearClusterOperatorConditions(cluster, name string) error {
	return s.changeClusterOperators(cluster, name, func(o *ClusterOperators) { delete(o.imposed, name) })
}

func (s *Simulator) changeClusterOperators(cluster, name string, f func(*ClusterOperators)) error {
	var unknown bool
	err := s.changeOperator(cluster, func(op Operator) bool {
		o, ok := op.(*ClusterOperators)
		if ok {
			unknown = !slices.Contains(o.Names, name)
			if !unknown {
				f(o)
			}
		}
		return ok
	})
	if err == nil && unknown {
		err = fmt.Errorf("simulated spoke %q has no cluster operator %q", cluster, name)
	}
	return err
}

// ClusterOperator returns a copy of a ClusterOperator of a spoke.
func (s *Simulator) ClusterOperator(cluster, name string) (*configv1.ClusterOperator, error) {
	obj, err := s.Object(cluster, clusterOperatorGVK, "", name)
	if err != nil {
		return nil, err
	}
	co := &configv1.ClusterOperator{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, co); err != nil {
		return nil, fmt.Errorf("ClusterOperator %s: %w", name, err)
	}
	return co, nil
}
