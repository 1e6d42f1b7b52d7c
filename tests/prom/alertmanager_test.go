package prom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/cgu-operator/cgu-operator/tests/prom"
)

// startAlertmanager starts Alertmanager for the test and stops it when the test ends.
func startAlertmanager(ctx context.Context, t *testing.T) *prom.Alertmanager {
	t.Helper()
	am, err := prom.StartAlertmanager(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := am.Stop(); err != nil {
			t.Error(err)
		}
	})
	return am
}

// matcher is a silence's matcher in Alertmanager's v2 API.
type matcher struct {
	Name    string `json:"name"`
	Value   string `json:"value"`
	IsRegex bool   `json:"isRegex"`
	IsEqual bool   `json:"isEqual"`
}

func TestAlertmanagerKeepsASilence(t *testing.T) {
	g := NewWithT(t)
	ctx := t.Context()
	am := startAlertmanager(ctx, t)
	g.Expect(am.URL()).To(MatchRegexp(`^http://127\.0\.0\.1:\d+$`))

	now := time.Now().UTC()
	silence, err := json.Marshal(map[string]any{
		"matchers":  []matcher{{Name: "cluster", Value: "spoke-1", IsEqual: true}},
		"startsAt":  now.Format(time.RFC3339),
		"endsAt":    now.Add(time.Hour).Format(time.RFC3339),
		"createdBy": "tests/prom",
		"comment":   "spoke-1 is upgrading",
	})
	g.Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, am.URL()+"/api/v2/silences", bytes.NewReader(silence))
	g.Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	var created struct {
		SilenceID string `json:"silenceID"`
	}
	g.Expect(doJSON(req, &created)).To(Succeed())
	g.Expect(created.SilenceID).NotTo(BeEmpty())

	var read struct {
		Matchers []matcher `json:"matchers"`
		Comment  string    `json:"comment"`
		Status   struct {
			State string `json:"state"`
		} `json:"status"`
	}
	g.Expect(getJSON(ctx, am.URL()+"/api/v2/silence/"+created.SilenceID, &read)).To(Succeed())
	g.Expect(read.Matchers).To(Equal([]matcher{{Name: "cluster", Value: "spoke-1", IsEqual: true}}))
	g.Expect(read.Comment).To(Equal("spoke-1 is upgrading"))
	g.Expect(read.Status.State).To(Equal("active"))
}
