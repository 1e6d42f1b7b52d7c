package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// The simulated managed-upgrade-operator follows openshift/managed-upgrade-operator:
// api/v1alpha1/upgradeconfig_types.go (fields, phases, condition types),
// controllers/upgradeconfig/upgradeconfig_controller.go (history keyed by spec.desired.version,
// New/Pending until upgradeAt, Upgrading, completeTime on Upgraded), pkg/validation (upgradeAt
// is RFC 3339, version and channel or image and version, the version above the current one and
// offered), pkg/upgraders (the OSD upgrader's ordered steps, the failure policy and its
// FailedUpgrade condition), pkg/upgradesteps/runner.go (step conditions "<step> done" /
// "<step> is completed", "<step> not done" / "<step> still in progress"), and
// pkg/clusterversion/cv.go (commencing writes spec.channel and spec.desiredUpdate; the control
// plane is upgraded once history lists the version Completed).

// UpgradeConfigGVK is the kind of the managed-upgrade-operator's UpgradeConfig.
var UpgradeConfigGVK = schema.GroupVersionKind{Group: "upgrade.managed.openshift.io", Version: "v1alpha1", Kind: "UpgradeConfig"}

const (
	// ManagedUpgradeNamespace is the managed-upgrade-operator's namespace, where it reads its
	// UpgradeConfig.
	ManagedUpgradeNamespace = "openshift-managed-upgrade-operator"
	// UpgradeConfigName is the name of the one UpgradeConfig the operator acts on.
	UpgradeConfigName = "managed-upgrade-config"
)

// UpgradePhase is the phase of one upgrade in an UpgradeConfig's status.history.
type UpgradePhase string

// The phases of an upgrade.
const (
	UpgradePhaseNew       UpgradePhase = "New"
	UpgradePhasePending   UpgradePhase = "Pending"
	UpgradePhaseUpgrading UpgradePhase = "Upgrading"
	UpgradePhaseUpgraded  UpgradePhase = "Upgraded"
	UpgradePhaseFailed    UpgradePhase = "Failed"
)

// UpgradeConfigSpec is the spec of an UpgradeConfig.
type UpgradeConfigSpec struct {
	// Desired is the release to upgrade to.
	Desired UpgradeDesired `json:"desired"`
	// UpgradeAt is when the upgrade starts, in RFC 3339.
	UpgradeAt string `json:"upgradeAt"`
	// PDBForceDrainTimeout is how many minutes a drain blocked by a PodDisruptionBudget waits
	// before it is forced.
	PDBForceDrainTimeout int32 `json:"PDBForceDrainTimeout"`
	// Type is the upgrader: OSD or ARO.
	Type string `json:"type"`
	// CapacityReservation asks for an extra worker during the upgrade.
	CapacityReservation bool `json:"capacityReservation,omitempty"`
}

// UpgradeDesired names the release of an UpgradeConfig: a version and channel, or an image and
// version.
type UpgradeDesired struct {
	Version string `json:"version,omitempty"`
	Channel string `json:"channel,omitempty"`
	Image   string `json:"image,omitempty"`
}

// UpgradeConfigStatus is the status of an UpgradeConfig.
type UpgradeConfigStatus struct {
	// History has one entry per desired version, newest first.
	History []UpgradeHistory `json:"history,omitempty"`
}

// UpgradeHistory records one upgrade.
type UpgradeHistory struct {
	Version            string             `json:"version,omitempty"`
	PrecedingVersion   string             `json:"precedingVersion,omitempty"`
	Phase              UpgradePhase       `json:"phase"`
	Conditions         []UpgradeCondition `json:"conditions,omitempty"`
	StartTime          *metav1.Time       `json:"startTime,omitempty"`
	CompleteTime       *metav1.Time       `json:"completeTime,omitempty"`
	WorkerStartTime    *metav1.Time       `json:"workerStartTime,omitempty"`
	WorkerCompleteTime *metav1.Time       `json:"workerCompleteTime,omitempty"`
}

// UpgradeCondition records one step of an upgrade; the newest step comes first.
type UpgradeCondition struct {
	Type               string                 `json:"type"`
	Status             corev1.ConditionStatus `json:"status"`
	LastProbeTime      *metav1.Time           `json:"lastProbeTime,omitempty"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
	StartTime          *metav1.Time           `json:"startTime,omitempty"`
	CompleteTime       *metav1.Time           `json:"completeTime,omitempty"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
}

// NewUpgradeConfig returns the UpgradeConfig that asks the managed-upgrade-operator for an OSD
// upgrade to desired at upgradeAt.
func NewUpgradeConfig(desired UpgradeDesired, upgradeAt time.Time) *unstructured.Unstructured {
	spec := map[string]any{
		"desired":              map[string]any{},
		"upgradeAt":            upgradeAt.UTC().Format(time.RFC3339),
		"PDBForceDrainTimeout": int64(60),
		"type":                 "OSD",
	}
	for k, v := range map[string]string{"version": desired.Version, "channel": desired.Channel, "image": desired.Image} {
		if v != "" {
			spec["desired"].(map[string]any)[k] = v
		}
	}
	uc := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	uc.SetGroupVersionKind(UpgradeConfigGVK)
	uc.SetNamespace(ManagedUpgradeNamespace)
	uc.SetName(UpgradeConfigName)
	return uc
}

// ManagedUpgradeBehaviour says how a simulated managed-upgrade-operator carries out upgrades.
type ManagedUpgradeBehaviour struct {
	// Fail makes each upgrade fail as soon as it is Upgrading, before the ClusterVersion is
	// touched, as the OSD upgrader fails an upgrade that did not start in its window.
	Fail bool
	// Stall keeps each upgrade Upgrading at its pre-upgrade health check, never commencing.
	Stall bool
	// UpgradeWindow is how long after upgradeAt an upgrade may still commence (the operator's
	// upgradeWindow.timeOut); later it stays Pending, or fails if it was Upgrading. Zero: no
	// limit.
	UpgradeWindow time.Duration
}

// ManagedUpgradeOperator simulates the managed-upgrade-operator with its local policy provider:
// it carries out the UpgradeConfig "managed-upgrade-config" in its namespace. The upgrade of
// spec.desired.version gets a status.history entry, New first; it stays New while the
// UpgradeConfig is invalid (upgradeAt not RFC 3339, neither version and channel nor image and
// version, the version not above the cluster's, or not offered); it is Pending until upgradeAt,
// then Upgrading through the OSD upgrader's steps: the pre-upgrade health check waits while a
// critical alert fires or a ClusterOperator is Degraded or unavailable, commencing writes the
// ClusterVersion's spec.channel and spec.desiredUpdate (the version must be in
// availableUpdates or conditionalUpdates, unless the simulated update service offers nothing),
// and the control plane is upgraded once the ClusterVersion history lists the version
// Completed. The upgrade is Upgraded after the post-upgrade health check, or Failed when the
// cluster-version operator reports Failing=True for it or the behaviour says so.
type ManagedUpgradeOperator struct {
	// Behaviour of the operator.
	Behaviour ManagedUpgradeBehaviour
	// alerts are the spoke's firing alerts, read by the health checks.
	alerts *alerts
	// seeded is set once the operator's namespace exists.
	seeded bool
}

// newManagedUpgradeOperator returns a simulated managed-upgrade-operator that reads the spoke's
// firing alerts (nil: none fire).
func newManagedUpgradeOperator(b ManagedUpgradeBehaviour, firing *alerts) *ManagedUpgradeOperator {
	if firing == nil {
		firing = &alerts{}
	}
	return &ManagedUpgradeOperator{Behaviour: b, alerts: firing}
}

// Step reconciles the UpgradeConfig at now and returns when the operator wants to run again:
// at upgradeAt while Pending.
func (m *ManagedUpgradeOperator) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	if !m.seeded {
		if err := ensureNamespaces(objects, ManagedUpgradeNamespace); err != nil {
			return 0, err
		}
		m.seeded = true
	}
	obj, err := objects.Get(UpgradeConfigGVK, ManagedUpgradeNamespace, UpgradeConfigName)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var spec UpgradeConfigSpec
	var status UpgradeConfigStatus
	if err := errors.Join(decodeField(obj, "spec", &spec), decodeField(obj, "status", &status)); err != nil {
		return 0, err
	}
	again, err := m.Reconcile(objects, &spec, &status, now)
	if err != nil {
		return 0, err
	}
	err = storeStatus(objects, obj, &status)
	return again, err
}

// Reconcile advances the upgrade of spec.desired.version in status at now, reading and writing
// the spoke's other objects, and returns when it wants to run again.
func (m *ManagedUpgradeOperator) Reconcile(objects configpolicy.Store, spec *UpgradeConfigSpec,
	status *UpgradeConfigStatus, now time.Time) (time.Duration, error) {
	i := slices.IndexFunc(status.History, func(h UpgradeHistory) bool { return h.Version == spec.Desired.Version })
	if i < 0 {
		status.History = append([]UpgradeHistory{{Version: spec.Desired.Version, Phase: UpgradePhaseNew}}, status.History...)
		i = 0
	}
	h := &status.History[i]
	cv, err := getClusterVersion(objects)
	if err != nil {
		return 0, err
	}
	run := &upgradeRun{m: m, objects: objects, spec: spec, history: h, cv: cv, now: now}
	switch h.Phase {
	case UpgradePhaseNew, UpgradePhasePending:
		return run.schedule()
	case UpgradePhaseUpgrading:
		return run.upgrade()
	}
	return 0, nil
}

// upgradeRun is one reconcile of one upgrade.
type upgradeRun struct {
	m       *ManagedUpgradeOperator
	objects configpolicy.Store
	spec    *UpgradeConfigSpec
	history *UpgradeHistory
	cv      *configv1.ClusterVersion
	now     time.Time
	// commencedNow is set when this run wrote the ClusterVersion.
	commencedNow bool
}

// schedule keeps a valid upgrade Pending until upgradeAt, then starts it.
func (r *upgradeRun) schedule() (time.Duration, error) {
	if !r.valid() {
		return 0, nil
	}
	at, _ := time.Parse(time.RFC3339, r.spec.UpgradeAt)
	if r.now.Before(at) {
		r.history.Phase = UpgradePhasePending
		return at.Sub(r.now), nil
	}
	if w := r.m.Behaviour.UpgradeWindow; w > 0 && !at.Add(w).After(r.now) {
		r.history.Phase = UpgradePhasePending
		return 0, nil
	}
	start := metav1.NewTime(r.now)
	r.history.Phase, r.history.StartTime = UpgradePhaseUpgrading, &start
	r.history.PrecedingVersion = r.cv.Status.Desired.Version
	return r.upgrade()
}

// valid tells whether the UpgradeConfig passes the operator's validation and names an
// available update.
func (r *upgradeRun) valid() bool {
	d := r.spec.Desired
	if _, err := time.Parse(time.RFC3339, r.spec.UpgradeAt); err != nil || d.Version == "" {
		return false
	}
	byImage := d.Image != "" && d.Channel == ""
	if !byImage && (d.Image != "" || d.Channel == "") {
		return false
	}
	desired, err := utilversion.ParseGeneric(d.Version)
	if err != nil || !desired.GreaterThan(currentVersion(r.cv)) {
		return false
	}
	return byImage || offeredUpdate(r.cv, d.Version)
}

// currentVersion is the version of the cluster's newest completed update.
func currentVersion(cv *configv1.ClusterVersion) *utilversion.Version {
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate {
			if v, err := utilversion.ParseGeneric(h.Version); err == nil {
				return v
			}
		}
	}
	return utilversion.MajorMinor(0, 0)
}

// offeredUpdate tells whether the ClusterVersion offers version; when it offers nothing at all
// (a simulator without an update service), any version counts as offered, as the simulated
// cluster-version operator accepts any.
func offeredUpdate(cv *configv1.ClusterVersion, version string) bool {
	if len(cv.Status.AvailableUpdates) == 0 && len(cv.Status.ConditionalUpdates) == 0 {
		return true
	}
	_, ok := offered(cv, version)
	return ok
}

// upgradeStep is one step of the OSD upgrader; it reports whether it is done.
type upgradeStep struct {
	name string
	run  func(*upgradeRun) (bool, error)
}

// The condition types of the upgrade steps, as the managed-upgrade-operator names them.
const (
	startedNotificationStep    = "StartedNotificationSent"
	upgradeableStep            = "IsClusterUpgradable"
	preHealthCheckStep         = "ClusterHealthyBeforeUpgrade"
	commenceStep               = "UpgradeCommenced"
	controlPlaneUpgradedStep   = "ControlPlaneUpgraded"
	workersUpgradedStep        = "WorkerNodesUpgraded"
	postHealthCheckStep        = "ClusterHealthyAfterUpgrade"
	completedNotificationStep  = "CompletedNotificationSent"
	conditionFailedUpgrade     = "FailedUpgrade"
	reasonFailedUpgrade        = "Upgrade failed"
	messageFailedUpgradeNotice = "FailedUpgrade notification sent"
)

func always(*upgradeRun) (bool, error) { return true, nil }

// osdSteps are the OSD upgrader's steps, in order.
var osdSteps = []upgradeStep{
	{startedNotificationStep, always},
	{upgradeableStep, (*upgradeRun).upgradeable},
	{preHealthCheckStep, (*upgradeRun).preHealthCheck},
	{"ExternalDependenciesAvailable", always},
	{"ComputeCapacityReserved", always},
	{"ControlPlaneMaintenanceWindowCreated", always},
	{commenceStep, (*upgradeRun).commence},
	{controlPlaneUpgradedStep, (*upgradeRun).controlPlaneUpgraded},
	{"ControlPlaneMaintenanceWindowRemoved", always},
	{"WorkersMaintenanceWindowCreated", always},
	{workersUpgradedStep, (*upgradeRun).workersUpgraded},
	{"ComputeCapacityRemoved", always},
	{"WorkersMaintenanceWindowRemoved", always},
	{postHealthCheckStep, (*upgradeRun).healthy},
	{"PostUpgradeTasksCompleted", always},
	{completedNotificationStep, always},
}

// upgrade runs the steps in order until one is not done; all done, the upgrade is Upgraded.
func (r *upgradeRun) upgrade() (time.Duration, error) {
	if failed, message := r.shouldFail(); failed {
		r.fail(message)
		return 0, nil
	}
	for _, s := range osdSteps {
		done, err := s.run(r)
		switch {
		case err != nil:
			r.setCondition(s.name, false, s.name+" not done", err.Error())
			return r.again(), nil
		case !done:
			r.setCondition(s.name, false, s.name+" not done", s.name+" still in progress")
			return r.again(), nil
		}
		r.setCondition(s.name, true, s.name+" done", s.name+" is completed")
	}
	done := metav1.NewTime(r.now)
	r.history.Phase, r.history.CompleteTime = UpgradePhaseUpgraded, &done
	return 0, nil
}

// again is when an upgrade that is not done wants to run again: at once after it commenced
// (for the cluster-version operator to see the ClusterVersion), at the end of the window
// before it commenced.
func (r *upgradeRun) again() time.Duration {
	if r.commencedNow {
		return reactDelay
	}
	if w := r.m.Behaviour.UpgradeWindow; w > 0 && !r.commenced() && r.history.StartTime != nil {
		return max(r.history.StartTime.Add(w).Sub(r.now), 0)
	}
	return 0
}

// shouldFail tells whether the upgrade fails now: by behaviour or when its window passed before
// it commenced, or when the cluster-version operator fails the update it commenced.
func (r *upgradeRun) shouldFail() (bool, string) {
	if !r.commenced() {
		w := r.m.Behaviour.UpgradeWindow
		expired := w > 0 && r.history.StartTime != nil && !r.history.StartTime.Add(w).After(r.now)
		return r.m.Behaviour.Fail || expired, ""
	}
	failing := findCVCondition(r.cv, "Failing")
	if failing == nil || failing.Status != configv1.ConditionTrue || r.upgradeCompleted() {
		return false, ""
	}
	return len(r.cv.Status.History) > 0 && r.cv.Status.History[0].Version == r.spec.Desired.Version, failing.Message
}

// fail moves the upgrade to Failed, recording what failed.
func (r *upgradeRun) fail(message string) {
	if message != "" {
		r.setCondition(controlPlaneUpgradedStep, false, controlPlaneUpgradedStep+" not done", message)
	}
	r.setCondition(conditionFailedUpgrade, true, reasonFailedUpgrade, messageFailedUpgradeNotice)
	r.history.Phase = UpgradePhaseFailed
}

// commenced tells whether the ClusterVersion already asks for the desired release.
func (r *upgradeRun) commenced() bool {
	du, d := r.cv.Spec.DesiredUpdate, r.spec.Desired
	if du == nil {
		return false
	}
	if d.Image != "" {
		return du.Image == d.Image
	}
	return du.Version == d.Version
}

func (r *upgradeRun) upgradeCompleted() bool {
	return slices.ContainsFunc(r.cv.Status.History, func(h configv1.UpdateHistory) bool {
		return h.Version == r.spec.Desired.Version && h.State == configv1.CompletedUpdate
	})
}

// upgradeable refuses a minor-version upgrade while the ClusterVersion is Upgradeable=False.
func (r *upgradeRun) upgradeable() (bool, error) {
	if r.commenced() {
		return true, nil
	}
	c := findCVCondition(r.cv, configv1.OperatorUpgradeable)
	desired, err := utilversion.ParseGeneric(r.spec.Desired.Version)
	if err != nil {
		return false, fmt.Errorf("desired version: %w", err)
	}
	current := currentVersion(r.cv)
	if c == nil || c.Status != configv1.ConditionFalse || desired.Major() < current.Major() || desired.Minor() <= current.Minor() {
		return true, nil
	}
	at, _ := time.Parse(time.RFC3339, r.spec.UpgradeAt)
	return false, fmt.Errorf("cluster upgrade to version %s on %s has been cancelled: %s: %s",
		r.spec.Desired.Version, at.UTC().Format(time.UnixDate), c.Reason, c.Message)
}

// preHealthCheck waits for a healthy cluster before the upgrade commences; with the Stall
// behaviour it never passes.
func (r *upgradeRun) preHealthCheck() (bool, error) {
	if r.commenced() {
		return true, nil
	}
	if r.m.Behaviour.Stall {
		return false, nil
	}
	return r.healthy()
}

// healthy is the health check: no critical alert firing, no ClusterOperator Degraded or
// unavailable.
func (r *upgradeRun) healthy() (bool, error) {
	if len(r.m.alerts.critical()) > 0 {
		return false, nil
	}
	degraded, err := degradedOperators(r.objects)
	return len(degraded) == 0, err
}

// degradedOperators returns the ClusterOperators that are Degraded=True or Available=False.
func degradedOperators(objects configpolicy.Store) ([]string, error) {
	operators, err := objects.List(clusterOperatorGVK, "")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, obj := range operators {
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, c := range conditions {
			m, _ := c.(map[string]any)
			t, s := m["type"], m["status"]
			if (t == string(configv1.OperatorDegraded) && s == string(configv1.ConditionTrue)) ||
				(t == string(configv1.OperatorAvailable) && s == string(configv1.ConditionFalse)) {
				names = append(names, obj.GetName())
				break
			}
		}
	}
	return names, nil
}

// commence writes the desired release into the ClusterVersion, once it is offered.
func (r *upgradeRun) commence() (bool, error) {
	if r.commenced() {
		return true, nil
	}
	d := r.spec.Desired
	update := &configv1.Update{Image: d.Image}
	if d.Image == "" {
		if !offeredUpdate(r.cv, d.Version) {
			return false, nil
		}
		update.Version = d.Version
		if c := slices.IndexFunc(r.cv.Status.ConditionalUpdates, func(u configv1.ConditionalUpdate) bool {
			return u.Release.Version == d.Version
		}); c >= 0 {
			update.Image = r.cv.Status.ConditionalUpdates[c].Release.Image
		}
		r.cv.Spec.Channel = d.Channel
	}
	r.cv.Spec.DesiredUpdate = update
	obj, err := toUnstructured(r.cv)
	if err != nil {
		return false, err
	}
	if err := r.objects.Update(obj); err != nil {
		return false, fmt.Errorf("commencing the upgrade to %s: %w", d.Version, err)
	}
	r.commencedNow = true
	return true, nil
}

// controlPlaneUpgraded waits for the ClusterVersion history to list the version Completed.
func (r *upgradeRun) controlPlaneUpgraded() (bool, error) {
	return r.upgradeCompleted(), nil
}

// workersUpgraded records the worker phase, which the simulation completes at once.
func (r *upgradeRun) workersUpgraded() (bool, error) {
	if r.history.WorkerStartTime == nil {
		t := metav1.NewTime(r.now)
		r.history.WorkerStartTime, r.history.WorkerCompleteTime = &t, &t
	}
	return true, nil
}

// setCondition records a step's condition: a new one first, times moved only on change.
func (r *upgradeRun) setCondition(t string, done bool, reason, message string) {
	now := metav1.NewTime(r.now)
	status := corev1.ConditionFalse
	if done {
		status = corev1.ConditionTrue
	}
	i := slices.IndexFunc(r.history.Conditions, func(c UpgradeCondition) bool { return c.Type == t })
	if i < 0 {
		r.history.Conditions = append([]UpgradeCondition{{Type: t, StartTime: &now, LastTransitionTime: &now}}, r.history.Conditions...)
		i = 0
	}
	c := &r.history.Conditions[i]
	if c.Status == status && c.Reason == reason && c.Message == message {
		return
	}
	if c.Status != status {
		c.LastTransitionTime = &now
	}
	c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, message, &now
	if done && c.CompleteTime == nil {
		c.CompleteTime = &now
	}
}

// SetManagedUpgradeBehaviour changes how a spoke's managed-upgrade-operator carries out
// upgrades.
func (s *Simulator) SetManagedUpgradeBehaviour(cluster string, b ManagedUpgradeBehaviour) error {
	return s.changeOperator(cluster, func(op Operator) bool {
		m, ok := op.(*ManagedUpgradeOperator)
		if ok {
			m.Behaviour = b
		}
		return ok
	})
}

// UpgradeConfig returns the spec and status of a spoke's UpgradeConfig.
func (s *Simulator) UpgradeConfig(cluster string) (*UpgradeConfigSpec, *UpgradeConfigStatus, error) {
	obj, err := s.Object(cluster, UpgradeConfigGVK, ManagedUpgradeNamespace, UpgradeConfigName)
	if err != nil {
		return nil, nil, err
	}
	spec, status := &UpgradeConfigSpec{}, &UpgradeConfigStatus{}
	if err := errors.Join(decodeField(obj, "spec", spec), decodeField(obj, "status", status)); err != nil {
		return nil, nil, err
	}
	return spec, status, nil
}
