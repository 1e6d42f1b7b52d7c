package pull

import (
	"context"
	"fmt"
	"net/http"
	"runtime"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Source fetches images by reference.
type Source interface {
	// Image is the image ref names; for a multi-platform image, the image of the node's
	// platform. Its layers may be fetched only when read, so reading them can fail as
	// fetching can.
	Image(ctx context.Context, ref string) (v1.Image, error)
}

// Remote is the Source that fetches images from their registries. It does not retry:
// Pull and the precache program retry whole steps, with their own back-off.
type Remote struct {
	// Keychain gives each registry's credentials; nil means anonymous.
	Keychain authn.Keychain
	// Transport carries the requests; nil means http.DefaultTransport.
	Transport http.RoundTripper
	// Platform picks the image of a multi-platform image; nil means the program's own,
	// which is the node's.
	Platform *v1.Platform
}

// Image fetches the manifest of ref; the layers are fetched when read, with ctx.
func (r Remote) Image(ctx context.Context, ref string) (v1.Image, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("parsing the image reference %q: %w", ref, err)
	}
	img, err := remote.Image(parsed, r.options(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	return img, nil
}

// options are the remote options of r, with go-containerregistry's own retries turned off.
func (r Remote) options(ctx context.Context) []remote.Option {
	keychain := r.Keychain
	if keychain == nil {
		keychain = authn.NewMultiKeychain()
	}
	transport := r.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	platform := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	if r.Platform != nil {
		platform = *r.Platform
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(keychain),
		remote.WithTransport(transport),
		remote.WithPlatform(platform),
		remote.WithRetryBackoff(remote.Backoff{Steps: 1}),
		remote.WithRetryPredicate(func(error) bool { return false }),
		remote.WithRetryStatusCodes(),
	}
}
