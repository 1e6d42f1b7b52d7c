package reconciled

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchFinalizers writes an object's finalizers with a merge patch that carries the
// resource version read, so that a change made since is not overwritten.
func PatchFinalizers(ctx context.Context, c client.Client, obj client.Object, finalizers []string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": finalizers, "resourceVersion": obj.GetResourceVersion()}})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("writing the finalizers: %w", err)
	}
	return nil
}
