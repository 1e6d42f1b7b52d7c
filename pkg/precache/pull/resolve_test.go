package pull_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull/pulltest"
)

func TestResolve(t *testing.T) {
	f := pulltest.NewFixture(t)
	cases := map[string]struct {
		spec         func(*ranv1alpha1.PrecachingSpec)
		want         func() []string
		wantExcluded int
		wantSpace    int64
	}{
		"release, two operators, an additional image": {
			spec: func(*ranv1alpha1.PrecachingSpec) {},
			want: f.Want,
		},
		"release only": {
			spec: func(s *ranv1alpha1.PrecachingSpec) {
				*s = ranv1alpha1.PrecachingSpec{PlatformImage: f.Release, SpaceRequired: "30Gi"}
			},
			want:      func() []string { return pulltest.Union([]string{f.Release}, f.ReleaseImages) },
			wantSpace: 30 << 30,
		},
		"a channel whose head skips an entry": {
			spec: func(s *ranv1alpha1.PrecachingSpec) {
				*s = ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{f.Index}, OperatorsPackagesAndChannels: []string{pulltest.SRIOV + ":fast"}}
			},
			want: func() []string { return pulltest.Union([]string{f.Index}, f.Heads[pulltest.SRIOV+":fast"]) },
		},
		"the default channel, with and without a colon": {
			spec: func(s *ranv1alpha1.PrecachingSpec) {
				*s = ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{f.Index}, OperatorsPackagesAndChannels: []string{pulltest.SRIOV + ":", pulltest.PTP}}
			},
			want: func() []string {
				return pulltest.Union([]string{f.Index}, f.Heads[pulltest.SRIOV+":stable"], f.Heads[pulltest.PTP+":stable"])
			},
		},
		"excludes, counted once per image": {
			spec: func(s *ranv1alpha1.PrecachingSpec) {
				s.ExcludePrecachePatterns = []string{"ocp-v4.0-art-dev-1", "kube-rbac-proxy", "", "  "}
				s.AdditionalImages = append(s.AdditionalImages, f.ReleaseImages[1], f.Extra)
			},
			want: func() []string {
				var want []string
				for _, ref := range f.Want() {
					if ref != f.ReleaseImages[1] && !strings.Contains(ref, "kube-rbac-proxy") {
						want = append(want, ref)
					}
				}
				return want
			},
			wantExcluded: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := f.Spec()
			tc.spec(&spec)
			plan, err := pull.Resolve(context.Background(), spec, pull.Remote{})
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			if diff := cmp.Diff(tc.want(), plan.Images); diff != "" {
				t.Errorf("images mismatch (-want +got):\n%s", diff)
			}
			if plan.Excluded != tc.wantExcluded || plan.SpaceRequired != tc.wantSpace {
				t.Errorf("excluded, space = %d, %d; want %d, %d", plan.Excluded, plan.SpaceRequired, tc.wantExcluded, tc.wantSpace)
			}
		})
	}
}

func TestResolveFixtureShape(t *testing.T) {
	f := pulltest.NewFixture(t)
	if len(f.ReleaseImages) != 5 {
		t.Errorf("release images = %d, want 5", len(f.ReleaseImages))
	}
	// The heads of the three channels differ, and each lists a bundle, an operator and the
	// shared proxy image.
	heads := map[string]bool{}
	for _, key := range []string{pulltest.SRIOV + ":stable", pulltest.SRIOV + ":fast", pulltest.PTP + ":stable"} {
		if len(f.Heads[key]) != 3 || heads[f.Heads[key][0]] {
			t.Errorf("head of %s = %v, want three images with a bundle of its own", key, f.Heads[key])
		}
		heads[f.Heads[key][0]] = true
	}
}

func TestResolveErrors(t *testing.T) {
	f := pulltest.NewFixture(t)
	cases := map[string]struct {
		spec      ranv1alpha1.PrecachingSpec
		fail      bool
		want      string
		retryable bool
	}{
		"no such release image": {
			spec: ranv1alpha1.PrecachingSpec{PlatformImage: f.Registry.Ref("openshift-release-dev/ocp-release", "9.9.9")},
			want: "MANIFEST_UNKNOWN",
		},
		"a release image without image-references": {
			spec: ranv1alpha1.PrecachingSpec{PlatformImage: f.Extra},
			want: "the image has no file release-manifests/image-references",
		},
		"no such package": {
			spec: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{f.Index}, OperatorsPackagesAndChannels: []string{"metallb-operator:stable"}},
			want: `no index image has the package "metallb-operator"`,
		},
		"no such channel": {
			spec: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{f.Index}, OperatorsPackagesAndChannels: []string{pulltest.PTP + ":fast"}},
			want: `package "ptp-operator" has no channel "fast" (channels: stable)`,
		},
		"operators without an index": {
			spec: ranv1alpha1.PrecachingSpec{OperatorsPackagesAndChannels: []string{pulltest.PTP}},
			want: "operatorsIndexes lists no index image",
		},
		"an entry without package": {
			spec: ranv1alpha1.PrecachingSpec{OperatorsIndexes: []string{f.Index}, OperatorsPackagesAndChannels: []string{":stable"}},
			want: `entry ":stable" names no package`,
		},
		"space not a quantity": {
			spec: ranv1alpha1.PrecachingSpec{SpaceRequired: "lots"},
			want: `spaceRequired "lots" is not a quantity`,
		},
		"an additional image that is no reference": {
			spec: ranv1alpha1.PrecachingSpec{AdditionalImages: []string{"quay.io/UPPER/case:1"}},
			want: `"quay.io/UPPER/case:1" is not an image reference`,
		},
		"the registry answers 503": {
			spec:      f.Spec(),
			fail:      true,
			want:      "503 Service Unavailable",
			retryable: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f.Registry.FailAll(tc.fail)
			defer f.Registry.FailAll(false)
			_, err := pull.Resolve(context.Background(), tc.spec, pull.Remote{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Resolve() error = %v, want one containing %q", err, tc.want)
			}
			if pull.IsRetryable(err) != tc.retryable {
				t.Errorf("IsRetryable(%v) = %t, want %t", err, !tc.retryable, tc.retryable)
			}
		})
	}
}
