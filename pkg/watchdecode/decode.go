// Package watchdecode decodes the watch of a kind whose objects are large and change often
// (the root policies, each holding the compliance of every cluster it is placed on) in one
// pass over each event, where client-go's decoder goes over it about five times: it reads
// the frame with a JSON scanner, reads the event's envelope (finding its kind, validating it,
// then skipping over the object to keep it raw), then the object (finding its kind,
// validating it, decoding it). Here an event is a line, as the API server writes it, decoded
// with its object in one call of the same JSON decoder (validation, then decoding). Whatever
// is not one line holding an event of the kind (an ERROR event's Status, a stream framed
// otherwise) goes to client-go's decoder from that event on: the outcome is the same, only
// slower.
package watchdecode

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	sigsjson "sigs.k8s.io/json"
)

// frameBuffer is the reader's buffer: most events of a root policy placed on a few
// thousand clusters fit in it; a longer one is gathered in the decoder's own buffer.
const frameBuffer = 256 << 10

// Object is a pointer to a typed API object, *T.
type Object[T any] interface {
	*T
	runtime.Object
	metav1.Object
}

// Decoder is a watch.Decoder of the events of objects of type T.
type Decoder[T any, P Object[T]] struct {
	body io.ReadCloser
	r    *bufio.Reader
	// long holds a frame longer than the reader's buffer.
	long []byte
	// stock makes client-go's decoder over a stream; slow is the one made, from the first
	// frame this decoder did not take on.
	stock func(io.ReadCloser) watch.Decoder
	slow  watch.Decoder
}

// NewDecoder returns a decoder of the watch stream body; stock makes client-go's decoder
// over a stream, for what it does not decode itself.
func NewDecoder[T any, P Object[T]](body io.ReadCloser, stock func(io.ReadCloser) watch.Decoder) *Decoder[T, P] {
	return &Decoder[T, P]{body: body, r: bufio.NewReaderSize(body, frameBuffer), stock: stock}
}

// event is a watch event whose object is a T.
type event[T any] struct {
	Type   watch.EventType `json:"type"`
	Object T               `json:"object"`
}

// Decode returns the next event.
func (d *Decoder[T, P]) Decode() (watch.EventType, runtime.Object, error) {
	if d.slow != nil {
		return d.slow.Decode()
	}
	frame, err := d.frame()
	if err != nil {
		return "", nil, err
	}
	var e event[T]
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(frame, &e); err == nil && known(e.Type) {
		obj := P(&e.Object)
		// As client-go's decoder of a typed client leaves it: the kind is the cache's.
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		return e.Type, obj, nil
	}
	// Not an event of T on one line: client-go's decoder, from this frame on.
	d.slow = d.stock(struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(bytes.Clone(frame)), d.r), d.body})
	return d.slow.Decode()
}

// known reports whether t is an event type whose object is the watched kind's.
func known(t watch.EventType) bool {
	switch t {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		return true
	}
	return false
}

// frame returns the next line of the stream, without its newline; io.EOF at the end of
// the stream, io.ErrUnexpectedEOF when it ends inside a line.
func (d *Decoder[T, P]) frame() ([]byte, error) {
	line, err := d.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		d.long = append(d.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = d.r.ReadSlice('\n')
			d.long = append(d.long, line...)
		}
		line = d.long
	}
	switch {
	case err == nil:
		return line[:len(line)-1], nil
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(line)) == 0:
		return nil, io.EOF
	case errors.Is(err, io.EOF):
		return nil, io.ErrUnexpectedEOF
	}
	return nil, err
}

// Close closes the stream.
func (d *Decoder[T, P]) Close() {
	if d.slow != nil {
		d.slow.Close()
		return
	}
	_ = d.body.Close()
}
