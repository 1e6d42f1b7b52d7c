package spokejob

import (
	"context"
	"errors"
	"fmt"

	actionv1beta1 "github.com/stolostron/cluster-lifecycle-api/action/v1beta1"
	viewv1beta1 "github.com/stolostron/cluster-lifecycle-api/view/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/spokeobjects"
)

// Runner writes and reads the hub objects of spoke jobs. The operator needs, on the hub,
// get, list, watch, create, patch and delete of ManagedClusterViews (patch records the
// requested run) and get, list, watch, create and delete of ManagedClusterActions.
type Runner struct {
	// Client reads (through the manager's cache) and writes.
	Client client.Client
}

// Start makes the spoke run j, once per run: it creates what is missing of the views, the
// setup and the Job, as the package doc tells. It is cheap once the Job view shows the Job
// of j's run.
func (r Runner) Start(ctx context.Context, j Job) error {
	if err := j.Validate(); err != nil {
		return err
	}
	jobView, err := r.writer().EnsureView(ctx, j.jobView())
	if err != nil {
		return err
	}
	reportView, err := r.writer().EnsureView(ctx, j.reportView())
	if err != nil {
		return err
	}
	f := newFacts(jobView, reportView, nil)
	if f.ownJob(j) && f.requested == RunHash(j.Run) {
		return nil
	}
	actions, err := r.reader().actions(ctx, j, j.hubLabels())
	if err != nil {
		return err
	}
	in, err := plan(j, newFacts(jobView, reportView, actions))
	if err != nil {
		return fmt.Errorf("spoke job %s on %s: %w", j.Name, j.Cluster, err)
	}
	if in.record != nil {
		if err := r.record(ctx, jobView, *in.record); err != nil {
			return fmt.Errorf("recording the run of spoke job %s on %s: %w", j.Name, j.Cluster, err)
		}
	}
	for _, a := range in.create {
		if _, err := r.writer().CreateAction(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Reader reads where spoke jobs stand, through a client that cannot write: the gather step
// of a reconcile and the plugin's reads use it.
type Reader struct {
	Client client.Reader
}

// Read tells where j's run stands (Reader.Read).
func (r Runner) Read(ctx context.Context, j Job) (State, error) {
	return r.reader().Read(ctx, j)
}

// reader reads through the runner's client.
func (r Runner) reader() Reader { return Reader{Client: r.Client} }

// Read tells where j's run stands. It needs only what names the run (cluster, owner, name,
// run), so that tools that only read need not know the image.
func (r Reader) Read(ctx context.Context, j Job) (State, error) {
	if err := j.validateIdentity(); err != nil {
		return State{}, err
	}
	jobView, err := r.view(ctx, j.jobView())
	if err != nil {
		return State{}, err
	}
	reportView, err := r.view(ctx, j.reportView())
	if err != nil {
		return State{}, err
	}
	f := newFacts(jobView, reportView, nil)
	if !f.ownJob(j) {
		actions, err := r.actions(ctx, j, j.runLabels())
		if err != nil {
			return State{}, err
		}
		f = newFacts(jobView, reportView, actions)
	}
	return state(j, f), nil
}

// Stop ends j's run: it deletes the hub's other actions of j (of every run, so that none
// answered late creates the Job again), creates the actions deleting the spoke's Job and
// report, and deletes the views. Namespace, service account and RBAC stay on the spoke,
// shared by the runs, until the rollout's teardown (Teardown); the pods of the Job stay too
// (see the package doc). Once the views
// are gone, Stop does nothing more.
func (r Runner) Stop(ctx context.Context, j Job) error {
	if err := j.validateIdentity(); err != nil {
		return err
	}
	views := []*viewv1beta1.ManagedClusterView{j.jobView(), j.reportView()}
	var found []*viewv1beta1.ManagedClusterView
	for _, v := range views {
		got, err := r.reader().view(ctx, v)
		if err != nil {
			return err
		}
		if got != nil {
			found = append(found, got)
		}
	}
	if len(found) == 0 {
		return nil
	}
	stops := []*actionv1beta1.ManagedClusterAction{j.deleteAction(whatStopJob, jobsResource), j.deleteAction(whatStopReport, configMapsResource)}
	if err := r.deleteActions(ctx, j, stops); err != nil {
		return err
	}
	for _, a := range stops {
		if _, err := r.writer().CreateAction(ctx, a); err != nil {
			return err
		}
	}
	for _, v := range found {
		if err := r.writer().Delete(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// deleteActions deletes j's actions of every run but keep.
func (r Runner) deleteActions(ctx context.Context, j Job, keep []*actionv1beta1.ManagedClusterAction) error {
	actions, err := r.reader().actions(ctx, j, j.hubLabels())
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, a := range keep {
		kept[a.Name] = true
	}
	var errs []error
	for i := range actions {
		a := &actions[i]
		if kept[a.Name] {
			continue
		}
		errs = append(errs, r.writer().Delete(ctx, a))
	}
	return errors.Join(errs...)
}

// writer is the one writer of views and actions.
func (r Runner) writer() spokeobjects.Writer { return spokeobjects.Writer{Client: r.Client} }

// view returns the view as stored, nil when missing.
func (r Reader) view(ctx context.Context, want *viewv1beta1.ManagedClusterView) (*viewv1beta1.ManagedClusterView, error) {
	got := &viewv1beta1.ManagedClusterView{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), got)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading view %s/%s: %w", want.Namespace, want.Name, err)
	}
	return got, nil
}

// actions lists the actions of j's cluster namespace with labels.
func (r Reader) actions(ctx context.Context, j Job, labels map[string]string) ([]actionv1beta1.ManagedClusterAction, error) {
	var list actionv1beta1.ManagedClusterActionList
	if err := r.Client.List(ctx, &list, client.InNamespace(j.Cluster), client.MatchingLabels(labels)); err != nil {
		return nil, fmt.Errorf("listing the actions of spoke job %s on %s: %w", j.Name, j.Cluster, err)
	}
	return list.Items, nil
}

// record writes on the Job view what Start recorded.
func (r Runner) record(ctx context.Context, view *viewv1beta1.ManagedClusterView, rec record) error {
	patch := client.MergeFrom(view.DeepCopy())
	if view.Annotations == nil {
		view.Annotations = map[string]string{}
	}
	for key, value := range map[string]string{AnnotationRequested: rec.run, annotationReplaced: rec.replaced} {
		if value == "" {
			delete(view.Annotations, key)
		} else {
			view.Annotations[key] = value
		}
	}
	return r.Client.Patch(ctx, view, patch)
}
