// Package talmjob runs the pre-cache and backup Jobs on a managed cluster the way TALM does:
// through ManagedClusterActions and ManagedClusterViews of TALM's names, in the cluster's
// namespace on the hub, on the spoke objects of TALM's names, and through TALM's states
// (NotStarted, PreparingToStart, Starting, Active, then Succeeded, the timeout or
// UnrecoverableError). A hub part-way through a TALM pre-cache or backup is therefore taken up
// where TALM left it: the state is status.precaching.status (status.backup.status) and the
// hub objects are found by name.
//
// Step is pure: it reads the facts of one cluster (its previous state, the views as the hub
// shows them, whether the cluster is available) and returns its next state and what to create
// and delete on the hub. The caller writes those and keeps the state in the rollout's status.
// docs/talm-compatibility.md lists where Step is more forgiving than TALM.
package talmjob

import (
	"maps"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The states, in TALM's words. The timeout's word is the protocol's (Protocol.Timeout).
const (
	NotStarted       = "NotStarted"
	PreparingToStart = "PreparingToStart"
	Starting         = "Starting"
	Active           = "Active"
	Succeeded        = "Succeeded"
	Failed           = "UnrecoverableError"
)

// Protocol is one kind of Job as TALM runs it: the names of its spoke objects and of the
// hub's views and actions.
type Protocol struct {
	// Prefix starts the actions' names ("precache" makes "precache-ns-create").
	Prefix string
	// Namespace, ServiceAccount, Binding (a ClusterRoleBinding to cluster-admin) and Job are
	// the spoke objects.
	Namespace, ServiceAccount, Binding, Job string
	// SpecConfigMap is the ConfigMap that carries the Job's input, "" for none.
	SpecConfigMap string
	// NamespaceView and JobView name the views of the namespace and of the Job.
	NamespaceView, JobView string
	// DependencyViews are the views of the Job's dependencies watched before the Job is
	// created, each with the spoke object it shows; with none, the namespace view serves.
	DependencyViews []DependencyView
	// Timeout is TALM's word for a Job past its deadline.
	Timeout string
	// WaitForNamespace keeps a cluster PreparingToStart until the namespace view shows the
	// namespace gone (pre-caching); without it (the backup) a cluster is Starting after one
	// pass.
	WaitForNamespace bool
	// ReportView names the view of ReportConfigMap, the ConfigMap the Job reports its
	// progress in, made with the Job; "" for none. Not TALM's: TALM's Jobs report nothing.
	ReportView, ReportConfigMap string
}

// DependencyView is a view of one of the Job's dependencies.
type DependencyView struct {
	Name string
	// Resource, Namespace and Object name what it shows.
	Resource, Namespace, Object string
}

// The actions' names end with these.
const (
	whatNamespaceCreate = "-ns-create"
	whatAccountCreate   = "-sa-create"
	whatBindingCreate   = "-crb-create"
	whatSpecCreate      = "-spec-cm-create"
	whatJobCreate       = "-job-create"
	whatNamespaceDelete = "-ns-delete"
	whatBindingDelete   = "-crb-delete"
)

// Precache is TALM's pre-caching.
var Precache = Protocol{
	Prefix: "precache", Namespace: "openshift-talo-pre-cache", ServiceAccount: "pre-cache-agent",
	Binding: "pre-cache-crb", Job: "pre-cache", SpecConfigMap: "pre-cache-spec",
	NamespaceView: "view-precache-namespace", JobView: "view-precache-job",
	DependencyViews: []DependencyView{
		{Name: "view-precache-spec-configmap", Resource: "configmap", Namespace: "openshift-talo-pre-cache", Object: "pre-cache-spec"},
		{Name: "view-precache-service-acct", Resource: "serviceaccounts", Namespace: "openshift-talo-pre-cache", Object: "pre-cache-agent"},
		{Name: "view-precache-cluster-role-binding", Resource: "clusterrolebinding", Object: "pre-cache-crb"},
	},
	Timeout: "PrecacheTimeout", WaitForNamespace: true,
	ReportView: "view-precache-report", ReportConfigMap: "pre-cache-report",
}

// Backup is TALM's backup before the upgrade.
var Backup = Protocol{
	Prefix: "backup", Namespace: "openshift-talo-backup", ServiceAccount: "backup-agent",
	Binding: "backup-agent", Job: "backup-agent",
	NamespaceView: "view-backup-namespace", JobView: "view-backup-job",
	Timeout: "BackupTimeout",
}

// Action is the name of the protocol's action doing what (one of the what constants).
func (p Protocol) action(what string) string { return p.Prefix + what }

// JobAction is the name of the action that creates the Job.
func (p Protocol) JobAction() string { return p.action(whatJobCreate) }

// Views are the names of every view of the protocol.
func (p Protocol) Views() []string {
	out := []string{p.NamespaceView, p.JobView}
	for _, v := range p.DependencyViews {
		out = append(out, v.Name)
	}
	if p.ReportView != "" {
		out = append(out, p.ReportView)
	}
	return out
}

// createActions are the names of the actions that make the spoke objects.
func (p Protocol) createActions() []string {
	out := []string{p.action(whatNamespaceCreate), p.action(whatAccountCreate), p.action(whatBindingCreate)}
	if p.SpecConfigMap != "" {
		out = append(out, p.action(whatSpecCreate))
	}
	return append(out, p.action(whatJobCreate))
}

// Final reports whether a state is never left.
func (p Protocol) Final(state string) bool {
	return state == Succeeded || state == Failed || state == p.Timeout
}

// Work is what the caller's Job is made of, and how the made objects are labelled.
type Work struct {
	// Cluster is the managed cluster: its namespace on the hub.
	Cluster string
	// Pod is the Job's pod template spec; Step sets its service account and restart policy
	// and, with a SpecConfigMap, mounts it at SpecDir.
	Pod corev1.PodSpec
	// DeadlineSeconds is the Job's activeDeadlineSeconds.
	DeadlineSeconds int64
	// Spec is the data of the SpecConfigMap.
	Spec map[string]string
	// UpdateIntervalSeconds is how often the agent refreshes the Job's views.
	UpdateIntervalSeconds int32
	// Labels are put on every hub object made, but the actions that remove the Job from the
	// spoke (the namespace's and the binding's deletions), which get DeleteLabels: without
	// an owner's, they outlive the rollout's cleanup until the agent answered them and the
	// hub collected them.
	Labels, DeleteLabels map[string]string
}

// UpdateInterval is how often the agent refreshes the Job's views for a rollout of clusters
// clusters, as TALM sets it: 6 seconds a cluster, from 30 seconds to 5 minutes.
func UpdateInterval(clusters int) int32 {
	return int32(min(max(6*clusters, 30), 300))
}

// SpecDir is where the Job's container finds the SpecConfigMap's keys, as in TALM's Job.
const SpecDir = "/etc/config"

// specVolume names the SpecConfigMap's volume.
const specVolume = "config-volume"

// managementAnnotation asks for the management workload partition, as TALM's Jobs do.
const managementAnnotation = "target.workload.openshift.io/management"

func (p Protocol) meta(w Work, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: w.Cluster, Labels: maps.Clone(w.Labels)}
}

func (p Protocol) createAction(w Work, what, resource, namespace string, obj runtime.Object) *actionv1beta1.ManagedClusterAction {
	return &actionv1beta1.ManagedClusterAction{
		ObjectMeta: p.meta(w, p.action(what)),
		Spec: actionv1beta1.ActionSpec{ActionType: actionv1beta1.CreateActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
			Resource: resource, Namespace: namespace, ObjectTemplate: runtime.RawExtension{Object: obj}}},
	}
}

func (p Protocol) deleteAction(w Work, what, resource, name string) *actionv1beta1.ManagedClusterAction {
	meta := p.meta(w, p.action(what))
	meta.Labels = maps.Clone(w.DeleteLabels)
	return &actionv1beta1.ManagedClusterAction{
		ObjectMeta: meta,
		Spec: actionv1beta1.ActionSpec{ActionType: actionv1beta1.DeleteActionType, KubeWork: &actionv1beta1.KubeWorkSpec{
			Resource: resource, Name: name}},
	}
}

func (p Protocol) view(w Work, name, resource, namespace, object string, interval int32) *viewv1beta1.ManagedClusterView {
	return &viewv1beta1.ManagedClusterView{
		ObjectMeta: p.meta(w, name),
		Spec: viewv1beta1.ViewSpec{Scope: viewv1beta1.ViewScope{
			Resource: resource, Namespace: namespace, Name: object, UpdateIntervalSeconds: interval}},
	}
}

// namespaceView is the view of the spoke namespace (refreshed at the agent's default).
func (p Protocol) namespaceView(w Work) *viewv1beta1.ManagedClusterView {
	return p.view(w, p.NamespaceView, "namespaces", "", p.Namespace, 0)
}

func (p Protocol) jobView(w Work) *viewv1beta1.ManagedClusterView {
	return p.view(w, p.JobView, "jobs", p.Namespace, p.Job, w.UpdateIntervalSeconds)
}

// jobViews are the view of the Job and, with a report, the view of its report.
func (p Protocol) jobViews(w Work) []*viewv1beta1.ManagedClusterView {
	out := []*viewv1beta1.ManagedClusterView{p.jobView(w)}
	if p.ReportView != "" {
		out = append(out, p.view(w, p.ReportView, "configmaps", p.Namespace, p.ReportConfigMap, w.UpdateIntervalSeconds))
	}
	return out
}

// deleteActions remove the namespace, and with it everything in it, and the binding.
func (p Protocol) deleteActions(w Work) []*actionv1beta1.ManagedClusterAction {
	return []*actionv1beta1.ManagedClusterAction{
		p.deleteAction(w, whatNamespaceDelete, "namespace", p.Namespace),
		p.deleteAction(w, whatBindingDelete, "clusterrolebinding", p.Binding),
	}
}

// dependencyActions create the namespace, the service account, the binding and, with one,
// the spec ConfigMap.
func (p Protocol) dependencyActions(w Work) []*actionv1beta1.ManagedClusterAction {
	ns := &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Namespace,
			Labels:      map[string]string{"pod-security.kubernetes.io/enforce": "privileged"},
			Annotations: map[string]string{"workload.openshift.io/allowed": "management"}},
	}
	sa := &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: p.ServiceAccount, Namespace: p.Namespace}}
	crb := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Binding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: p.ServiceAccount, Namespace: p.Namespace}},
	}
	out := []*actionv1beta1.ManagedClusterAction{
		p.createAction(w, whatNamespaceCreate, "namespace", "", ns),
		p.createAction(w, whatAccountCreate, "serviceaccount", "", sa),
		p.createAction(w, whatBindingCreate, "clusterrolebinding", "", crb),
	}
	if p.SpecConfigMap != "" {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: p.SpecConfigMap, Namespace: p.Namespace}, Data: w.Spec}
		out = append(out, p.createAction(w, whatSpecCreate, "configmap", "", cm))
	}
	return out
}
