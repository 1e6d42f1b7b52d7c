package sim

import (
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// Behaviour says how a simulated cluster-version operator carries out an update.
type Behaviour struct {
	// Duration is how long an update stays Partial before it completes.
	Duration time.Duration
	// Fail makes the update fail: history stays Partial and Failing turns True.
	Fail bool
	// Stall makes the update never finish: history stays Partial, Progressing stays True.
	Stall bool
	// DegradeAfterUpgrade, when above zero, is the API error ratio the cluster's metrics
	// report once an update completed (metrics.go): the latest entry of its ClusterVersion
	// history Completed at a version other than the one the cluster was installed at.
	DegradeAfterUpgrade float64
}

// Updates is what the update service offers a cluster: the cluster-version operator writes
// it into status.availableUpdates and status.conditionalUpdates.
type Updates struct {
	Available   []configv1.Release
	Conditional []configv1.ConditionalUpdate
}

// UpdateSource answers which updates the update service offers a cluster, given its
// ClusterVersion (channel, current version, the conditional updates it reported last). A nil
// UpdateSource offers nothing and lets any version be targeted.
type UpdateSource func(cluster string, cv *configv1.ClusterVersion, now time.Time) (Updates, error)

// CVO is a simulated cluster-version operator for one cluster.
type CVO struct {
	Cluster   string
	Behaviour Behaviour
	Updates   UpdateSource
}

// Image is the release image the simulator gives a version when nothing else names one.
func Image(version string) string {
	return "quay.io/openshift-release-dev/ocp-release:" + version + "-x86_64"
}

// NewClusterVersion returns the ClusterVersion of a cluster installed at version on channel,
// as the cluster-version operator reports it once the installation completed.
func NewClusterVersion(version, channel string, installed time.Time) *configv1.ClusterVersion {
	started := metav1.NewTime(installed.Add(-time.Hour))
	done := metav1.NewTime(installed)
	release := configv1.Release{Version: version, Image: Image(version), Channels: []string{channel}}
	cv := &configv1.ClusterVersion{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: "ClusterVersion"},
		ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec:       configv1.ClusterVersionSpec{ClusterID: "00000000-0000-0000-0000-000000000000", Channel: channel},
		Status: configv1.ClusterVersionStatus{
			Desired: release,
			History: []configv1.UpdateHistory{{
				State: configv1.CompletedUpdate, StartedTime: started, CompletionTime: &done,
				Version: version, Image: release.Image, Verified: false,
			}},
		},
	}
	setCVCondition(cv, configv1.OperatorAvailable, configv1.ConditionTrue, "", "Done applying "+version, done)
	setCVCondition(cv, configv1.OperatorProgressing, configv1.ConditionFalse, "", "Cluster version is "+version, done)
	setCVCondition(cv, "Failing", configv1.ConditionFalse, "", "", done)
	return cv
}

// Step runs the operator on a spoke's objects: it steps the ClusterVersion "version" and
// stores it when it changed.
func (o *CVO) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	cv, err := getClusterVersion(objects)
	if err != nil {
		return 0, err
	}
	before := cv.DeepCopy()
	again, err := o.StepClusterVersion(cv, now)
	if err != nil || equalJSON(before, cv) {
		return again, err
	}
	obj, err := toUnstructured(cv)
	if err != nil {
		return 0, err
	}
	return again, objects.Update(obj)
}

// RetryRefused is how soon the simulated cluster-version operator tries again an update it
// refused because the update service did not offer the version. The real operator tries the
// desired update again on each sync and fetches the update service again every few minutes,
// so a release published after its last fetch is refused for a while, then accepted.
const RetryRefused = time.Second

// StepClusterVersion advances the operator by one step at time now and returns when it wants
// to be called again (zero: only when the ClusterVersion changes). It starts an update when
// spec.desiredUpdate names a version other than status.desired, and completes a Partial
// update once the behaviour's duration has passed since it started. Whenever no update is
// under way it fetches what the update service offers; one it refused it tries again after
// RetryRefused, on what it fetched.
func (o *CVO) StepClusterVersion(cv *configv1.ClusterVersion, now time.Time) (time.Duration, error) {
	b := o.Behaviour
	refused := false
	if target, ok := newTarget(cv); ok {
		refused = !startUpdate(cv, target, o.Updates != nil, now)
	}
	if len(cv.Status.History) == 0 || cv.Status.History[0].State != configv1.PartialUpdate {
		if err := o.refreshUpdates(cv, now); err != nil || !refused {
			return 0, err
		}
		return RetryRefused, nil
	}
	current := &cv.Status.History[0]
	switch {
	case b.Stall:
		return 0, nil
	case b.Fail:
		setCVCondition(cv, "Failing", configv1.ConditionTrue, "ClusterOperatorDegraded",
			"Cluster operator machine-config is degraded", metav1.NewTime(now))
		return 0, nil
	}
	if left := current.StartedTime.Add(b.Duration).Sub(now); left > 0 {
		return left, nil
	}
	done := metav1.NewTime(now)
	current.State, current.CompletionTime = configv1.CompletedUpdate, &done
	setCVCondition(cv, configv1.OperatorAvailable, configv1.ConditionTrue, "", "Done applying "+current.Version, done)
	setCVCondition(cv, configv1.OperatorProgressing, configv1.ConditionFalse, "", "Cluster version is "+current.Version, done)
	return 0, o.refreshUpdates(cv, now)
}

// newTarget returns the release spec.desiredUpdate asks for when it differs from the one
// the operator works towards.
func newTarget(cv *configv1.ClusterVersion) (configv1.Release, bool) {
	du := cv.Spec.DesiredUpdate
	if du == nil || (du.Version == "" && du.Image == "") {
		return configv1.Release{}, false
	}
	if du.Version == cv.Status.Desired.Version && (du.Image == "" || du.Image == cv.Status.Desired.Image) {
		return configv1.Release{}, false
	}
	return configv1.Release{Version: du.Version, Image: du.Image}, true
}

// startUpdate accepts a target the way the cluster-version operator does: a version must be
// offered by the update service (available or conditional) unless an image is given. It
// reports whether it accepted the target.
func startUpdate(cv *configv1.ClusterVersion, target configv1.Release, graphKnown bool, now time.Time) bool {
	if release, ok := offered(cv, target.Version); ok {
		target = release
	} else if graphKnown && target.Image == "" {
		setCVCondition(cv, "ReleaseAccepted", configv1.ConditionFalse, "VersionNotFound",
			fmt.Sprintf("Unable to retrieve available updates: version %s not found", target.Version), metav1.NewTime(now))
		return false
	}
	if target.Image == "" {
		target.Image = Image(target.Version)
	}
	started := metav1.NewTime(now)
	cv.Status.Desired = target
	cv.Status.History = append([]configv1.UpdateHistory{{
		State: configv1.PartialUpdate, StartedTime: started, Version: target.Version, Image: target.Image,
	}}, cv.Status.History...)
	setCVCondition(cv, "ReleaseAccepted", configv1.ConditionTrue, "PayloadLoaded",
		fmt.Sprintf("Payload loaded version=%q image=%q", target.Version, target.Image), started)
	setCVCondition(cv, configv1.OperatorProgressing, configv1.ConditionTrue, "", "Working towards "+target.Version, started)
	setCVCondition(cv, "Failing", configv1.ConditionFalse, "", "", started)
	return true
}

func offered(cv *configv1.ClusterVersion, version string) (configv1.Release, bool) {
	for _, r := range cv.Status.AvailableUpdates {
		if r.Version == version {
			return r, true
		}
	}
	for _, c := range cv.Status.ConditionalUpdates {
		if c.Release.Version == version {
			return c.Release, true
		}
	}
	return configv1.Release{}, false
}

// refreshUpdates writes what the update service offers the cluster's current version.
func (o *CVO) refreshUpdates(cv *configv1.ClusterVersion, now time.Time) error {
	if o.Updates == nil {
		return nil
	}
	u, err := o.Updates(o.Cluster, cv, now)
	if err != nil {
		return fmt.Errorf("updates for %s on %s: %w", cv.Status.Desired.Version, cv.Spec.Channel, err)
	}
	cv.Status.AvailableUpdates, cv.Status.ConditionalUpdates = u.Available, u.Conditional
	return nil
}

func setCVCondition(cv *configv1.ClusterVersion, t configv1.ClusterStatusConditionType, s configv1.ConditionStatus,
	reason, message string, now metav1.Time) {
	for i := range cv.Status.Conditions {
		c := &cv.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != s {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = s, reason, message
		return
	}
	cv.Status.Conditions = append(cv.Status.Conditions, configv1.ClusterOperatorStatusCondition{
		Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: now,
	})
}
