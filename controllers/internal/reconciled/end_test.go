package reconciled

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestEnd(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "things"}, "x", errors.New("modified"))
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		err, werr error
		wrote     bool
		failed    bool
		requeue   time.Duration
		wantErr   bool
	}{
		{name: "a pass that did its writes waits for time", wrote: true, requeue: time.Minute},
		{name: "a conflict on a write of the pass writes nothing and looks again", err: conflict, requeue: CacheRetry},
		{name: "a failed pass writes its failure and returns it", err: boom, wrote: true, failed: true, wantErr: true},
		{name: "a conflict on the status write looks again", werr: conflict, wrote: true, requeue: CacheRetry},
		{name: "a status write that fails returns its error", werr: boom, wrote: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrote, failed := false, false
			res, err := End(context.Background(), tc.err, time.Minute, func(f bool) error {
				wrote, failed = true, f
				return tc.werr
			})
			if wrote != tc.wrote || failed != tc.failed || res.RequeueAfter != tc.requeue || (err != nil) != tc.wantErr {
				t.Fatalf("wrote %v failed %v requeue %s err %v", wrote, failed, res.RequeueAfter, err)
			}
		})
	}
}

func TestSame(t *testing.T) {
	if !Same(map[string]int{"a": 1}, map[string]int{"a": 1}) || Same(map[string]int{"a": 1}, map[string]int{"a": 2}) {
		t.Fatal("Same compares the JSON")
	}
}
