package pull

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// dockerConfig is the format of the kubelet's /var/lib/kubelet/config.json, of podman's
// auth.json and of a docker config.json: credentials keyed by registry, optionally with a
// repository path ("quay.io/openshift-release-dev"), a scheme or a "*." wildcard.
type dockerConfig struct {
	Auths map[string]authn.AuthConfig `json:"auths"`
}

// authEntry is one key of the file, split into host and path, with its credentials.
type authEntry struct {
	host   string
	path   string
	config authn.AuthConfig
}

// fileKeychain resolves credentials from the entries of an auth file.
type fileKeychain struct {
	entries []authEntry
}

// AuthfileKeychain is the keychain of the credentials in the auth file at path, in the docker
// config format. A repository gets the credentials of the most specific key that matches
// it, and none (anonymous) when no key does.
func AuthfileKeychain(path string) (authn.Keychain, error) {
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("reading the auth file: %w", err)
	}
	return ParseAuthfile(data)
}

// ParseAuthfile is the keychain of an auth file's content; see AuthfileKeychain.
func ParseAuthfile(data []byte) (authn.Keychain, error) {
	var cfg dockerConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("decoding the auth file: %w", err)
	}
	k := fileKeychain{}
	for key, config := range cfg.Auths {
		host, path := splitAuthKey(key)
		k.entries = append(k.entries, authEntry{host: host, path: path, config: config})
	}
	// The most specific key first: a longer path, then a host without wildcard.
	sort.Slice(k.entries, func(i, j int) bool {
		a, b := k.entries[i], k.entries[j]
		if len(a.path) != len(b.path) {
			return len(a.path) > len(b.path)
		}
		if wa, wb := strings.HasPrefix(a.host, "*."), strings.HasPrefix(b.host, "*."); wa != wb {
			return wb
		}
		return a.host < b.host
	})
	return k, nil
}

// Resolve gives the credentials of the first entry matching the resource's registry and
// repository.
func (k fileKeychain) Resolve(res authn.Resource) (authn.Authenticator, error) {
	host := normalizeHost(res.RegistryStr())
	repo := strings.TrimPrefix(res.String(), res.RegistryStr())
	repo = strings.TrimPrefix(repo, "/")
	for _, e := range k.entries {
		if hostMatches(e.host, host) && (e.path == "" || repo == e.path || strings.HasPrefix(repo, e.path+"/")) {
			return authn.FromConfig(e.config), nil
		}
	}
	return authn.Anonymous, nil
}

// splitAuthKey splits a key of the file into its host and repository path, without scheme,
// trailing slash or Docker Hub's "/v1/" API suffix.
func splitAuthKey(key string) (host, path string) {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key = strings.TrimSuffix(key, "/")
	host, path, _ = strings.Cut(key, "/")
	host = normalizeHost(host)
	if host == dockerHub && (path == "v1" || path == "v2") {
		path = ""
	}
	return host, path
}

// dockerHub is the registry go-containerregistry names for Docker Hub's repositories.
const dockerHub = "index.docker.io"

// normalizeHost gives Docker Hub's several names the one go-containerregistry uses.
func normalizeHost(host string) string {
	switch host {
	case "docker.io", "registry-1.docker.io":
		return dockerHub
	}
	return host
}

// hostMatches tells whether a key's host, possibly "*.domain", matches a registry's host.
func hostMatches(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(host, suffix) && !strings.Contains(strings.TrimSuffix(host, suffix), ".")
	}
	return pattern == host
}
