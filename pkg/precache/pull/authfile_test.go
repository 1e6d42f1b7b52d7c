package pull_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"

	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
)

// authfile is a kubelet pull secret: "auth" is base64 of "user:password".
const authfile = `{"auths":{
  "quay.io": {"auth": "cXVheTpob3N0", "email": "x@example.com"},
  "quay.io/openshift-release-dev": {"auth": "cmVsZWFzZTpwYXRo"},
  "https://index.docker.io/v1/": {"username": "hub", "password": "hubpw"},
  "*.apps.example.com": {"auth": "d2lsZDpjYXJk"},
  "mirror.example.com:5000": {"identitytoken": "tok"}
}}`

func TestAuthfileKeychain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(authfile), 0o600); err != nil {
		t.Fatal(err)
	}
	kc, err := pull.AuthfileKeychain(path)
	if err != nil {
		t.Fatalf("AuthfileKeychain() error: %v", err)
	}
	cases := map[string]authn.AuthConfig{
		"quay.io/openshift-release-dev/ocp-release:4.16.1":   {Username: "release", Password: "path"},
		"quay.io/openshift-release-dev-x/ocp-release:4.16.1": {Username: "quay", Password: "host"},
		"quay.io/redhat/operator:1":                          {Username: "quay", Password: "host"},
		"docker.io/library/busybox":                          {Username: "hub", Password: "hubpw"},
		"registry.apps.example.com/ns/image:1":               {Username: "wild", Password: "card"},
		"a.b.apps.example.com/ns/image:1":                    {},
		"mirror.example.com:5000/ocp/release:1":              {IdentityToken: "tok"},
		"mirror.example.com/ocp/release:1":                   {},
		"registry.redhat.io/redhat/image:1":                  {},
	}
	for ref, want := range cases {
		t.Run(ref, func(t *testing.T) {
			parsed, err := name.ParseReference(ref)
			if err != nil {
				t.Fatal(err)
			}
			auth, err := kc.Resolve(parsed.Context())
			if err != nil {
				t.Fatalf("Resolve() error: %v", err)
			}
			got, err := auth.Authorization()
			if err != nil {
				t.Fatalf("Authorization() error: %v", err)
			}
			if got.Username != want.Username || got.Password != want.Password || got.IdentityToken != want.IdentityToken {
				t.Errorf("credentials = %+v, want %+v", got, want)
			}
		})
	}
}

func TestAuthfileKeychainErrors(t *testing.T) {
	if _, err := pull.AuthfileKeychain(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("AuthfileKeychain() of a missing file succeeded, want an error")
	}
	if _, err := pull.ParseAuthfile([]byte(`{"auths":{"quay.io":{"auth":"%%%"}}}`)); err == nil {
		t.Error("ParseAuthfile() of a bad auth field succeeded, want an error")
	}
}
