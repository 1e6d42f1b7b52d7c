package analysis

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// The clusters go into the query as a regular expression matching exactly them, written as a
// PromQL string; a query that would measure more or nothing is refused.
func TestRender(t *testing.T) {
	q, err := Render(`sum by (cluster) (rate(apiserver_request_total{code=~"5..",cluster=~"{{clusters}}"}[5m]))`, []string{"sno-1", "sno-10", "odd.name"})
	if err != nil {
		t.Fatal(err)
	}
	want := `sum by (cluster) (rate(apiserver_request_total{code=~"5..",cluster=~"sno-1|sno-10|odd\\.name"}[5m]))`
	if q != want {
		t.Errorf("rendered\n%s\nwant\n%s", q, want)
	}
	// The string literal unquoted is the regular expression PromQL anchors and matches.
	re := regexp.MustCompile(`^(?:` + strings.ReplaceAll(`sno-1|sno-10|odd\\.name`, `\\`, `\`) + `)$`)
	for name, match := range map[string]bool{"sno-1": true, "sno-10": true, "odd.name": true, "oddxname": false, "sno-100": false} {
		if re.MatchString(name) != match {
			t.Errorf("%s matched: %v, want %v", name, !match, match)
		}
	}
	if _, err := Render(`up`, []string{"sno-1"}); err == nil || !strings.Contains(err.Error(), "does not contain {{clusters}}") {
		t.Errorf("a query without the placeholder: %v", err)
	}
	if _, err := Render(`up{cluster=~"{{clusters}}"}`, nil); err == nil {
		t.Errorf("no cluster: rendered")
	}
}

func TestDecode(t *testing.T) {
	got, err := Decode([]byte(`{"status":"success","data":{"resultType":"vector","result":[
		{"metric":{"cluster":"sno-1"},"value":[1764676800.5,"0.25"]},
		{"metric":{"cluster":"sno-2","job":"x"},"value":[1764676800.5,"NaN"]},
		{"metric":{"cluster":"sno-3"},"value":[1764676800.5,"+Inf"]}]}}`), DefaultClusterLabel)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got["sno-1"] != 0.25 || !math.IsNaN(got["sno-2"]) || !math.IsInf(got["sno-3"], 1) {
		t.Errorf("decoded %v", got)
	}
	empty, err := Decode([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`), DefaultClusterLabel)
	if err != nil || len(empty) != 0 {
		t.Errorf("an empty vector: %v, %v", empty, err)
	}
	for name, c := range map[string]struct{ body, want string }{
		"an error answer":   {`{"status":"error","errorType":"bad_data","error":"parse error at char 4"}`, "the query failed (bad_data): parse error at char 4"},
		"not the API":       {`<html>gateway timeout</html>`, "the answer is not the query API's"},
		"a range (matrix)":  {`{"status":"success","data":{"resultType":"matrix","result":[]}}`, "gives a matrix, not an instant vector"},
		"a scalar":          {`{"status":"success","data":{"resultType":"scalar","result":[]}}`, "gives a scalar"},
		"no cluster label":  {`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"1"]}]}}`, "a series has no cluster label"},
		"a cluster twice":   {`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"cluster":"a","pod":"1"},"value":[1,"1"]},{"metric":{"cluster":"a","pod":"2"},"value":[1,"2"]}]}}`, "cluster a has more than one series"},
		"a malformed value": {`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"cluster":"a"},"value":[1,"many"]}]}}`, `cluster a: a sample's value "many" is not a number`},
		"a short sample":    {`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"cluster":"a"},"value":["1"]}]}}`, "a sample is not [time, value]"},
	} {
		if _, err := Decode([]byte(c.body), DefaultClusterLabel); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, c.want)
		}
	}
}
