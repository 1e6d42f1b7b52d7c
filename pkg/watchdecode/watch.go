package watchdecode

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// Watch makes the watches of one kind, of resource resource in group version gv, with a
// Decoder of T.
type Watch[T any, P Object[T]] struct {
	client   rest.Interface
	resource string
	params   runtime.ParameterCodec
	stock    func(io.ReadCloser) watch.Decoder
}

// NewWatch returns the watches of resource, a kind of gv that scheme knows, from the API
// server cfg points at.
func NewWatch[T any, P Object[T]](cfg *rest.Config, scheme *runtime.Scheme, gv schema.GroupVersion, resource string) (*Watch[T, P], error) {
	codecs := serializer.NewCodecFactory(scheme)
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion, cfg.APIPath = &gv, "/apis"
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	cfg.ContentType, cfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
	cfg.Timeout = 0 // a watch lasts as long as the server keeps it
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("a client of %s: %w", resource, err)
	}
	stock, err := Stock(scheme)
	if err != nil {
		return nil, err
	}
	return &Watch[T, P]{client: client, resource: resource, params: runtime.NewParameterCodec(scheme), stock: stock}, nil
}

// Stock returns client-go's decoder of a typed client's JSON watch, with scheme's types.
func Stock(scheme *runtime.Scheme) (func(io.ReadCloser) watch.Decoder, error) {
	codecs := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.WithoutConversion().SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok || info.StreamSerializer == nil {
		return nil, fmt.Errorf("no JSON stream serializer")
	}
	objects := runtime.WithoutVersionDecoder{Decoder: info.Serializer}
	return func(body io.ReadCloser) watch.Decoder {
		frames := info.StreamSerializer.NewFrameReader(body)
		return restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), objects)
	}, nil
}

// Start watches with opts, as client-go's request would, its events decoded by a Decoder.
func (w *Watch[T, P]) Start(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	body, err := w.client.Get().Resource(w.resource).VersionedParams(&opts, w.params).Stream(ctx)
	if err != nil {
		return nil, err
	}
	return watch.NewStreamWatcher(NewDecoder[T, P](body, w.stock),
		errors.NewClientErrorReporter(http.StatusInternalServerError, "GET", "ClientWatchDecoding")), nil
}

// ListerWatcher lists with lw, and watches with w: opts, the label selector set, are
// what the cache's own watch would ask for.
type ListerWatcher[T any, P Object[T]] struct {
	Lister  toolscache.ListerWithContext
	Watches *Watch[T, P]
	// Selector is the label selector of every watch; Bookmarks asks for bookmark events.
	Selector  string
	Bookmarks bool
}

// List lists, as the cache's own list.
func (l *ListerWatcher[T, P]) List(opts metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), opts)
}

// ListWithContext lists, as the cache's own list.
func (l *ListerWatcher[T, P]) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return l.Lister.ListWithContext(ctx, opts)
}

// Watch watches, with a Decoder.
func (l *ListerWatcher[T, P]) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), opts)
}

// WatchWithContext watches, with a Decoder.
func (l *ListerWatcher[T, P]) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.LabelSelector, opts.AllowWatchBookmarks = l.Selector, l.Bookmarks
	return l.Watches.Start(ctx, opts)
}
