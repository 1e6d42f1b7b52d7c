package watchdecode_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
	policyv1 "open-cluster-management.io/governance-policy-propagator/api/v1"

	"github.com/cgu-operator/cgu-operator/pkg/operator"
	"github.com/cgu-operator/cgu-operator/pkg/watchdecode"
)

var scheme = operator.NewScheme()

// rootPolicy is a root policy placed on n clusters, half of them compliant, with a
// template, as the propagator keeps it.
func rootPolicy(name string, n int) *policyv1.Policy {
	p := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ztp-policies", Name: name, ResourceVersion: fmt.Sprint(1000 + n), UID: "0f1e2d3c",
			Labels: map[string]string{"app": "ztp"}, Annotations: map[string]string{"ran.openshift.io/ztp-deploy-wave": "100"}},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Inform, PolicyTemplates: []*policyv1.PolicyTemplate{{
			ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"apiVersion":"policy.open-cluster-management.io/v1","kind":"ConfigurationPolicy",` +
				`"metadata":{"name":"upgrade"},"spec":{"remediationAction":"inform","severity":"low","object-templates":[{"complianceType":"musthave",` +
				`"objectDefinition":{"apiVersion":"config.openshift.io/v1","kind":"ClusterVersion","metadata":{"name":"version"},"spec":{"desiredUpdate":{"version":"4.16.12"}}}}]}}`)},
		}}},
	}
	for i := range n {
		state := policyv1.NonCompliant
		if i%2 == 0 {
			state = policyv1.Compliant
		}
		c := fmt.Sprintf("sno-site-%05d", i)
		p.Status.Status = append(p.Status.Status, &policyv1.CompliancePerClusterStatus{ClusterName: c, ClusterNamespace: c, ComplianceState: state})
	}
	p.Status.ComplianceState = policyv1.NonCompliant
	return p
}

// stream writes events as the API server writes a watch in JSON: each a WatchEvent whose
// object is encoded with its kind, pretty or not.
func stream(t testing.TB, pretty bool, events ...watch.Event) []byte {
	t.Helper()
	codecs := serializer.NewCodecFactory(scheme)
	encoder := codecs.LegacyCodec(policyv1.GroupVersion, metav1.SchemeGroupVersion)
	s := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Pretty: pretty})
	var out bytes.Buffer
	for _, e := range events {
		raw, err := runtime.Encode(encoder, e.Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Encode(&metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: raw}}, &out); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// stock is client-go's decoder of a typed client's watch.
func stock(body io.ReadCloser) watch.Decoder {
	d, err := watchdecode.Stock(scheme)
	if err != nil {
		panic(err)
	}
	return d(body)
}

func fast(body io.ReadCloser) watch.Decoder {
	return watchdecode.NewDecoder[policyv1.Policy](body, stock)
}

// decodeAll decodes every event of raw, and the error that ended the stream.
func decodeAll(raw []byte, decoder func(io.ReadCloser) watch.Decoder) ([]watch.Event, error) {
	d := decoder(io.NopCloser(bytes.NewReader(raw)))
	defer d.Close()
	var out []watch.Event
	for {
		kind, obj, err := d.Decode()
		if err != nil {
			return out, err
		}
		out = append(out, watch.Event{Type: kind, Object: obj})
	}
}

// sameAsStock decodes raw with both decoders and fails unless they give the same events
// and end alike.
func sameAsStock(t *testing.T, raw []byte, want int) {
	t.Helper()
	got, gotErr := decodeAll(raw, fast)
	ref, refErr := decodeAll(raw, stock)
	if len(ref) != want {
		t.Fatalf("client-go's decoder read %d events, the test wrote %d", len(ref), want)
	}
	if !errors.Is(gotErr, refErr) && fmt.Sprint(gotErr) != fmt.Sprint(refErr) {
		t.Errorf("the stream ended with %v, client-go's decoder with %v", gotErr, refErr)
	}
	if len(got) != len(ref) {
		t.Fatalf("%d events decoded, client-go's decoder %d", len(got), len(ref))
	}
	for i := range ref {
		if got[i].Type != ref[i].Type || fmt.Sprintf("%T", got[i].Object) != fmt.Sprintf("%T", ref[i].Object) ||
			!equality.Semantic.DeepEqual(got[i].Object, ref[i].Object) {
			t.Errorf("event %d: %s %T %+v, client-go's decoder: %s %T %+v", i, got[i].Type, got[i].Object, got[i].Object,
				ref[i].Type, ref[i].Object, ref[i].Object)
		}
	}
}

func TestDecodesAsClientGo(t *testing.T) {
	bookmark := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "2000",
		Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version: 1 (2000)"}
	cases := map[string]struct {
		pretty bool
		events []watch.Event
	}{
		"every kind of event": {events: []watch.Event{
			{Type: watch.Added, Object: rootPolicy("upgrade", 3)}, {Type: watch.Modified, Object: rootPolicy("upgrade", 1000)},
			{Type: watch.Bookmark, Object: bookmark}, {Type: watch.Deleted, Object: rootPolicy("upgrade", 2)},
		}},
		// Longer than the reader's buffer: gathered across reads.
		"an event of 10,000 clusters": {events: []watch.Event{
			{Type: watch.Modified, Object: rootPolicy("upgrade", 10000)}, {Type: watch.Modified, Object: rootPolicy("operators", 1)},
		}},
		// Not a policy: client-go's decoder takes over, and decodes what follows too.
		"an ERROR event": {events: []watch.Event{
			{Type: watch.Modified, Object: rootPolicy("upgrade", 10)}, {Type: watch.Error, Object: gone},
			{Type: watch.Modified, Object: rootPolicy("upgrade", 20)},
		}},
		// Not one event a line: client-go's decoder takes over.
		"a stream pretty-printed": {pretty: true, events: []watch.Event{
			{Type: watch.Added, Object: rootPolicy("upgrade", 3)}, {Type: watch.Modified, Object: rootPolicy("upgrade", 4)},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sameAsStock(t, stream(t, tc.pretty, tc.events...), len(tc.events))
		})
	}
}

// A stream cut inside an event ends with io.ErrUnexpectedEOF, after the whole events.
func TestAStreamCutInsideAnEvent(t *testing.T) {
	raw := stream(t, false, watch.Event{Type: watch.Added, Object: rootPolicy("upgrade", 3)}, watch.Event{Type: watch.Modified, Object: rootPolicy("upgrade", 300)})
	events, err := decodeAll(raw[:len(raw)-100], fast)
	if len(events) != 1 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%d events, then %v; want 1, then %v", len(events), err, io.ErrUnexpectedEOF)
	}
	if events, err := decodeAll(raw, fast); len(events) != 2 || !errors.Is(err, io.EOF) {
		t.Errorf("the whole stream: %d events, then %v; want 2, then %v", len(events), err, io.EOF)
	}
}
