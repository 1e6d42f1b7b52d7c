package spokejob

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/views"
)

// testJob is a health check of the rollout ztp/upgrade on spoke-1.
func testJob() Job {
	return Job{
		Cluster: "spoke-1", Owner: ownership.Owner{Namespace: "ztp", Name: "upgrade"},
		Name: "health", Run: "uid-1/1", Image: "quay.io/example/precache:1", Args: []string{"health", "--run=uid-1/1"},
		ClusterRules:     []rbacv1.PolicyRule{{APIGroups: []string{"config.openshift.io"}, Resources: []string{"clusteroperators"}, Verbs: []string{"get", "list"}}},
		BindClusterRoles: []string{"cluster-monitoring-view"},
	}
}

func TestValidate(t *testing.T) {
	cases := map[string]struct {
		change func(*Job)
		want   string
	}{
		"valid":               {change: func(*Job) {}},
		"longest name":        {change: func(j *Job) { j.Name = strings.Repeat("a", MaxNameLength) }},
		"name too long":       {change: func(j *Job) { j.Name = strings.Repeat("a", MaxNameLength+1) }, want: "longer than 52 characters"},
		"name not a label":    {change: func(j *Job) { j.Name = "Health.check" }, want: `name "Health.check": a lowercase RFC 1123 label`},
		"no name":             {change: func(j *Job) { j.Name = "" }, want: `name "": a lowercase RFC 1123 label`},
		"no cluster":          {change: func(j *Job) { j.Cluster = "" }, want: "no cluster"},
		"no owner":            {change: func(j *Job) { j.Owner = ownership.Owner{} }, want: "no owner"},
		"no run":              {change: func(j *Job) { j.Run = "" }, want: "no run"},
		"no image":            {change: func(j *Job) { j.Image = "" }, want: "no image"},
		"negative deadline":   {change: func(j *Job) { j.Deadline = -time.Second }, want: "negative deadline -1s"},
		"rule without verbs":  {change: func(j *Job) { j.ClusterRules[0].Verbs = nil }, want: "clusterRules[0] has no verbs"},
		"bad cluster role":    {change: func(j *Job) { j.BindClusterRoles = []string{"a/b"} }, want: `cluster role "a/b": may not contain '/'`},
		"empty cluster role":  {change: func(j *Job) { j.BindClusterRoles = []string{""} }, want: "empty cluster role name"},
		"role with colons ok": {change: func(j *Job) { j.BindClusterRoles = []string{"system:monitoring"} }},
		"host path ok": {change: func(j *Job) {
			j.HostPaths = []HostPath{{Name: "storage", Path: "/var/lib/containers", MountPath: "/host"}}
		}},
		"relative host path": {change: func(j *Job) { j.HostPaths = []HostPath{{Name: "storage", Path: "var", MountPath: "/host"}} },
			want: `host path volume "storage": path and mount path must be absolute`},
		"bad host path name": {change: func(j *Job) { j.HostPaths = []HostPath{{Name: "Storage", Path: "/v", MountPath: "/h"}} },
			want: `host path volume "Storage"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := testJob()
			tc.change(&j)
			err := j.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	j := testJob()
	hash := RunHash(j.Run)
	if len(hash) != runHashLength || hash != RunHash("uid-1/1") || hash == RunHash("uid-1/2") {
		t.Fatalf("RunHash(%q) = %q: want %d stable hex digits that change with the run", j.Run, hash, runHashLength)
	}
	if got := j.actionName(whatJob); got != "cgu-ztp-upgrade-health-job-"+hash {
		t.Fatalf("action name %q", got)
	}
	if got := j.viewName(viewJob); got != "cgu-ztp-upgrade-health-job" {
		t.Fatalf("view name %q", got)
	}
	long := testJob()
	long.Owner = ownership.Owner{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("u", 253)}
	for _, what := range []string{whatJob, whatStopReport} {
		name := long.actionName(what)
		if len(name) > 253 || !strings.HasSuffix(name, "-"+hash) {
			t.Fatalf("long action name %q (%d characters): want at most 253 ending with the run hash", name, len(name))
		}
	}
	if a, b := long.actionName(whatStopJob), long.actionName(whatStopReport); a == b {
		t.Fatalf("shortened action names collide: %q", a)
	}
	if name := long.viewName(viewReport); len(name) > 253 || name == long.viewName(viewJob) {
		t.Fatalf("long view name %q", name)
	}
	other := testJob()
	other.Run = "uid-1/2"
	if j.actionName(whatJob) == other.actionName(whatJob) || j.viewName(viewJob) != other.viewName(viewJob) {
		t.Fatal("action names must change with the run, view names must not")
	}
}

// decode decodes an action's template.
func decode[T any](t *testing.T, a *actionv1beta1.ManagedClusterAction) *T {
	t.Helper()
	out := new(T)
	if err := json.Unmarshal(a.Spec.KubeWork.ObjectTemplate.Raw, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// byWhat returns the planned actions by what they do, checking what every action shares.
func byWhat(t *testing.T, j Job, in intents) map[string]*actionv1beta1.ManagedClusterAction {
	t.Helper()
	out := map[string]*actionv1beta1.ManagedClusterAction{}
	prefix, suffix := "cgu-ztp-upgrade-health-", "-"+RunHash(j.Run)
	wantLabels := map[string]string{"ran.openshift.io/cgu": "upgrade", ownership.LabelUpgradeNamespace: "ztp", LabelJob: "health", LabelRun: RunHash(j.Run),
		ownership.LabelExcludeFromBackup: "true"}
	for _, a := range in.create {
		if a.Namespace != j.Cluster || !strings.HasPrefix(a.Name, prefix) || !strings.HasSuffix(a.Name, suffix) {
			t.Fatalf("action %s/%s: want it in %s, named %s...%s", a.Namespace, a.Name, j.Cluster, prefix, suffix)
		}
		if !maps.Equal(a.Labels, wantLabels) {
			t.Fatalf("action %s labels %v, want %v", a.Name, a.Labels, wantLabels)
		}
		out[strings.TrimSuffix(strings.TrimPrefix(a.Name, prefix), suffix)] = a
	}
	return out
}

func TestSetupActions(t *testing.T) {
	j := testJob()
	in, err := plan(j, newFacts(nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	first := byWhat(t, j, in)
	if got := slices.Sorted(maps.Keys(first)); !slices.Equal(got, []string{"namespace"}) {
		t.Fatalf("first actions %v, want the namespace only", got)
	}
	ns := decode[corev1.Namespace](t, first["namespace"])
	if first["namespace"].Spec.ActionType != actionv1beta1.CreateActionType || ns.Kind != "Namespace" || ns.APIVersion != "v1" || ns.Name != Namespace {
		t.Fatalf("namespace action %s: %+v", first["namespace"].Spec.ActionType, ns)
	}

	in, err = plan(j, newFacts(nil, nil, answer(in.create, succeededAction)))
	if err != nil {
		t.Fatal(err)
	}
	setup := byWhat(t, j, in)
	want := []string{"bind-cluster-monitoring-view-" + RunHash("cluster-monitoring-view")[:6], "clusterrole", "clusterrolebinding", "role", "rolebinding", "serviceaccount"}
	if got := slices.Sorted(maps.Keys(setup)); !slices.Equal(got, want) {
		t.Fatalf("setup actions %v, want %v", got, want)
	}
	subjects := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "health", Namespace: Namespace}}
	checks := map[string]func(*actionv1beta1.ManagedClusterAction) string{
		"serviceaccount": func(a *actionv1beta1.ManagedClusterAction) string {
			sa := decode[corev1.ServiceAccount](t, a)
			return cmp.Diff("v1/ServiceAccount "+Namespace+"/health", sa.APIVersion+"/"+sa.Kind+" "+sa.Namespace+"/"+sa.Name) +
				cmp.Diff(Namespace, a.Spec.KubeWork.Namespace)
		},
		"role": func(a *actionv1beta1.ManagedClusterAction) string {
			role := decode[rbacv1.Role](t, a)
			return cmp.Diff([]rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}},
				{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"health"}, Verbs: []string{"get", "update"}},
			}, role.Rules) + cmp.Diff("Role "+Namespace+"/health", role.Kind+" "+role.Namespace+"/"+role.Name)
		},
		"rolebinding": func(a *actionv1beta1.ManagedClusterAction) string {
			rb := decode[rbacv1.RoleBinding](t, a)
			return cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "health"}, rb.RoleRef) + cmp.Diff(subjects, rb.Subjects)
		},
		"clusterrole": func(a *actionv1beta1.ManagedClusterAction) string {
			cr := decode[rbacv1.ClusterRole](t, a)
			return cmp.Diff(j.ClusterRules, cr.Rules) + cmp.Diff("ClusterRole /cgu-operator-spoke:health", cr.Kind+" "+cr.Namespace+"/"+cr.Name) +
				cmp.Diff("", a.Spec.KubeWork.Namespace)
		},
		"clusterrolebinding": func(a *actionv1beta1.ManagedClusterAction) string {
			crb := decode[rbacv1.ClusterRoleBinding](t, a)
			return cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cgu-operator-spoke:health"}, crb.RoleRef) +
				cmp.Diff(subjects, crb.Subjects) + cmp.Diff("cgu-operator-spoke:health", crb.Name)
		},
		want[0]: func(a *actionv1beta1.ManagedClusterAction) string {
			crb := decode[rbacv1.ClusterRoleBinding](t, a)
			return cmp.Diff(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-monitoring-view"}, crb.RoleRef) +
				cmp.Diff(subjects, crb.Subjects) + cmp.Diff("cgu-operator-spoke:health:cluster-monitoring-view", crb.Name)
		},
	}
	for what, check := range checks {
		if setup[what].Spec.ActionType != actionv1beta1.CreateActionType {
			t.Errorf("%s: action type %s", what, setup[what].Spec.ActionType)
		}
		if diff := check(setup[what]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}

	bare := testJob()
	bare.ClusterRules, bare.BindClusterRoles = nil, nil
	got := slices.Collect(func(yield func(string) bool) {
		for _, s := range bare.setupSteps() {
			if !yield(s.what) {
				return
			}
		}
	})
	if !slices.Equal(got, []string{"serviceaccount", "role", "rolebinding"}) {
		t.Fatalf("setup without cluster permissions: %v", got)
	}
}

func TestJobAction(t *testing.T) {
	cases := map[string]struct {
		deadline time.Duration
		want     int64
	}{
		"default deadline": {want: 600},
		"deadline":         {deadline: 90 * time.Second, want: 90},
		"rounded up":       {deadline: 1500 * time.Millisecond, want: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := testJob()
			j.Deadline = tc.deadline
			action, err := j.writeAction(whatJob, actionv1beta1.CreateActionType, j.job())
			if err != nil {
				t.Fatal(err)
			}
			job := decode[batchv1.Job](t, action)
			checkJob(t, j, job, tc.want)
		})
	}
}

func checkJob(t *testing.T, j Job, job *batchv1.Job, deadline int64) {
	t.Helper()
	labels := map[string]string{"app.kubernetes.io/managed-by": "cgu-operator", LabelJob: "health", LabelRun: RunHash(j.Run)}
	pod := job.Spec.Template.Spec
	ctr := pod.Containers[0]
	for _, diff := range []string{
		cmp.Diff("batch/v1 Job cgu-operator-spoke/health", job.APIVersion+" "+job.Kind+" "+job.Namespace+"/"+job.Name),
		cmp.Diff(labels, job.Labels), cmp.Diff(labels, job.Spec.Template.Labels),
		cmp.Diff(map[string]string{AnnotationRun: j.Run}, job.Annotations),
		cmp.Diff(int32(1), *job.Spec.BackoffLimit),
		cmp.Diff(deadline, *job.Spec.ActiveDeadlineSeconds), cmp.Diff(deadline, *pod.ActiveDeadlineSeconds),
		cmp.Diff(int32(86400), *job.Spec.TTLSecondsAfterFinished),
		cmp.Diff(batchv1.PodFailurePolicyActionIgnore, job.Spec.PodFailurePolicy.Rules[0].Action),
		cmp.Diff("health", pod.ServiceAccountName), cmp.Diff(corev1.RestartPolicyNever, pod.RestartPolicy),
		cmp.Diff(true, *pod.SecurityContext.RunAsNonRoot),
		cmp.Diff(corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type),
		cmp.Diff(1, len(pod.Containers)), cmp.Diff(j.Image, ctr.Image), cmp.Diff(j.Args, ctr.Args),
		cmp.Diff(false, *ctr.SecurityContext.AllowPrivilegeEscalation),
		cmp.Diff([]corev1.Capability{"ALL"}, ctr.SecurityContext.Capabilities.Drop),
	} {
		if diff != "" {
			t.Errorf("job (-want +got):\n%s", diff)
		}
	}
}

func TestDeleteActionsAndViews(t *testing.T) {
	j := testJob()
	for what, resource := range map[string]string{whatStopJob: "jobs.batch", whatStopReport: "configmaps"} {
		a := j.deleteAction(what, resource)
		want := actionv1beta1.ActionSpec{ActionType: actionv1beta1.DeleteActionType,
			KubeWork: &actionv1beta1.KubeWorkSpec{Resource: resource, Namespace: Namespace, Name: "health"}}
		if diff := cmp.Diff(want, a.Spec); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	for _, tc := range []struct {
		view *viewv1beta1.ManagedClusterView
		want viewv1beta1.ViewScope
	}{
		{j.jobView(), viewv1beta1.ViewScope{Group: "batch", Version: "v1", Kind: "Job", Namespace: Namespace, Name: "health", UpdateIntervalSeconds: views.RefreshSeconds}},
		{j.reportView(), viewv1beta1.ViewScope{Version: "v1", Kind: "ConfigMap", Namespace: Namespace, Name: "health", UpdateIntervalSeconds: views.RefreshSeconds}},
	} {
		if diff := cmp.Diff(tc.want, tc.view.Spec.Scope); diff != "" {
			t.Errorf("view %s (-want +got):\n%s", tc.view.Name, diff)
		}
		wantLabels := map[string]string{"ran.openshift.io/cgu": "upgrade", ownership.LabelUpgradeNamespace: "ztp", LabelJob: "health",
			ownership.LabelExcludeFromBackup: "true"}
		if tc.view.Namespace != j.Cluster || !maps.Equal(tc.view.Labels, wantLabels) {
			t.Errorf("view %s/%s labels %v", tc.view.Namespace, tc.view.Name, tc.view.Labels)
		}
	}
}

// A privileged Job with an input and host paths mounts them and runs as root; the input is
// written by a step of its own, replaced on each run.
func TestPrivilegedJobWithInputAndHostPaths(t *testing.T) {
	j := testJob()
	j.Privileged = true
	j.Input = map[string]string{"spec.json": `{"platformImage":"quay.io/r@sha256:1"}`}
	j.HostPaths = []HostPath{{Name: "storage", Path: "/var/lib/containers", MountPath: "/host/var/lib/containers"}}
	pod := j.job().Spec.Template.Spec
	c := pod.Containers[0]
	expectPrivileged(t, pod)
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	if mounts["input"] != InputDir || mounts["storage"] != "/host/var/lib/containers" {
		t.Fatalf("mounts %v, want the input and the host path", mounts)
	}
	var input *corev1.ConfigMap
	for _, s := range j.setupSteps() {
		if cm, ok := s.object.(*corev1.ConfigMap); ok && s.what == "input" && s.update {
			input = cm
		}
	}
	if input == nil || input.Name != "health-input" || input.Namespace != Namespace || input.Data["spec.json"] == "" {
		t.Fatalf("input step %+v, want the ConfigMap health-input with the spec, replaced each run", input)
	}
	if restricted := testJob().job().Spec.Template.Spec; restricted.SecurityContext.RunAsNonRoot == nil || len(restricted.Volumes) != 0 {
		t.Fatalf("a plain Job is no longer restricted: %+v", restricted)
	}
}

// expectPrivileged checks a pod runs its container privileged as root.
func expectPrivileged(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	sc := pod.Containers[0].SecurityContext
	if sc == nil || sc.Privileged == nil || !*sc.Privileged || sc.RunAsUser == nil || *sc.RunAsUser != 0 {
		t.Fatalf("container security context %+v, want privileged as root", sc)
	}
	if pod.SecurityContext.RunAsNonRoot != nil {
		t.Fatalf("pod security context %+v, want no runAsNonRoot", pod.SecurityContext)
	}
}

// Exit codes that say another attempt cannot succeed fail the Job at once; disruptions are
// still ignored.
func TestFailOnExitCodes(t *testing.T) {
	j := testJob()
	if rules := j.job().Spec.PodFailurePolicy.Rules; len(rules) != 1 || rules[0].Action != batchv1.PodFailurePolicyActionIgnore {
		t.Fatalf("pod failure policy %+v, want disruptions ignored only", rules)
	}
	j.FailOnExitCodes = []int32{3}
	rules := j.job().Spec.PodFailurePolicy.Rules
	if len(rules) != 2 || rules[1].Action != batchv1.PodFailurePolicyActionFailJob || rules[1].OnExitCodes == nil ||
		rules[1].OnExitCodes.Values[0] != 3 || *rules[1].OnExitCodes.ContainerName != j.Name {
		t.Fatalf("pod failure policy %+v, want exit code 3 failing the Job", rules)
	}
}
