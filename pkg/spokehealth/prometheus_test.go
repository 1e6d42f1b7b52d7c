package spokehealth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const alertsAnswerJSON = `{"status":"success","data":{"alerts":[
 {"labels":{"alertname":"Watchdog","severity":"none","namespace":"openshift-monitoring"},"annotations":{"summary":"An alert that should always be firing"},"state":"firing","activeAt":"2025-03-14T08:00:00Z","value":"1e+00"},
 {"labels":{"alertname":"KubeAPIDown","severity":"critical"},"state":"pending","activeAt":"2025-03-14T09:00:00Z","value":"1e+00"},
 {"labels":{"alertname":"NoSeverity"},"state":"firing"}
]}}`

// answer is what the test server answers to GET /api/v1/alerts.
type answer struct {
	code int
	body string
}

// serve starts a Prometheus that gives a, and records the requests' Authorization headers
// and paths.
func serve(t *testing.T, a answer) (url string, auth, paths *[]string) {
	t.Helper()
	auth, paths = &[]string{}, &[]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*auth = append(*auth, r.Header.Get("Authorization"))
		*paths = append(*paths, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.code)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, auth, paths
}

func TestPrometheusAlerts(t *testing.T) {
	srvURL, auth, paths := serve(t, answer{code: http.StatusOK, body: alertsAnswerJSON})
	p := &Prometheus{URL: srvURL + "/", Token: "sha256~secret", HTTP: http.DefaultClient}
	got, err := p.Alerts(context.Background())
	if err != nil {
		t.Fatalf("Alerts() error: %v", err)
	}
	want := []Alert{
		{Name: "Watchdog", Severity: "none", State: "firing"},
		{Name: "KubeAPIDown", Severity: "critical", State: "pending"},
		{Name: "NoSeverity", Severity: "", State: "firing"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Alerts() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Bearer sha256~secret"}, *auth); diff != "" {
		t.Errorf("Authorization headers mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GET /api/v1/alerts"}, *paths); diff != "" {
		t.Errorf("requests mismatch (-want +got):\n%s", diff)
	}
}

func TestPrometheusAlertsNoTokenNoAlerts(t *testing.T) {
	srvURL, auth, _ := serve(t, answer{code: http.StatusOK, body: `{"status":"success","data":{"alerts":[]}}`})
	got, err := (&Prometheus{URL: srvURL}).Alerts(context.Background())
	if err != nil {
		t.Fatalf("Alerts() error: %v", err)
	}
	if got == nil || len(got) != 0 {
		t.Errorf("Alerts() = %#v, want an empty, non-nil slice", got)
	}
	if diff := cmp.Diff([]string{""}, *auth); diff != "" {
		t.Errorf("Authorization headers mismatch (-want +got):\n%s", diff)
	}
}

func TestPrometheusAlertsErrors(t *testing.T) {
	cases := map[string]struct {
		answer answer
		want   []string
	}{
		"forbidden": {
			answer: answer{code: http.StatusForbidden, body: "Forbidden (user=system:serviceaccount:ns:sa, verb=get, resource=prometheuses)"},
			want:   []string{"/api/v1/alerts", "answer 403 Forbidden", `"Forbidden (user=system:serviceaccount:ns:sa`},
		},
		"server error with a long body": {
			answer: answer{code: http.StatusBadGateway, body: strings.Repeat("x", 5000)},
			want:   []string{"answer 502 Bad Gateway", strings.Repeat("x", 200) + `..."`},
		},
		"status error": {
			answer: answer{code: http.StatusOK, body: `{"status":"error","errorType":"unavailable","error":"no store available"}`},
			want:   []string{"/api/v1/alerts", `status "error", error type "unavailable": no store available`},
		},
		"garbage": {
			answer: answer{code: http.StatusOK, body: "<html>login</html>"},
			want:   []string{"/api/v1/alerts", `decoding the answer "<html>login</html>"`, "invalid character"},
		},
		"wrong shape": {
			answer: answer{code: http.StatusOK, body: `{"status":"success","data":{"alerts":{"labels":{}}}}`},
			want:   []string{"decoding the answer", "cannot unmarshal object"},
		},
		"too large": {
			answer: answer{code: http.StatusOK, body: `{"status":"success","data":{"alerts":[` + strings.Repeat(" ", maxAnswerBytes) + `]}}`},
			want:   []string{"the answer is larger than 16777216 bytes"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srvURL, _, _ := serve(t, tc.answer)
			got, err := (&Prometheus{URL: srvURL, Token: "t"}).Alerts(context.Background())
			if err == nil {
				t.Fatalf("Alerts() = %v, want an error", got)
			}
			if got != nil {
				t.Errorf("Alerts() = %v with an error, want nil", got)
			}
			for _, w := range append(tc.want, srvURL) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Alerts() error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestPrometheusAlertsUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srvURL := srv.URL
	srv.Close()
	_, err := (&Prometheus{URL: srvURL}).Alerts(context.Background())
	if err == nil || !strings.Contains(err.Error(), "reading alerts from "+srvURL+"/api/v1/alerts") {
		t.Errorf("Alerts() error = %v, want one naming %s", err, srvURL)
	}
}
