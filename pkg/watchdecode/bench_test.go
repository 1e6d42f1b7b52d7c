package watchdecode_test

import (
	"bytes"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/watch"
)

// BenchmarkDecode decodes 20 events of a root policy placed on 1,000 clusters, as the
// operator receives them during a rollout: with client-go's decoder and with this one.
func BenchmarkDecode(b *testing.B) {
	var events []watch.Event
	for range 20 {
		events = append(events, watch.Event{Type: watch.Modified, Object: rootPolicy("upgrade", 1000)})
	}
	raw := stream(b, false, events...)
	for _, d := range []struct {
		name    string
		decoder func(io.ReadCloser) watch.Decoder
	}{{"client-go", stock}, {"watchdecode", fast}} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				dec := d.decoder(io.NopCloser(bytes.NewReader(raw)))
				for {
					if _, _, err := dec.Decode(); err != nil {
						break
					}
				}
			}
		})
	}
}
