package spokehealth

import (
	"context"
	"errors"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterVersionName is the name of the one ClusterVersion of an OpenShift cluster.
const clusterVersionName = "version"

// Scheme returns a scheme with the Kubernetes types and those of config.openshift.io/v1, the
// types a client of KubeSource and of the report ConfigMap needs.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(configv1.Install(s))
	return s
}

// KubeSource reads ClusterOperators and the ClusterVersion "version" through a client, and
// alerts from Prometheus.
type KubeSource struct {
	// Client reads the config.openshift.io objects; its scheme must hold them (see Scheme).
	Client client.Reader
	// Prometheus reads the alerts; when nil, the alerts cannot be read.
	Prometheus *Prometheus
}

var _ Source = KubeSource{}

// ClusterOperators lists every ClusterOperator.
func (k KubeSource) ClusterOperators(ctx context.Context) ([]configv1.ClusterOperator, error) {
	var list configv1.ClusterOperatorList
	if err := k.Client.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("listing ClusterOperators: %w", err)
	}
	return list.Items, nil
}

// ClusterVersion reads the ClusterVersion "version".
func (k KubeSource) ClusterVersion(ctx context.Context) (*configv1.ClusterVersion, error) {
	var cv configv1.ClusterVersion
	if err := k.Client.Get(ctx, client.ObjectKey{Name: clusterVersionName}, &cv); err != nil {
		return nil, fmt.Errorf("reading ClusterVersion %s: %w", clusterVersionName, err)
	}
	return &cv, nil
}

// Alerts reads the firing and pending alerts from Prometheus.
func (k KubeSource) Alerts(ctx context.Context) ([]Alert, error) {
	if k.Prometheus == nil {
		return nil, errors.New("no Prometheus to read alerts from")
	}
	return k.Prometheus.Alerts(ctx)
}
