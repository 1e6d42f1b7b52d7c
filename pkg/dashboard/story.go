package dashboard

import (
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cgu-operator/cgu-operator/pkg/story"
)

// serveStory answers a cluster's story in a ClusterGroupUpgrade (pkg/story), read from the
// hub as the user when the page asks: the rollout, its records, the cluster's replicated
// policies, the rollout's view of its ClusterVersion and the events. A cluster the rollout
// does not select is 404 with the reason; what the user may not read is the API server's
// answer.
func (s *Server) serveStory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key := client.ObjectKey{Namespace: q.Get("namespace"), Name: q.Get("name")}
	if s.namespace != "" && key.Namespace != s.namespace {
		http.Error(w, "namespace "+key.Namespace+" is not shown here", http.StatusBadRequest)
		return
	}
	facts, err := story.Gather(r.Context(), s.client, key, q.Get("cluster"), s.now())
	var told story.Story
	if err == nil {
		told, err = story.Tell(facts)
	}
	var notSelected *story.NotSelectedError
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &notSelected):
		http.Error(w, err.Error(), http.StatusNotFound)
	case errors.As(err, &status) && status.Status().Code != 0:
		http.Error(w, err.Error(), int(status.Status().Code))
	default:
		writeJSON(w, told, err)
	}
}
