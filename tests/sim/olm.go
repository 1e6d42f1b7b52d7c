package sim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cgu-operator/cgu-operator/tests/sim/configpolicy"
)

// The simulated OLM follows operator-framework/api pkg/operators/v1alpha1 (subscription_types.go,
// installplan_types.go, clusterserviceversion_types.go: field names, states, phases, reasons) and
// operator-lifecycle-manager's catalog operator (pkg/controller/operators/catalog/operator.go:
// createInstallPlan names plans "install-<5 characters>", sets spec.approved for Automatic
// approval and starts them RequiresApproval or Installing; updateSubscriptionStatus and
// ensureSubscriptionCSVState set installPlanRef, the deprecated installplan reference, state
// UpgradePending, then installedCSV and AtLatestKnown or UpgradeAvailable; subscription/state.go:
// the InstallPlanPending condition carries the plan's phase as its reason, InstallPlanFailed
// the Installed condition's reason).

// The kinds of OLM.
var (
	SubscriptionGVK          = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "Subscription"}
	InstallPlanGVK           = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "InstallPlan"}
	ClusterServiceVersionGVK = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "ClusterServiceVersion"}
	catalogSourceGVK         = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1alpha1", Kind: "CatalogSource"}
	operatorGroupGVK         = schema.GroupVersionKind{Group: "operators.coreos.com", Version: "v1", Kind: "OperatorGroup"}
)

// Namespaces and names OLM uses on OpenShift.
const (
	// GlobalOperatorsNamespace holds the operators installed for all namespaces.
	GlobalOperatorsNamespace = "openshift-operators"
	// MarketplaceNamespace holds the default catalog sources.
	MarketplaceNamespace = "openshift-marketplace"
	// DefaultCatalogSource is the catalog source a simulated operator comes from unless named.
	DefaultCatalogSource = "redhat-operators"
)

// InstallPlan approval modes (Subscription spec.installPlanApproval, InstallPlan spec.approval).
const (
	ApprovalAutomatic = "Automatic"
	ApprovalManual    = "Manual"
)

// Subscription states (status.state).
const (
	SubscriptionStateUpgradeAvailable = "UpgradeAvailable"
	SubscriptionStateUpgradePending   = "UpgradePending"
	SubscriptionStateAtLatest         = "AtLatestKnown"
)

// InstallPlan phases (status.phase).
const (
	InstallPlanPhaseRequiresApproval = "RequiresApproval"
	InstallPlanPhaseInstalling       = "Installing"
	InstallPlanPhaseComplete         = "Complete"
	InstallPlanPhaseFailed           = "Failed"
)

// ClusterServiceVersion phases (status.phase).
const (
	CSVPhaseInstalling = "Installing"
	CSVPhaseSucceeded  = "Succeeded"
	CSVPhaseReplacing  = "Replacing"
	CSVPhaseFailed     = "Failed"
)

// InstalledOperator is an OLM operator installed on a spoke when it joins: its Subscription and
// its installed ClusterServiceVersion.
type InstalledOperator struct {
	// Package is the operator's package (Subscription spec.name).
	Package string
	// Subscription is the Subscription's name; default Package.
	Subscription string
	// Namespace the operator runs in; default openshift-operators.
	Namespace string
	// Channel the Subscription follows.
	Channel string
	// Source is the CatalogSource in openshift-marketplace; default redhat-operators.
	Source string
	// InstalledCSV is the ClusterServiceVersion installed, for example "foo-operator.v1.2.0".
	InstalledCSV string
	// Available are the newer CSVs the channel offers, oldest first, each replacing the one
	// before: OLM upgrades to them one at a time.
	Available []string
	// Approval is the Subscription's installPlanApproval, Manual or Automatic; default
	// Automatic.
	Approval string
}

// CatalogChannel is what a catalog source offers in one channel of a package.
type CatalogChannel struct {
	// Package and Channel name the channel.
	Package, Channel string
	// Source is the CatalogSource; default redhat-operators.
	Source string
	// CSVs of the channel, oldest first, each replacing the one before; the last is its head.
	CSVs []string
}

// OLMBehaviour says how the simulated OLM installs bundles.
type OLMBehaviour struct {
	// InstallDuration is how long an approved InstallPlan stays Installing.
	InstallDuration time.Duration
	// Fail makes approved InstallPlans fail: InstallPlan Failed, the new CSV Failed.
	Fail bool
}

// OLM simulates the Operator Lifecycle Manager of a spoke. It installs the spoke's operators
// when it first runs (namespace, CatalogSource, OperatorGroup, a Subscription AtLatestKnown and
// its CSV Succeeded). For every Subscription, including those created by policies, it resolves
// the next CSV of the subscribed channel (startingCSV or the head for a new Subscription, the
// CSV replacing the installed one otherwise) into an InstallPlan: RequiresApproval with
// spec.approved false for Manual approval, Installing for Automatic; the Subscription turns
// UpgradePending with installPlanRef and currentCSV set. Once the plan is approved it installs:
// the new CSV Installing (the old one Replacing) for the behaviour's duration, then the plan
// Complete, the new CSV Succeeded, the old one deleted, and the Subscription's installedCSV
// updated and its state AtLatestKnown, or on to the next CSV of the channel.
type OLM struct {
	// Behaviour of the simulated OLM.
	Behaviour OLMBehaviour
	// Catalog is what the spoke's catalog sources offer besides the channels of the installed
	// operators.
	Catalog []CatalogChannel
	// installed are the operators installed when the spoke joins.
	installed []InstalledOperator
	seeded    bool
}

// NewOLM returns the simulated OLM of a spoke: its catalog offers spec.Catalog and, for each
// installed operator, its channel from the installed CSV to the newest available one.
func NewOLM(spec SpokeSpec) *OLM {
	o := &OLM{Behaviour: spec.OLM, Catalog: slices.Clone(spec.Catalog)}
	for _, op := range spec.Operators {
		o.installed = append(o.installed, withDefaults(op))
	}
	return o
}

func withDefaults(op InstalledOperator) InstalledOperator {
	if op.Subscription == "" {
		op.Subscription = op.Package
	}
	if op.Namespace == "" {
		op.Namespace = GlobalOperatorsNamespace
	}
	if op.Source == "" {
		op.Source = DefaultCatalogSource
	}
	if op.Approval == "" {
		op.Approval = ApprovalAutomatic
	}
	return op
}

// channel returns the CSVs a channel offers, oldest first, merged over the catalog's entries and
// the channels of the installed operators.
func (o *OLM) channel(pkg, channel, source string) []string {
	var csvs []string
	offers := slices.Clone(o.Catalog)
	for _, in := range o.installed {
		offers = append(offers, CatalogChannel{Package: in.Package, Channel: in.Channel, Source: in.Source,
			CSVs: append([]string{in.InstalledCSV}, in.Available...)})
	}
	for _, c := range offers {
		src := c.Source
		if src == "" {
			src = DefaultCatalogSource
		}
		if c.Package != pkg || c.Channel != channel || (source != "" && src != source) {
			continue
		}
		for _, csv := range c.CSVs {
			if !slices.Contains(csvs, csv) {
				csvs = append(csvs, csv)
			}
		}
	}
	return csvs
}

// Step reconciles every Subscription of the spoke at now and returns when an install in
// progress completes.
func (o *OLM) Step(objects configpolicy.Store, now time.Time) (time.Duration, error) {
	if !o.seeded {
		if err := o.seed(objects, now); err != nil {
			return 0, err
		}
		o.seeded = true
	}
	subs, err := objects.List(SubscriptionGVK, "")
	if err != nil {
		return 0, err
	}
	var again time.Duration
	for _, sub := range subs {
		a, err := o.reconcileSubscription(objects, sub.GetNamespace(), sub.GetName(), now)
		if err != nil {
			return 0, fmt.Errorf("reconciling Subscription %s/%s: %w", sub.GetNamespace(), sub.GetName(), err)
		}
		again = soonest(again, a)
	}
	return again, nil
}

// seed installs the spoke's operators as they run when it joins.
func (o *OLM) seed(objects configpolicy.Store, now time.Time) error {
	namespaces := []string{GlobalOperatorsNamespace, MarketplaceNamespace, "openshift-operator-lifecycle-manager"}
	sources := []string{DefaultCatalogSource}
	for _, op := range o.installed {
		namespaces, sources = append(namespaces, op.Namespace), append(sources, op.Source)
	}
	for _, c := range o.Catalog {
		if c.Source != "" {
			sources = append(sources, c.Source)
		}
	}
	if err := ensureNamespaces(objects, namespaces...); err != nil {
		return err
	}
	for _, src := range sources {
		if err := createIfMissing(objects, catalogSource(src)); err != nil {
			return err
		}
	}
	if err := createIfMissing(objects, operatorGroup("global-operators", GlobalOperatorsNamespace)); err != nil {
		return err
	}
	for _, op := range o.installed {
		if err := o.seedOperator(objects, op, now); err != nil {
			return err
		}
	}
	return nil
}

func (o *OLM) seedOperator(objects configpolicy.Store, op InstalledOperator, now time.Time) error {
	if op.Namespace != GlobalOperatorsNamespace {
		if err := createIfMissing(objects, operatorGroup(op.Namespace, op.Namespace)); err != nil {
			return err
		}
	}
	sub := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"name": op.Package, "channel": op.Channel, "source": op.Source, "sourceNamespace": MarketplaceNamespace,
		"installPlanApproval": op.Approval,
	}}}
	sub.SetGroupVersionKind(SubscriptionGVK)
	sub.SetNamespace(op.Namespace)
	sub.SetName(op.Subscription)
	status := subscriptionStatus{CurrentCSV: op.InstalledCSV, InstalledCSV: op.InstalledCSV,
		State: SubscriptionStateAtLatest, LastUpdated: metav1.NewTime(now)}
	status.setCondition(conditionCatalogSourcesUnhealthy, corev1.ConditionFalse, "AllCatalogSourcesHealthy",
		"all available catalogsources are healthy", now)
	m, err := toMap(&status)
	if err != nil {
		return err
	}
	sub.Object["status"] = m
	if err := createIfMissing(objects, sub); err != nil {
		return err
	}
	csv := newCSV(op.Namespace, op.InstalledCSV, op.Package, "")
	setCSVPhase(csv, CSVPhaseSucceeded, "InstallSucceeded", "install strategy completed with no errors", now)
	return createIfMissing(objects, csv)
}

func catalogSource(name string) *unstructured.Unstructured {
	cs := &unstructured.Unstructured{Object: map[string]any{
		"spec":   map[string]any{"sourceType": "grpc", "displayName": name, "publisher": "Red Hat"},
		"status": map[string]any{"connectionState": map[string]any{"lastObservedState": "READY"}},
	}}
	cs.SetGroupVersionKind(catalogSourceGVK)
	cs.SetNamespace(MarketplaceNamespace)
	cs.SetName(name)
	return cs
}

func operatorGroup(name, namespace string) *unstructured.Unstructured {
	spec := map[string]any{}
	targets := []any{""}
	if namespace != GlobalOperatorsNamespace {
		spec["targetNamespaces"] = []any{namespace}
		targets = []any{namespace}
	}
	og := &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": map[string]any{"namespaces": targets}}}
	og.SetGroupVersionKind(operatorGroupGVK)
	og.SetNamespace(namespace)
	og.SetName(name)
	return og
}

// maxHops bounds how many transitions one Subscription makes in one step.
const maxHops = 16

// reconcileSubscription moves a Subscription on as far as it goes at now.
func (o *OLM) reconcileSubscription(objects configpolicy.Store, namespace, name string, now time.Time) (time.Duration, error) {
	for range maxHops {
		obj, err := objects.Get(SubscriptionGVK, namespace, name)
		if err != nil {
			return 0, err
		}
		sub, err := readSubscription(obj)
		if err != nil {
			return 0, err
		}
		again, more, err := o.advance(objects, sub, now)
		if err != nil || !more {
			return again, err
		}
	}
	return 0, nil
}

// advance makes one transition of a Subscription and reports whether another may follow at once.
func (o *OLM) advance(objects configpolicy.Store, sub *subscription, now time.Time) (time.Duration, bool, error) {
	if sub.status.InstallPlanRef != nil && sub.status.State == SubscriptionStateUpgradePending {
		return o.follow(objects, sub, now)
	}
	more, err := o.resolve(objects, sub, now)
	return 0, more, err
}

// resolve finds the next CSV of the Subscription's channel and creates its InstallPlan.
func (o *OLM) resolve(objects configpolicy.Store, sub *subscription, now time.Time) (bool, error) {
	status := sub.status
	status.Conditions = slices.Clone(status.Conditions)
	status.setCondition(conditionCatalogSourcesUnhealthy, corev1.ConditionFalse, "AllCatalogSourcesHealthy",
		"all available catalogsources are healthy", now)
	csvs := o.channel(sub.spec.Package, sub.spec.Channel, sub.spec.Source)
	if len(csvs) == 0 {
		status.setCondition(conditionResolutionFailed, corev1.ConditionTrue, "ConstraintsNotSatisfiable",
			fmt.Sprintf("constraints not satisfiable: no operators found in channel %s of package %s in the catalog referenced by subscription %s",
				sub.spec.Channel, sub.spec.Package, sub.obj.GetName()), now)
		return false, sub.write(objects, &status, now)
	}
	status.removeConditions(conditionResolutionFailed)
	target := nextCSV(csvs, status.InstalledCSV, sub.spec.StartingCSV)
	if target == "" {
		status.State, status.CurrentCSV = SubscriptionStateAtLatest, status.InstalledCSV
		return false, sub.write(objects, &status, now)
	}
	ref, generation, err := o.createInstallPlan(objects, sub, target, now)
	if err != nil {
		return false, err
	}
	status.CurrentCSV, status.State = target, SubscriptionStateUpgradePending
	status.InstallPlanRef, status.InstallPlanGeneration = ref, generation
	status.Install = &installPlanReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: string(ref.UID)}
	return true, sub.write(objects, &status, now)
}

// nextCSV returns the CSV to install next: the starting CSV or the head for a new
// Subscription, the one replacing the installed CSV otherwise; "" when at the head.
func nextCSV(csvs []string, installed, starting string) string {
	if installed == "" {
		if slices.Contains(csvs, starting) {
			return starting
		}
		return csvs[len(csvs)-1]
	}
	i := slices.Index(csvs, installed)
	if i < 0 || i == len(csvs)-1 {
		return ""
	}
	return csvs[i+1]
}

// follow carries out the Subscription's InstallPlan and reflects it in the Subscription.
func (o *OLM) follow(objects configpolicy.Store, sub *subscription, now time.Time) (time.Duration, bool, error) {
	status := sub.status
	status.Conditions = slices.Clone(status.Conditions)
	ref := status.InstallPlanRef
	obj, err := objects.Get(InstallPlanGVK, ref.Namespace, ref.Name)
	if errors.Is(err, configpolicy.ErrNotFound) {
		// As OLM does for a pending upgrade whose plan is gone: resolve again.
		status.InstallPlanRef, status.Install, status.CurrentCSV, status.State = nil, nil, "", ""
		status.removeConditions(conditionInstallPlanPending, conditionInstallPlanFailed)
		return 0, true, sub.write(objects, &status, now)
	}
	if err != nil {
		return 0, false, err
	}
	ip, err := readInstallPlan(obj)
	if err != nil {
		return 0, false, err
	}
	again, err := o.progress(objects, ip, sub.spec.Package, now)
	if err != nil {
		return 0, false, err
	}
	status.removeConditions(conditionInstallPlanPending, conditionInstallPlanFailed)
	switch ip.status.Phase {
	case InstallPlanPhaseComplete:
		status.InstalledCSV = status.CurrentCSV
		status.State = SubscriptionStateAtLatest
		if nextCSV(o.channel(sub.spec.Package, sub.spec.Channel, sub.spec.Source), status.InstalledCSV, "") != "" {
			status.State = SubscriptionStateUpgradeAvailable
		}
		return 0, true, sub.write(objects, &status, now)
	case InstallPlanPhaseFailed:
		status.setCondition(conditionInstallPlanFailed, corev1.ConditionTrue, "InstallComponentFailed", ip.failure(), now)
	default:
		status.setCondition(conditionInstallPlanPending, corev1.ConditionTrue, ip.status.Phase, "", now)
	}
	return again, false, sub.write(objects, &status, now)
}

// createInstallPlan creates the InstallPlan installing csv for a Subscription and returns its
// reference and generation.
func (o *OLM) createInstallPlan(objects configpolicy.Store, sub *subscription, csv string, now time.Time) (*corev1.ObjectReference, int, error) {
	ns := sub.obj.GetNamespace()
	plans, err := objects.List(InstallPlanGVK, ns)
	if err != nil {
		return nil, 0, err
	}
	generation := 1
	for _, p := range plans {
		g, _, _ := unstructured.NestedInt64(p.Object, "spec", "generation")
		generation = max(generation, int(g)+1)
	}
	approval := sub.spec.InstallPlanApproval
	if approval != ApprovalManual {
		approval = ApprovalAutomatic
	}
	ip := &installPlan{
		spec: installPlanSpec{ClusterServiceVersionNames: []string{csv}, Approval: approval,
			Approved: approval == ApprovalAutomatic, Generation: generation},
		status: installPlanStatus{Phase: InstallPlanPhaseInstalling, CatalogSources: []string{sub.source()}},
	}
	if approval == ApprovalManual {
		ip.status.Phase = InstallPlanPhaseRequiresApproval
	}
	ip.status.BundleLookups = []bundleLookup{{
		Path:       fmt.Sprintf("registry.redhat.io/%s/%s-bundle:v%s", sub.spec.Package, sub.spec.Package, csvVersion(csv)),
		Identifier: csv, Replaces: sub.status.InstalledCSV,
		CatalogSourceRef: &corev1.ObjectReference{Namespace: MarketplaceNamespace, Name: sub.source()},
	}}
	ip.status.Plan = []planStep{{Resolving: csv, Status: "Unknown", Resource: stepResource{
		CatalogSource: sub.source(), CatalogSourceNamespace: MarketplaceNamespace,
		Group: ClusterServiceVersionGVK.Group, Version: ClusterServiceVersionGVK.Version,
		Kind: ClusterServiceVersionGVK.Kind, Name: csv,
	}}}
	obj, err := ip.object(installPlanName(objects, ns, csv), sub, now)
	if err != nil {
		return nil, 0, err
	}
	if err := objects.Create(obj); err != nil {
		return nil, 0, fmt.Errorf("creating InstallPlan for %s: %w", csv, err)
	}
	created, err := objects.Get(InstallPlanGVK, ns, obj.GetName())
	if err != nil {
		return nil, 0, err
	}
	return &corev1.ObjectReference{APIVersion: InstallPlanGVK.GroupVersion().String(), Kind: InstallPlanGVK.Kind,
		Namespace: ns, Name: created.GetName(), UID: created.GetUID(), ResourceVersion: created.GetResourceVersion()}, generation, nil
}

// installPlanName returns a free name "install-<5 characters>" for the plan installing csv,
// derived from the namespace and CSV so that simulations repeat.
func installPlanName(objects configpolicy.Store, namespace, csv string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	_, _ = h.Write([]byte(namespace + "/" + csv))
	seed := h.Sum64()
	for {
		var b strings.Builder
		b.WriteString("install-")
		for n := seed; b.Len() < len("install-")+5; n /= uint64(len(alphabet)) {
			b.WriteByte(alphabet[n%uint64(len(alphabet))])
		}
		if _, err := objects.Get(InstallPlanGVK, namespace, b.String()); err != nil {
			return b.String()
		}
		seed++
	}
}

// progress moves an InstallPlan on: an approved plan installs its CSVs over the behaviour's
// duration. It returns when the install completes.
func (o *OLM) progress(objects configpolicy.Store, ip *installPlan, pkg string, now time.Time) (time.Duration, error) {
	if ip.status.Phase == InstallPlanPhaseRequiresApproval && ip.spec.Approved {
		ip.status.Phase = InstallPlanPhaseInstalling
	}
	if ip.status.Phase != InstallPlanPhaseInstalling {
		return 0, nil
	}
	started, err := o.startInstall(objects, ip, pkg, now)
	if err != nil {
		return 0, err
	}
	switch left := started.Add(o.Behaviour.InstallDuration).Sub(now); {
	case o.Behaviour.Fail:
		return 0, o.finishInstall(objects, ip, false, now)
	case left > 0:
		return left, ip.write(objects)
	}
	return 0, o.finishInstall(objects, ip, true, now)
}

// startInstall creates the plan's CSVs Installing, their predecessors Replacing, and returns
// when the install started.
func (o *OLM) startInstall(objects configpolicy.Store, ip *installPlan, pkg string, now time.Time) (time.Time, error) {
	ns := ip.obj.GetNamespace()
	started := now
	for _, lookup := range ip.status.BundleLookups {
		existing, err := objects.Get(ClusterServiceVersionGVK, ns, lookup.Identifier)
		if err == nil {
			started = csvSince(existing, now)
			continue
		}
		csv := newCSV(ns, lookup.Identifier, pkg, lookup.Replaces)
		setCSVPhase(csv, CSVPhaseInstalling, "InstallSucceeded", "waiting for install components to report healthy", now)
		if err := objects.Create(csv); err != nil {
			return now, fmt.Errorf("creating CSV %s: %w", lookup.Identifier, err)
		}
		if err := changeCSV(objects, ns, lookup.Replaces, CSVPhaseReplacing, "BeingReplaced",
			"being replaced by csv: "+lookup.Identifier, now); err != nil {
			return now, err
		}
	}
	return started, nil
}

// finishInstall completes or fails an installing plan and its CSVs.
func (o *OLM) finishInstall(objects configpolicy.Store, ip *installPlan, ok bool, now time.Time) error {
	ns := ip.obj.GetNamespace()
	at := metav1.NewTime(now)
	for _, lookup := range ip.status.BundleLookups {
		if !ok {
			if err := changeCSV(objects, ns, lookup.Identifier, CSVPhaseFailed, "InstallComponentFailed",
				"install strategy failed: deployment "+strings.Split(lookup.Identifier, ".")[0]+" not ready before timeout", now); err != nil {
				return err
			}
			continue
		}
		if err := changeCSV(objects, ns, lookup.Identifier, CSVPhaseSucceeded, "InstallSucceeded",
			"install strategy completed with no errors", now); err != nil {
			return err
		}
		if err := objects.Delete(ClusterServiceVersionGVK, ns, lookup.Replaces); err != nil && !errors.Is(err, configpolicy.ErrNotFound) {
			return err
		}
	}
	ip.status.Phase = InstallPlanPhaseComplete
	installed := installPlanCondition{Type: "Installed", Status: corev1.ConditionTrue, LastUpdateTime: &at, LastTransitionTime: &at}
	if !ok {
		ip.status.Phase = InstallPlanPhaseFailed
		installed.Status, installed.Reason = corev1.ConditionFalse, "InstallComponentFailed"
		installed.Message = "error installing bundle: deployment not ready before timeout"
	}
	ip.status.Conditions = []installPlanCondition{installed}
	for i := range ip.status.Plan {
		ip.status.Plan[i].Status = "Created"
	}
	return ip.write(objects)
}

// newCSV returns a ClusterServiceVersion of a package without status.
func newCSV(namespace, name, pkg, replaces string) *unstructured.Unstructured {
	spec := map[string]any{
		"displayName": pkg, "version": csvVersion(name),
		"install": map[string]any{"strategy": "deployment"},
	}
	if replaces != "" {
		spec["replaces"] = replaces
	}
	csv := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	csv.SetGroupVersionKind(ClusterServiceVersionGVK)
	csv.SetNamespace(namespace)
	csv.SetName(name)
	csv.SetLabels(map[string]string{"operators.coreos.com/" + pkg + "." + namespace: ""})
	return csv
}

// csvVersion is the version in a CSV name "<package>.v<version>".
func csvVersion(name string) string {
	if i := strings.Index(name, ".v"); i >= 0 {
		return name[i+2:]
	}
	return name
}

// setCSVPhase moves a CSV to a phase, recording the transition in status.conditions.
func setCSVPhase(csv *unstructured.Unstructured, phase, reason, message string, now time.Time) {
	at := metav1.NewTime(now).Rfc3339Copy().UTC().Format(time.RFC3339)
	status, _ := csv.Object["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
	}
	conditions, _ := status["conditions"].([]any)
	entry := map[string]any{"phase": phase, "reason": reason, "message": message, "lastUpdateTime": at, "lastTransitionTime": at}
	status["conditions"] = append(conditions, entry)
	for k, v := range entry {
		status[k] = v
	}
	csv.Object["status"] = status
}

// changeCSV moves an existing CSV to a phase; a missing CSV is left alone.
func changeCSV(objects configpolicy.Store, namespace, name, phase, reason, message string, now time.Time) error {
	if name == "" {
		return nil
	}
	existing, err := objects.Get(ClusterServiceVersionGVK, namespace, name)
	if errors.Is(err, configpolicy.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p, _, _ := unstructured.NestedString(existing.Object, "status", "phase"); p == phase {
		return nil
	}
	csv := existing.DeepCopy()
	setCSVPhase(csv, phase, reason, message, now)
	return objects.Update(csv)
}

// csvSince returns when a CSV entered its phase.
func csvSince(csv *unstructured.Unstructured, fallback time.Time) time.Time {
	s, _, _ := unstructured.NestedString(csv.Object, "status", "lastTransitionTime")
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	return fallback
}

// Subscription condition types.
const (
	conditionCatalogSourcesUnhealthy = "CatalogSourcesUnhealthy"
	conditionInstallPlanPending      = "InstallPlanPending"
	conditionInstallPlanFailed       = "InstallPlanFailed"
	conditionResolutionFailed        = "ResolutionFailed"
)

// subscription is a Subscription as read from a spoke.
type subscription struct {
	obj    *unstructured.Unstructured
	spec   subscriptionSpec
	status subscriptionStatus
}

type subscriptionSpec struct {
	Source              string `json:"source"`
	SourceNamespace     string `json:"sourceNamespace"`
	Package             string `json:"name"`
	Channel             string `json:"channel,omitempty"`
	StartingCSV         string `json:"startingCSV,omitempty"`
	InstallPlanApproval string `json:"installPlanApproval,omitempty"`
}

type subscriptionStatus struct {
	CurrentCSV            string                  `json:"currentCSV,omitempty"`
	InstalledCSV          string                  `json:"installedCSV,omitempty"`
	Install               *installPlanReference   `json:"installplan,omitempty"`
	State                 string                  `json:"state,omitempty"`
	InstallPlanGeneration int                     `json:"installPlanGeneration,omitempty"`
	InstallPlanRef        *corev1.ObjectReference `json:"installPlanRef,omitempty"`
	Conditions            []subscriptionCondition `json:"conditions,omitempty"`
	LastUpdated           metav1.Time             `json:"lastUpdated"`
}

type installPlanReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uuid"`
}

type subscriptionCondition struct {
	Type               string                 `json:"type"`
	Status             corev1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
}

func readSubscription(obj *unstructured.Unstructured) (*subscription, error) {
	sub := &subscription{obj: obj}
	if err := errors.Join(decodeField(obj, "spec", &sub.spec), decodeField(obj, "status", &sub.status)); err != nil {
		return nil, err
	}
	return sub, nil
}

func (s *subscription) source() string {
	if s.spec.Source == "" {
		return DefaultCatalogSource
	}
	return s.spec.Source
}

// write stores status when it changed, stamping lastUpdated.
func (s *subscription) write(objects configpolicy.Store, status *subscriptionStatus, now time.Time) error {
	status.LastUpdated = s.status.LastUpdated
	if equalJSON(&s.status, status) && s.obj.Object["status"] != nil {
		return nil
	}
	status.LastUpdated = metav1.NewTime(now)
	err := storeStatus(objects, s.obj, status)
	return err
}

func (s *subscriptionStatus) setCondition(t string, status corev1.ConditionStatus, reason, message string, now time.Time) {
	at := metav1.NewTime(now)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = &at
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	s.Conditions = append(s.Conditions, subscriptionCondition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: &at})
}

func (s *subscriptionStatus) removeConditions(types ...string) {
	s.Conditions = slices.DeleteFunc(s.Conditions, func(c subscriptionCondition) bool { return slices.Contains(types, c.Type) })
}

// installPlan is an InstallPlan as read from a spoke.
type installPlan struct {
	obj    *unstructured.Unstructured
	spec   installPlanSpec
	status installPlanStatus
}

type installPlanSpec struct {
	ClusterServiceVersionNames []string `json:"clusterServiceVersionNames"`
	Approval                   string   `json:"approval"`
	Approved                   bool     `json:"approved"`
	Generation                 int      `json:"generation,omitempty"`
}

type installPlanStatus struct {
	Phase          string                 `json:"phase"`
	Conditions     []installPlanCondition `json:"conditions,omitempty"`
	CatalogSources []string               `json:"catalogSources"`
	Plan           []planStep             `json:"plan,omitempty"`
	BundleLookups  []bundleLookup         `json:"bundleLookups,omitempty"`
}

type installPlanCondition struct {
	Type               string                 `json:"type,omitempty"`
	Status             corev1.ConditionStatus `json:"status,omitempty"`
	LastUpdateTime     *metav1.Time           `json:"lastUpdateTime,omitempty"`
	LastTransitionTime *metav1.Time           `json:"lastTransitionTime,omitempty"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
}

type planStep struct {
	Resolving string       `json:"resolving"`
	Resource  stepResource `json:"resource"`
	Status    string       `json:"status"`
}

type stepResource struct {
	CatalogSource          string `json:"sourceName"`
	CatalogSourceNamespace string `json:"sourceNamespace"`
	Group                  string `json:"group"`
	Version                string `json:"version"`
	Kind                   string `json:"kind"`
	Name                   string `json:"name"`
}

type bundleLookup struct {
	Path             string                  `json:"path"`
	Identifier       string                  `json:"identifier"`
	Replaces         string                  `json:"replaces"`
	CatalogSourceRef *corev1.ObjectReference `json:"catalogSourceRef"`
}

func readInstallPlan(obj *unstructured.Unstructured) (*installPlan, error) {
	ip := &installPlan{obj: obj}
	if err := errors.Join(decodeField(obj, "spec", &ip.spec), decodeField(obj, "status", &ip.status)); err != nil {
		return nil, err
	}
	return ip, nil
}

// object returns a new InstallPlan object named name, owned by the Subscription.
func (ip *installPlan) object(name string, sub *subscription, now time.Time) (*unstructured.Unstructured, error) {
	spec, err := toMap(&ip.spec)
	if err != nil {
		return nil, err
	}
	status, err := toMap(&ip.status)
	if err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": status}}
	obj.SetGroupVersionKind(InstallPlanGVK)
	obj.SetNamespace(sub.obj.GetNamespace())
	obj.SetName(name)
	obj.SetCreationTimestamp(metav1.NewTime(now))
	obj.SetLabels(map[string]string{"operators.coreos.com/" + sub.spec.Package + "." + sub.obj.GetNamespace(): ""})
	no := false
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: SubscriptionGVK.GroupVersion().String(),
		Kind: SubscriptionGVK.Kind, Name: sub.obj.GetName(), UID: sub.obj.GetUID(), BlockOwnerDeletion: &no, Controller: &no}})
	ip.obj = obj
	return obj, nil
}

// write stores the plan's status.
func (ip *installPlan) write(objects configpolicy.Store) error {
	err := storeStatus(objects, ip.obj, &ip.status)
	return err
}

// failure is the message of a failed plan.
func (ip *installPlan) failure() string {
	for _, c := range ip.status.Conditions {
		if c.Type == "Installed" && c.Message != "" {
			return c.Message
		}
	}
	return ""
}

// SetOLMBehaviour changes how a spoke's OLM installs bundles.
func (s *Simulator) SetOLMBehaviour(cluster string, b OLMBehaviour) error {
	return s.changeOperator(cluster, func(op Operator) bool {
		o, ok := op.(*OLM)
		if ok {
			o.Behaviour = b
		}
		return ok
	})
}

// SetCatalog replaces what a spoke's catalog sources offer besides the channels of the operators
// it joined with, for example to publish a newer CSV.
func (s *Simulator) SetCatalog(cluster string, catalog []CatalogChannel) error {
	return s.changeOperator(cluster, func(op Operator) bool {
		o, ok := op.(*OLM)
		if ok {
			o.Catalog = slices.Clone(catalog)
		}
		return ok
	})
}
