package imagebasedgroupupgrade

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	lcmv1alpha1 "github.com/cgu-operator/cgu-operator/api/lcm/v1alpha1"
	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/ibgu"
	"github.com/cgu-operator/cgu-operator/pkg/managedclusters"
	"github.com/cgu-operator/cgu-operator/pkg/manifestwork"
	"github.com/cgu-operator/cgu-operator/pkg/names"
	"github.com/cgu-operator/cgu-operator/pkg/ownership"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
)

// lifecycleAgentNamespace is where the lifecycle agent reads the seed image's pull secret.
const lifecycleAgentNamespace = "openshift-lifecycle-agent"

// gather reads, from the cache, what a pass decides from: the steps' ClusterGroupUpgrades
// and their batch records, the ManifestWorks of the clusters that did not complete (for
// what the spoke said) and of the steps that ended, the clusters' labels, the plan's
// templates and, while the Prep template is missing, what it carries.
func gather(ctx context.Context, c client.Reader, g *lcmv1alpha1.ImageBasedGroupUpgrade, worksNotServed, tenant bool) (ibgu.Facts, error) {
	f := ibgu.Facts{IBGU: g, WorksNotServed: worksNotServed}
	if worksNotServed {
		return f, nil
	}
	if err := gatherSteps(ctx, c, &f); err != nil {
		return f, err
	}
	var clusters metav1.PartialObjectMetadataList
	clusters.SetGroupVersionKind(managedclusters.GVK)
	if err := c.List(ctx, &clusters); err != nil {
		return f, fmt.Errorf("listing ManagedClusters: %w", err)
	}
	f.ClusterLabels = make(map[string]map[string]string, len(clusters.Items))
	for i := range clusters.Items {
		f.ClusterLabels[clusters.Items[i].Name] = clusters.Items[i].Labels
	}
	if err := gatherEndedWorks(ctx, c, &f); err != nil {
		return f, err
	}
	return f, gatherTemplates(ctx, c, &f, tenant)
}

// gatherSteps reads the steps' ClusterGroupUpgrades, and the steps the status says were
// skipped.
func gatherSteps(ctx context.Context, c client.Reader, f *ibgu.Facts) error {
	g := f.IBGU
	f.Children, f.StepPaused = map[int]*ibgu.Child{}, map[int]bool{}
	for _, i := range ibgu.SkippedSteps(g.Status) {
		f.Children[i] = &ibgu.Child{Skipped: true, Ended: true}
	}
	var cgus ranv1alpha1.ClusterGroupUpgradeList
	if err := c.List(ctx, &cgus, client.InNamespace(g.Namespace), client.MatchingLabels{ibgu.LabelIBGU: names.LabelValue(g.Name)}); err != nil {
		return fmt.Errorf("listing the ClusterGroupUpgrades of the plan: %w", err)
	}
	byName := map[string]*ranv1alpha1.ClusterGroupUpgrade{}
	for i := range cgus.Items {
		if metav1.IsControlledBy(&cgus.Items[i], g) {
			byName[cgus.Items[i].Name] = &cgus.Items[i]
		}
	}
	before := said(g.Status)
	for i, item := range g.Spec.Plan {
		cgu, ok := byName[ibgu.StepName(g.Name, item.Actions, i)]
		if !ok {
			continue
		}
		child, err := gatherChild(ctx, c, cgu, func(template, cluster string) string {
			for _, a := range item.Actions {
				if ibgu.TemplateName(g.Name, a) == template {
					return before[cluster][a]
				}
			}
			return ""
		})
		if err != nil {
			return err
		}
		f.Children[i], f.StepPaused[i] = child, cgu.Spec.Paused
	}
	return nil
}

// gatherChild reads one step's ClusterGroupUpgrade and its batch records; earlier says what
// the status held of a cluster's action, for the clusters whose work is gone.
func gatherChild(ctx context.Context, c client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade,
	earlier func(template, cluster string) string) (*ibgu.Child, error) {
	child := &ibgu.Child{Upgrade: cgu.Name, State: cgu.Status.State, Message: cgu.Status.Message, Counts: cgu.Status.Counts,
		Clusters: map[string]ibgu.Progress{}}
	if cgu.Status.StartedAt != nil {
		child.StartedAt = cgu.Status.StartedAt.Time
	}
	var records ranv1alpha1.ClusterGroupUpgradeBatchList
	if err := c.List(ctx, &records, client.InNamespace(cgu.Namespace), client.MatchingLabels{ranv1alpha1.LabelUpgradeName: names.LabelValue(cgu.Name)}); err != nil {
		return nil, fmt.Errorf("listing the batch records of %s: %w", cgu.Name, err)
	}
	var owned []ranv1alpha1.ClusterGroupUpgradeBatch
	for _, rec := range records.Items {
		if !metav1.IsControlledBy(&rec, cgu) {
			continue
		}
		owned = append(owned, rec)
		for _, cp := range rec.Status.Clusters {
			p := ibgu.Progress{State: cp.State, Template: cp.CurrentPolicy, Reason: cp.Reason}
			if p.Template != "" && p.State != ranv1alpha1.ClusterCompleted && p.State != ranv1alpha1.ClusterPending {
				p.Message = workMessage(ctx, c, cgu, p.Template, cp.Name)
				if p.Message == "" {
					p.Message = earlier(p.Template, cp.Name)
				}
			}
			child.Clusters[cp.Name] = p
		}
	}
	// Ended once the status says so and the records show it (rollout.EndRecorded).
	child.Ended = meta.FindStatusCondition(cgu.Status.Conditions, ranv1alpha1.ConditionSucceeded) != nil &&
		rollout.EndRecorded(cgu.Status.Counts.Total, owned)
	if cgu.Status.CompletedAt != nil && child.Ended {
		child.CompletedAt = cgu.Status.CompletedAt.Time
	}
	return child, nil
}

// workMessage is what the ManifestWork of a cluster's action says, "" when it is gone.
func workMessage(ctx context.Context, c client.Reader, cgu *ranv1alpha1.ClusterGroupUpgrade, template, cluster string) string {
	w := &workv1.ManifestWork{}
	key := client.ObjectKey{Namespace: cluster, Name: manifestwork.Name(ownership.OwnerOf(cgu), manifestwork.RoleStep, template)}
	if err := c.Get(ctx, key, w); err != nil {
		return ""
	}
	return ibgu.WorkMessage(w)
}

// said are the messages the status holds, by cluster and action: what the spokes said of
// the actions before their works were deleted.
func said(st lcmv1alpha1.ImageBasedGroupUpgradeStatus) map[string]map[lcmv1alpha1.Action]string {
	out := map[string]map[lcmv1alpha1.Action]string{}
	for _, c := range st.Clusters {
		m := map[lcmv1alpha1.Action]string{}
		for _, a := range c.FailedActions {
			m[a.Action] = a.Message
		}
		if c.CurrentAction != nil {
			m[c.CurrentAction.Action] = c.CurrentAction.Message
		}
		out[c.Name] = m
	}
	return out
}

// gatherEndedWorks reads the ManifestWorks of the steps that ended (those of clusters that
// failed or timed out stay until then).
func gatherEndedWorks(ctx context.Context, c client.Reader, f *ibgu.Facts) error {
	for _, child := range f.Children {
		if !child.Ended || child.Skipped {
			continue
		}
		var works workv1.ManifestWorkList
		owner := ownership.Owner{Namespace: f.IBGU.Namespace, Name: child.Upgrade}
		if err := c.List(ctx, &works, client.MatchingLabels(owner.Labels())); err != nil {
			return fmt.Errorf("listing the ManifestWorks of %s: %w", child.Upgrade, err)
		}
		for i := range works.Items {
			w := &works.Items[i]
			f.EndedWorks = append(f.EndedWorks, ibgu.Work{Namespace: w.Namespace, Name: w.Name, Deleting: !w.DeletionTimestamp.IsZero()})
		}
	}
	slices.SortFunc(f.EndedWorks, func(a, b ibgu.Work) int {
		if a.Namespace != b.Namespace {
			return strings.Compare(a.Namespace, b.Namespace)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nil
}

// gatherTemplates reads what the hub holds under each template name of the plan, and what
// the Prep template carries while it is missing.
func gatherTemplates(ctx context.Context, c client.Reader, f *ibgu.Facts, tenant bool) error {
	g := f.IBGU
	f.Templates = map[lcmv1alpha1.Action]ibgu.TemplateFact{}
	for _, item := range g.Spec.Plan {
		for _, action := range item.Actions {
			if _, seen := f.Templates[action]; seen {
				continue
			}
			have := &workv1alpha1.ManifestWorkReplicaSet{}
			name := ibgu.TemplateName(g.Name, action)
			err := c.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: name}, have)
			switch {
			case apierrors.IsNotFound(err):
				f.Templates[action] = ibgu.TemplateMissing
			case err != nil:
				return fmt.Errorf("reading ManifestWorkReplicaSet %s/%s: %w", g.Namespace, name, err)
			case metav1.IsControlledBy(have, g):
				f.Templates[action] = ibgu.TemplateOwned
			default:
				f.Templates[action] = ibgu.TemplateForeign
			}
		}
	}
	if prep, ok := f.Templates[lcmv1alpha1.ActionPrep]; ok && prep == ibgu.TemplateMissing {
		content, err := prepContent(ctx, c, g, tenant)
		f.PrepContent = content
		return err
	}
	return nil
}

// prepContent reads what Prep sends with the ImageBasedUpgrade: the OADP ConfigMaps of
// ibuSpec, at their own namespace, and the seed image's pull secret, from the
// ImageBasedGroupUpgrade's namespace to the lifecycle agent's, unless it is delivered by
// reference (ibgu.PullSecretCopied); Missing names those not found. Where tenancy applies
// (tenant), a ConfigMap of another namespace is not read but named in OutOfReach.
func prepContent(ctx context.Context, c client.Reader, g *lcmv1alpha1.ImageBasedGroupUpgrade, tenant bool) (ibgu.Content, error) {
	var out ibgu.Content
	for _, ref := range g.Spec.IBUSpec.OADPContent {
		if tenant && ref.Namespace != g.Namespace {
			out.OutOfReach = append(out.OutOfReach, fmt.Sprintf("ConfigMap %s/%s", ref.Namespace, ref.Name))
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				out.Missing = append(out.Missing, fmt.Sprintf("ConfigMap %s/%s", ref.Namespace, ref.Name))
				continue
			}
			return out, fmt.Errorf("reading ConfigMap %s/%s: %w", ref.Namespace, ref.Name, err)
		}
		out.Objects = append(out.Objects, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name, Labels: cm.Labels, Annotations: cm.Annotations},
			Data:       cm.Data, BinaryData: cm.BinaryData})
	}
	if ref := g.Spec.IBUSpec.SeedImageRef.PullSecretRef; ibgu.PullSecretCopied(g) {
		secret := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: ref.Name}, secret); err != nil {
			if !apierrors.IsNotFound(err) {
				return out, fmt.Errorf("reading Secret %s/%s: %w", g.Namespace, ref.Name, err)
			}
			out.Missing = append(out.Missing, fmt.Sprintf("Secret %s/%s", g.Namespace, ref.Name))
		} else {
			out.Objects = append(out.Objects, &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: metav1.ObjectMeta{Namespace: lifecycleAgentNamespace, Name: secret.Name},
				Type:       secret.Type, Data: secret.Data})
		}
	}
	slices.Sort(out.Missing)
	return out, nil
}
