package clustergroupupgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/apiclient"
	"github.com/cgu-operator/cgu-operator/pkg/cgu"
	"github.com/cgu-operator/cgu-operator/pkg/rollout"
	"github.com/cgu-operator/cgu-operator/pkg/silences"
)

// Alertmanager is the Alertmanager spec.silenceAlerts silences on (docs/silences.md).
type Alertmanager struct {
	// URL is its v2 API's base; "" when the operator has none.
	URL string
	// SecretNamespace and SecretName name a Secret with `token` and `ca.crt`, either or
	// both; SecretName "" for none.
	SecretNamespace, SecretName string
}

// silenceRetry is how soon a pass that could not make or expire a silence tries again.
const silenceRetry = 30 * time.Second

// silenceTimeout bounds one call to the Alertmanager.
const silenceTimeout = 10 * time.Second

// applySilences makes and expires the pass's silences (cgu.Silences) and puts what it did in
// the status to write: the silences kept and made, and what failed. A failure does not stop
// the rollout: the status says it, an event too, and the next pass tries again.
func (r *Reconciler) applySilences(ctx context.Context, s *scope) error {
	in := s.in.Silences
	if in.Empty() {
		if st := s.in.Status.Silences; st != nil && st.Error != "" && len(st.Clusters) == 0 {
			s.in.Status.Silences = nil // nothing left to do: the failure is over
		}
		return nil
	}
	keep := in.Keep
	made, ends := map[string]string{}, map[string]time.Time{}
	var problems []string
	am, err := r.alertmanager(ctx)
	if err != nil {
		problems = append(problems, err.Error())
		keep = append(keep, in.Expire...) // still there: expired on a later pass
	} else {
		for _, sil := range in.Expire {
			if err := am.Expire(ctx, sil.ID); err != nil {
				problems = append(problems, err.Error())
				keep = append(keep, sil)
			}
		}
		existing := existingSilences(ctx, am, in)
		for cluster, want := range in.Make {
			if id, ok := existing[silenceKey(want)]; ok && want.ID == "" {
				made[cluster], ends[cluster] = id, want.EndsAt // made by a pass whose status write was lost
				continue
			}
			id, err := am.Create(ctx, want)
			if err != nil {
				problems = append(problems, fmt.Sprintf("cluster %s: %v", cluster, err))
				continue
			}
			made[cluster], ends[cluster] = id, want.EndsAt
		}
	}
	problem := strings.Join(problems, "; ")
	if problem != "" {
		s.lookAgain(silenceRetry)
		r.event(s, corev1.EventTypeWarning, EventSilenceFailed, "Could not make or expire every silence on the Alertmanager: %s", problem)
	}
	s.in.Status.Silences = cgu.SilencesStatus(keep, made, ends, rollout.Truncate(problem, ranv1alpha1.MessageLimit))
	return nil
}

// EventSilenceFailed is the reason of the warning that a silence could not be made or expired.
const EventSilenceFailed = "SilenceFailed"

// existingSilences are the operator's silences on the Alertmanager that a pass about to make
// some would make again, by silenceKey: those a pass made before its status write was lost.
// Nothing when the list cannot be read (the silences are then made; the duplicates end with
// their deadline).
func existingSilences(ctx context.Context, am silences.Client, in cgu.Silences) map[string]string {
	out := map[string]string{}
	if len(in.Make) == 0 {
		return out
	}
	list, err := am.List(ctx, cgu.SilenceCreatedBy)
	if err != nil {
		return out
	}
	for _, sil := range list {
		out[silenceKey(sil)] = sil.ID
	}
	return out
}

// silenceKey tells a silence by its comment (the rollout and the cluster) and its matchers.
func silenceKey(s silences.Silence) string {
	var b strings.Builder
	b.WriteString(s.Comment)
	for _, m := range s.Matchers {
		fmt.Fprintf(&b, "|%s=%s", m.Name, m.Value)
	}
	return b.String()
}

// alertmanager is the client of the operator's Alertmanager, with the token and CA of its
// Secret, read uncached.
func (r *Reconciler) alertmanager(ctx context.Context) (silences.Client, error) {
	am := r.Alertmanager
	c := silences.Client{URL: am.URL, Timeout: silenceTimeout}
	if am.URL == "" {
		return c, errors.New("the operator has no Alertmanager (--alertmanager-url)")
	}
	if am.SecretName == "" {
		return c, nil
	}
	var err error
	c.Token, c.CA, err = apiclient.Credentials(ctx, r.Reader, am.SecretNamespace, am.SecretName, "--alertmanager-secret")
	return c, err
}

// expireSilences expires the silences a deleted rollout's status lists, best effort: those
// it cannot end now end at their deadline.
func (r *Reconciler) expireSilences(ctx context.Context, upgrade *ranv1alpha1.ClusterGroupUpgrade) {
	st := upgrade.Status.Silences
	if st == nil || len(st.Clusters) == 0 {
		return
	}
	am, err := r.alertmanager(ctx)
	if err == nil {
		for _, sil := range st.Clusters {
			if err = am.Expire(ctx, sil.ID); err != nil {
				break
			}
		}
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Could not expire the silences of a deleted rollout; they end at their deadline", "error", err.Error())
	}
}
