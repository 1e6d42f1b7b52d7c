package dashboard

import (
	"crypto/sha256"
	"fmt"
	"html/template"
	"io/fs"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// pageServer is a Server without informers: enough for what is answered before the hub is
// read (the page, its files, refused requests).
func pageServer(t *testing.T, namespace string) *Server {
	t.Helper()
	page, err := fs.ReadFile(web, "web/index.html")
	if err != nil {
		t.Fatal(err)
	}
	return &Server{token: "secret", namespace: namespace, indexPage: template.Must(template.New("index").Parse(string(page)))}
}

func TestRequestsAreRefusedBeforeTheHubIsRead(t *testing.T) {
	hosts := []string{"127.0.0.1:3270", "localhost:3270"}
	cases := map[string]struct {
		method, path, host, token, body string
		namespace                       string
		code                            int
		says                            string
	}{
		"the page":                      {method: "GET", path: "/", host: "127.0.0.1:3270", code: 200, says: `<meta name="cgu-token" content="secret">`},
		"the page by name":              {method: "GET", path: "/", host: "LOCALHOST:3270", code: 200, says: "Rollouts"},
		"a script":                      {method: "GET", path: "/static/app.js", host: "localhost:3270", code: 200, says: "EventSource"},
		"another host (DNS rebinding)":  {method: "GET", path: "/api/overview", host: "attacker.example:3270", code: 421, says: "unknown host"},
		"another port":                  {method: "GET", path: "/", host: "127.0.0.1:80", code: 421},
		"an action without the token":   {method: "POST", path: "/api/action", host: "127.0.0.1:3270", body: `{"action":"pause"}`, code: 403, says: "token"},
		"an action with a wrong token":  {method: "POST", path: "/api/action", host: "127.0.0.1:3270", token: "guess", body: `{"action":"pause"}`, code: 403},
		"an action that is not JSON":    {method: "POST", path: "/api/action", host: "127.0.0.1:3270", token: "secret", body: `pause`, code: 400, says: "reading the action"},
		"an unknown action":             {method: "POST", path: "/api/action", host: "127.0.0.1:3270", token: "secret", body: `{"namespace":"a","name":"u","action":"delete"}`, code: 400, says: `unknown action \"delete\"`},
		"a namespace not shown":         {method: "POST", path: "/api/action", host: "127.0.0.1:3270", token: "secret", body: `{"namespace":"b","name":"u","action":"pause"}`, namespace: "a", code: 400, says: `namespace \"b\" is not shown here`},
		"an action read as a page load": {method: "GET", path: "/api/action", host: "127.0.0.1:3270", code: 405},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := pageServer(t, tc.namespace)
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Host = tc.host
			if tc.token != "" {
				req.Header.Set(TokenHeader, tc.token)
			}
			rec := httptest.NewRecorder()
			s.Handler(hosts...).ServeHTTP(rec, req)
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, rec.Body.String())
			}
			if !strings.Contains(rec.Body.String(), tc.says) {
				t.Errorf("the answer lacks %q: %s", tc.says, rec.Body.String())
			}
			if tc.code != 421 && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'") {
				t.Errorf("no Content-Security-Policy on %s", tc.path)
			}
		})
	}
}

func TestHostsAndURL(t *testing.T) {
	cases := map[string]struct {
		addr  *net.TCPAddr
		hosts []string
		url   string
	}{
		"loopback":      {&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 3270}, []string{"127.0.0.1:3270", "localhost:3270"}, "http://127.0.0.1:3270/"},
		"IPv6 loopback": {&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, []string{"[::1]:80", "localhost:80"}, "http://localhost:80/"},
		"an interface":  {&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 8080}, []string{"10.0.0.5:8080"}, "http://10.0.0.5:8080/"},
		"every address": {&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, nil, "http://localhost:8080/"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.hosts, Hosts(tc.addr)); diff != "" {
				t.Errorf("Hosts (-want +got):\n%s", diff)
			}
			if got := URL(tc.addr); got != tc.url {
				t.Errorf("URL %q, want %q", got, tc.url)
			}
		})
	}
}

func TestBrokerCoalescesNotices(t *testing.T) {
	var b broker
	first, stop := b.subscribe()
	second, _ := b.subscribe()
	b.notify()
	b.notify()
	if len(first) != 1 || len(second) != 1 {
		t.Fatalf("pending notices %d and %d, want one each", len(first), len(second))
	}
	<-first
	stop()
	b.notify()
	if len(first) != 0 {
		t.Errorf("a stream that left was notified")
	}
	if len(second) != 1 {
		t.Errorf("a stream with a notice pending got %d", len(second))
	}
}

// The libraries the binary embeds are those hack/vendor-web.sh vendored, as the lock file
// pins them: a file changed by hand (or half vendored) differs from its digest.
func TestVendoredLibrariesMatchTheirDigests(t *testing.T) {
	sums, err := fs.ReadFile(web, "web/vendor/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		want, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		data, err := fs.ReadFile(web, "web/vendor/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(data)); got != want {
			t.Errorf("%s: digest %s, SHA256SUMS says %s: run make web-vendor", name, got, want)
		}
		checked++
	}
	if checked != 5 {
		t.Errorf("SHA256SUMS names %d files, want the 5 the page imports", checked)
	}
	lock, err := fs.ReadFile(web, "web/vendor/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, pin := range []string{`"node_modules/preact": {`, `"node_modules/htm": {`, `"node_modules/uplot": {`} {
		if !strings.Contains(string(lock), pin) {
			t.Errorf("the lock file pins no %s", pin)
		}
	}
}
