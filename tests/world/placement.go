package world

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/openshift/library-go/pkg/controller/controllercmd"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterinformers "open-cluster-management.io/api/client/cluster/informers/externalversions"
	placementctrl "open-cluster-management.io/ocm/pkg/placement/controllers"
)

// startPlacement runs Open Cluster Management's placement controller in-process: it turns
// each Placement's predicates over the ManagedClusters of the cluster sets bound in its
// namespace into PlacementDecisions, as on a real hub. It runs until ctx is done.
func startPlacement(ctx context.Context, cfg *rest.Config, log logr.Logger, wg *sync.WaitGroup) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("placement controller kube client: %w", err)
	}
	clusterClient, err := clusterclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("placement controller cluster client: %w", err)
	}
	informers := clusterinformers.NewSharedInformerFactory(clusterClient, 10*time.Minute)
	wg.Go(func() {
		err := placementctrl.RunControllerManagerWithInformers(ctx, &controllercmd.ControllerContext{}, kubeClient, clusterClient, informers)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "Placement controller stopped")
		}
		informers.Shutdown()
	})
	return nil
}
