package spokejob

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// setupStep is a spoke object the program needs before its Job starts, created by an
// action named after what; with update, an object that already exists is replaced by a
// second action, since its content may change from run to run.
type setupStep struct {
	what   string
	object client.Object
	update bool
}

// namespaceStep creates Namespace; it comes before every other step.
func namespaceStep() setupStep {
	return setupStep{what: "namespace", object: &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": managedBy}},
	}}
}

// setupSteps are the steps that follow the namespace: the service account and its RBAC.
func (j Job) setupSteps() []setupStep {
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: j.Name, Namespace: Namespace}}
	steps := []setupStep{
		{what: "serviceaccount", object: &corev1.ServiceAccount{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: j.spokeMeta(Namespace, j.Name),
		}},
		{what: "role", update: true, object: &rbacv1.Role{
			TypeMeta: rbacTypeMeta("Role"), ObjectMeta: j.spokeMeta(Namespace, j.Name), Rules: j.reportRules(),
		}},
		{what: "rolebinding", object: &rbacv1.RoleBinding{
			TypeMeta: rbacTypeMeta("RoleBinding"), ObjectMeta: j.spokeMeta(Namespace, j.Name), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: j.Name},
		}},
	}
	if len(j.ClusterRules) > 0 {
		steps = append(steps,
			setupStep{what: "clusterrole", update: true, object: &rbacv1.ClusterRole{
				TypeMeta: rbacTypeMeta("ClusterRole"), ObjectMeta: j.spokeMeta("", j.clusterRoleName()), Rules: j.ClusterRules,
			}},
			setupStep{what: "clusterrolebinding", object: &rbacv1.ClusterRoleBinding{
				TypeMeta: rbacTypeMeta("ClusterRoleBinding"), ObjectMeta: j.spokeMeta("", j.clusterRoleName()), Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: j.clusterRoleName()},
			}})
	}
	if j.Input != nil {
		steps = append(steps, setupStep{what: "input", update: true, object: &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: j.spokeMeta(Namespace, j.inputName()),
			Data: j.Input,
		}})
	}
	for _, role := range j.BindClusterRoles {
		steps = append(steps, setupStep{what: "bind-" + role + "-" + RunHash(role)[:6], object: &rbacv1.ClusterRoleBinding{
			TypeMeta: rbacTypeMeta("ClusterRoleBinding"), ObjectMeta: j.spokeMeta("", j.bindingName(role)), Subjects: subject,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		}})
	}
	return steps
}

// reportRules let the program create its report, and read and update it only.
func (j Job) reportRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{j.Name}, Verbs: []string{"get", "update"}},
	}
}

func rbacTypeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: kind}
}

func (j Job) spokeMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: j.spokeLabels()}
}

// job is the spoke's Job of this run.
func (j Job) job() *batchv1.Job {
	deadline := j.DeadlineSeconds()
	meta := j.spokeMeta(Namespace, j.Name)
	meta.Labels = j.jobLabels()
	meta.Annotations = map[string]string{AnnotationRun: j.Run}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: batchv1.SchemeGroupVersion.String(), Kind: "Job"},
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr.To[int32](backoffLimit),
			ActiveDeadlineSeconds:   ptr.To(deadline),
			TTLSecondsAfterFinished: ptr.To[int32](finishedTTL),
			PodFailurePolicy:        j.podFailurePolicy(),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: j.jobLabels(), Annotations: map[string]string{AnnotationRun: j.Run}},
				Spec:       j.podSpec(deadline),
			},
		},
	}
}

// PodSpec is the pod the Job runs: its program, as the Job's service account, with its
// input and host paths mounted (see podSpec). Another protocol running the program on a
// spoke (pkg/talmjob) starts from it.
func (j Job) PodSpec() corev1.PodSpec { return j.podSpec(j.DeadlineSeconds()) }

// inputName is the name of the Input ConfigMap.
func (j Job) inputName() string { return j.Name + "-input" }

// podSpec runs the program once, as the job's service account: restricted, or privileged as
// root when the Job asks; deadline also bounds a pod whose Job was deleted (its pods are
// orphaned). The Input ConfigMap and the host paths are mounted.
func (j Job) podSpec(deadline int64) corev1.PodSpec {
	spec := j.restrictedPodSpec(deadline)
	c := &spec.Containers[0]
	if j.Privileged {
		spec.SecurityContext = &corev1.PodSecurityContext{}
		c.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true), RunAsUser: ptr.To[int64](0)}
	}
	if j.Input != nil {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "input", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: j.inputName()}}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "input", MountPath: InputDir, ReadOnly: true})
	}
	for _, h := range j.HostPaths {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: h.Name, VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: h.Path, Type: ptr.To(corev1.HostPathDirectory)}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: h.Name, MountPath: h.MountPath, ReadOnly: h.ReadOnly})
	}
	return spec
}

func (j Job) restrictedPodSpec(deadline int64) corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName:    j.Name,
		RestartPolicy:         corev1.RestartPolicyNever,
		ActiveDeadlineSeconds: ptr.To(deadline),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name:                     j.Name,
			Image:                    j.Image,
			Args:                     j.Args,
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

// podFailurePolicy ignores disruptions of the pod (evictions, preemptions) and fails the Job
// at once on the exit codes that say another attempt cannot succeed.
func (j Job) podFailurePolicy() *batchv1.PodFailurePolicy {
	rules := []batchv1.PodFailurePolicyRule{{
		Action:          batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
	}}
	if len(j.FailOnExitCodes) > 0 {
		rules = append(rules, batchv1.PodFailurePolicyRule{
			Action: batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
				ContainerName: ptr.To(j.Name), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: j.FailOnExitCodes,
			},
		})
	}
	return &batchv1.PodFailurePolicy{Rules: rules}
}
