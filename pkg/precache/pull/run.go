package pull

import (
	"context"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache"
)

// Run is what the precache program does between reading its spec and writing its summary:
// it reports the Resolving phase, resolves the spec through opts.Source, retrying as pulls
// do, and pulls the plan into store. The program and the test simulator both run it.
func Run(ctx context.Context, spec ranv1alpha1.PrecachingSpec, store Store, opts Options, report func(precache.Summary)) precache.Summary {
	s := precache.Summary{Run: opts.Run, Phase: precache.PhaseResolving}
	report(s)
	var plan Plan
	err := opts.Retry(ctx, func() error {
		var err error
		plan, err = Resolve(ctx, spec, opts.Source)
		return err
	})
	if err != nil {
		return Failure(s, err)
	}
	return Pull(ctx, plan, store, opts, report)
}
