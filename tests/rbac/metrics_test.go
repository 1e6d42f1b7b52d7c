package rbac_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// scrape GETs the operator's metrics with token ("" for none) and returns the status code.
func scrape(token string) func() (int, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		// The operator's certificate is self-signed.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	return func() (int, error) {
		req, err := http.NewRequest(http.MethodGet, "https://"+metricsAddr+"/metrics", nil)
		if err != nil {
			return 0, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
}

// scraperToken creates a ServiceAccount of the operator's namespace and returns a token of it.
func scraperToken(ctx context.Context, name string) string {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: name}}
	ExpectWithOffset(1, hub.Client.Create(ctx, sa)).To(Succeed())
	cs, err := kubernetes.NewForConfig(hub.Config)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	tr, err := cs.CoreV1().ServiceAccounts(operatorNS).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return tr.Status.Token
}

var _ = Describe("The secure metrics endpoint", func() {
	It("refuses unauthenticated and unauthorized scrapes and serves a scraper bound to metrics-reader", func(ctx SpecContext) {
		By("an unauthenticated scrape is refused")
		Eventually(scrape("")).WithTimeout(settle).WithPolling(200 * time.Millisecond).Should(Equal(http.StatusUnauthorized))

		By("an authenticated scrape without the metrics-reader role is forbidden")
		stranger := scraperToken(ctx, "stranger")
		Eventually(scrape(stranger)).WithTimeout(settle).Should(Equal(http.StatusForbidden))

		By("a scraper bound to config/rbac's metrics-reader ClusterRole is served")
		reader := &rbacv1.ClusterRole{}
		readManifest("metrics_reader_role.yaml", reader)
		Expect(hub.Client.Create(ctx, reader)).To(Succeed())
		Expect(hub.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: operatorNS, Name: "prometheus"}},
		})).To(Succeed())
		Eventually(scrape(scraperToken(ctx, "prometheus"))).WithTimeout(settle).Should(Equal(http.StatusOK))
	})
})
