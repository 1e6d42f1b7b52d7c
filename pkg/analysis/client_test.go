package analysis

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// answer serves an instant query's answer of one series per cluster the query names, with
// value, to a client that presents token.
func answer(token, value string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if got := r.Header.Get("Authorization"); token != "" && got != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		q := r.FormValue("query")
		var series []string
		for _, c := range []string{"sno-1", "sno-2", "sno-3"} {
			if strings.Contains(q, c) {
				series = append(series, `{"metric":{"cluster":"`+c+`"},"value":[1700000000,"`+value+`"]}`)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(series, ",") + `]}}`))
	}
}

func TestEndpointVerifiesTLSAndSendsTheToken(t *testing.T) {
	srv := httptest.NewUnstartedServer(answer("s3cret", "0.5"))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	g := Gate{Mode: Absolute, Success: Condition{Op: Less, Threshold: 1}}
	ctx, at := context.Background(), time.Unix(1700000000, 0)
	query := `errors{cluster=~"{{clusters}}"}`

	m := Endpoint{URL: srv.URL, Token: "s3cret", CA: ca}.Measure(ctx, g, query, DefaultClusterLabel, []string{"sno-1", "sno-2"}, nil, at)
	if m.Err != "" || len(m.Values) != 2 || m.Values["sno-1"] != 0.5 {
		t.Fatalf("measurement %+v, want 0.5 for sno-1 and sno-2", m)
	}
	for name, e := range map[string]Endpoint{
		"a server certificate no CA vouches for": {URL: srv.URL, Token: "s3cret"},
		"a wrong token":                          {URL: srv.URL, Token: "guess", CA: ca},
		"a CA bundle without a certificate":      {URL: srv.URL, Token: "s3cret", CA: []byte("not PEM")},
		"an endpoint that is down":               {URL: "https://127.0.0.1:1", Token: "s3cret", CA: ca},
	} {
		t.Run(name, func(t *testing.T) {
			m := e.Measure(ctx, g, query, DefaultClusterLabel, []string{"sno-1"}, nil, at)
			if m.Err == "" || m.Values != nil {
				t.Fatalf("measurement %+v, want an error and no values", m)
			}
			if v := Judge(g, []string{"sno-1"}, []Measurement{m}); v.Phase != Inconclusive {
				t.Fatalf("verdict %s, want Inconclusive: %s", v.Phase, v.Message)
			}
		})
	}
}

func TestMeasureAComparisonReadsTheBaselineToo(t *testing.T) {
	srv := httptest.NewServer(answer("", "2"))
	defer srv.Close()
	g := Gate{Mode: Comparison}
	m := Endpoint{URL: srv.URL}.Measure(context.Background(), g, `x{cluster=~"{{clusters}}"}`, DefaultClusterLabel,
		[]string{"sno-1"}, []string{"sno-2", "sno-3"}, time.Now())
	if m.Err != "" || len(m.Values) != 1 || len(m.Baseline) != 2 {
		t.Fatalf("measurement %+v, want one upgraded value and two baseline values", m)
	}
}

func TestCheckQuery(t *testing.T) {
	for query, want := range map[string]string{
		`sum by (cluster) (rate(apiserver_request_total{code=~"5..",cluster=~"{{clusters}}"}[5m]))`: "",
		`cluster:apiserver_request_error_ratio:rate5m{cluster=~"{{clusters}}"}`:                     "",
		`sum(rate(apiserver_request_total[5m]))`:                                                    "does not contain {{clusters}}",
		`sum by (cluster) (rate(x{cluster=~"{{clusters}}"}[5m])`:                                    "does not parse as PromQL",
		`x{cluster=~"{{clusters}}"}[5m]`:                                                            "gives a range vector, not an instant vector",
		`x{cluster={{clusters}}}`:                                                                   "does not parse as PromQL",
	} {
		err := CheckQuery(query)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want none", query, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want an error saying %q", query, err, want)
		}
	}
}
