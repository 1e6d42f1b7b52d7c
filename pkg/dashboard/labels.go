package dashboard

import (
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Bounds of the labels the map groups by: keys with more values than LabelValueLimit (a
// cluster's name or ID) group nothing, and LabelKeyLimit keys are offered at most.
const (
	LabelValueLimit = 200
	LabelKeyLimit   = 30
)

// Labels are the ManagedCluster labels of a rollout's clusters, for the map to group by:
// Keys lists the keys to offer; for one Key, Values are its values and Of gives each
// cluster of the map (by its index in Fleet.Names) the index of its value, -1 for none.
type Labels struct {
	Epoch  string   `json:"epoch"`
	Keys   []string `json:"keys,omitempty"`
	Key    string   `json:"key,omitempty"`
	Values []string `json:"values,omitempty"`
	Of     []int    `json:"of,omitempty"`
}

// LabelsOf reads the labels of the map's clusters: the keys to group by, and for key (when
// set) each cluster's value.
func LabelsOf(f *Fleet, clusters map[string]map[string]string, key string) Labels {
	out := Labels{Epoch: f.Epoch, Keys: []string{}}
	values := map[string]map[string]bool{}
	for _, name := range f.Names {
		for k, v := range clusters[name] {
			if strings.HasPrefix(k, "feature.open-cluster-management.io/") {
				continue
			}
			if values[k] == nil {
				values[k] = map[string]bool{}
			}
			if len(values[k]) <= LabelValueLimit {
				values[k][v] = true
			}
		}
	}
	for k, vs := range values {
		// A key with as many values as clusters (a name, an ID) groups nothing.
		if len(vs) <= LabelValueLimit && (len(vs) < len(f.Names) || len(f.Names) == 1) {
			out.Keys = append(out.Keys, k)
		}
	}
	slices.Sort(out.Keys)
	out.Keys = out.Keys[:min(len(out.Keys), LabelKeyLimit)]
	if key == "" || !slices.Contains(out.Keys, key) {
		return out
	}
	out.Key = key
	for v := range values[key] {
		out.Values = append(out.Values, v)
	}
	slices.Sort(out.Values)
	out.Of = make([]int, len(f.Names))
	for i, name := range f.Names {
		out.Of[i] = -1
		if v, ok := clusters[name][key]; ok {
			out.Of[i], _ = slices.BinarySearch(out.Values, v)
		}
	}
	return out
}

// serveLabels answers the map's question for a label to group by. It reads the
// ManagedClusters' metadata as the user, once per question: the informers do not hold the
// fleet's clusters. A user who may not list ManagedClusters gets no key to offer.
func (s *Server) serveLabels(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cgu, records, err := s.upgrade(r.Context(), client.ObjectKey{Namespace: q.Get("namespace"), Name: q.Get("name")})
	if err != nil {
		writeJSON(w, nil, err)
		return
	}
	if cgu == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	f := FleetOf(records, cgu.Status)
	if f == nil {
		writeJSON(w, Labels{Keys: []string{}}, nil)
		return
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: clusterv1.GroupName, Version: clusterv1.GroupVersion.Version, Kind: "ManagedClusterList"})
	if err := s.client.List(r.Context(), list); err != nil {
		writeJSON(w, Labels{Epoch: f.Epoch, Keys: []string{}}, nil)
		return
	}
	clusters := make(map[string]map[string]string, len(list.Items))
	for _, mc := range list.Items {
		clusters[mc.Name] = mc.Labels
	}
	writeJSON(w, LabelsOf(f, clusters, q.Get("key")), nil)
}
