package pull

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// jsonCatalog is a catalog file of several JSON documents: a package whose stable channel is
// a replaces chain, whose fast channel has a skip, and whose broken channels have two heads
// or none.
const jsonCatalog = `
{"schema":"olm.package","name":"sriov","defaultChannel":"stable"}
{"schema":"olm.channel","package":"sriov","name":"stable","entries":[
  {"name":"sriov.v1"},{"name":"sriov.v3","replaces":"sriov.v2"},{"name":"sriov.v2","replaces":"sriov.v1"}]}
{"schema":"olm.channel","package":"sriov","name":"fast","entries":[
  {"name":"sriov.v1"},{"name":"sriov.v2","replaces":"sriov.v1"},
  {"name":"sriov.v4","replaces":"sriov.v1","skips":["sriov.v2"],"skipRange":"<4.0.0"}]}
{"schema":"olm.channel","package":"sriov","name":"forked","entries":[
  {"name":"sriov.v1"},{"name":"sriov.v2","replaces":"sriov.v1"},{"name":"sriov.v3","replaces":"sriov.v1"}]}
{"schema":"olm.channel","package":"sriov","name":"cycle","entries":[
  {"name":"sriov.v1","replaces":"sriov.v2"},{"name":"sriov.v2","replaces":"sriov.v1"}]}
{"schema":"olm.channel","package":"sriov","name":"dangling","entries":[{"name":"sriov.v9"}]}
{"schema":"olm.bundle","package":"sriov","name":"sriov.v1","image":"r/sriov-bundle:v1"}
{"schema":"olm.bundle","package":"sriov","name":"sriov.v2","image":"r/sriov-bundle:v2"}
{"schema":"olm.bundle","package":"sriov","name":"sriov.v3","image":"r/sriov-bundle:v3",
 "relatedImages":[{"name":"operator","image":"r/sriov:v3"},{"name":"bundle","image":"r/sriov-bundle:v3"},{"name":"none","image":""}]}
{"schema":"olm.bundle","package":"sriov","name":"sriov.v4","image":"r/sriov-bundle:v4","relatedImages":[{"image":"r/sriov:v4"}],
 "properties":[{"type":"olm.package","value":{"packageName":"sriov","version":"4.0.0"}}]}
{"schema":"olm.deprecations","package":"sriov","entries":[{"reference":{"schema":"olm.package"},"message":"old"}]}
`

// yamlCatalog is a catalog file of several YAML documents.
const yamlCatalog = `---
schema: olm.package
name: ptp
defaultChannel: stable
---
schema: olm.channel
package: ptp
name: stable
entries:
  - name: ptp.v1
  - name: ptp.v2
    replaces: ptp.v1
---
schema: olm.bundle
package: ptp
name: ptp.v2
image: r/ptp-bundle:v2
relatedImages:
  - name: operator
    image: r/ptp:v2
`

func loadCatalog(t *testing.T, files ...string) *Catalog {
	t.Helper()
	c := NewCatalog()
	for _, f := range files {
		if err := c.Add(strings.NewReader(f), nil); err != nil {
			t.Fatalf("Add() error: %v", err)
		}
	}
	return c
}

func TestCatalogHead(t *testing.T) {
	c := loadCatalog(t, jsonCatalog, yamlCatalog)
	cases := map[string]struct {
		pkg, channel string
		want         []string
		wantErr      string
	}{
		"replaces chain, entries out of order": {pkg: "sriov", channel: "stable", want: []string{"r/sriov-bundle:v3", "r/sriov:v3"}},
		"default channel":                      {pkg: "sriov", want: []string{"r/sriov-bundle:v3", "r/sriov:v3"}},
		"a skipped entry is no head":           {pkg: "sriov", channel: "fast", want: []string{"r/sriov-bundle:v4", "r/sriov:v4"}},
		"YAML documents":                       {pkg: "ptp", want: []string{"r/ptp-bundle:v2", "r/ptp:v2"}},
		"two heads":                            {pkg: "sriov", channel: "forked", wantErr: `channel "forked" of package "sriov": the channel has 2 heads, want one: sriov.v2, sriov.v3`},
		"no head":                              {pkg: "sriov", channel: "cycle", wantErr: "the channel has no head"},
		"head is not a bundle":                 {pkg: "sriov", channel: "dangling", wantErr: `the head "sriov.v9" of channel "dangling" of package "sriov" is not a bundle of the catalog`},
		"no such channel":                      {pkg: "sriov", channel: "beta", wantErr: `package "sriov" has no channel "beta" (channels: cycle, dangling, fast, forked, stable)`},
		"no such package":                      {pkg: "ptp-operator", wantErr: `the catalog has no package "ptp-operator"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := c.Head(tc.pkg, tc.channel)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Head() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Head() error: %v", err)
			}
			if diff := cmp.Diff(tc.want, b.Images()); diff != "" {
				t.Errorf("images mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCatalogAddKeepsOnlyWantedPackages(t *testing.T) {
	c := NewCatalog()
	for _, f := range []string{jsonCatalog, yamlCatalog} {
		if err := c.Add(strings.NewReader(f), func(pkg string) bool { return pkg == "ptp" }); err != nil {
			t.Fatalf("Add() error: %v", err)
		}
	}
	if len(c.Packages) != 1 || c.Packages["ptp"] == nil {
		t.Errorf("packages = %v, want only ptp", packageNames(c))
	}
}

func TestCatalogAddErrors(t *testing.T) {
	cases := map[string]struct {
		data, want string
	}{
		"package without name":  {data: `{"schema":"olm.package","defaultChannel":"stable"}`, want: "a olm.package document has no name"},
		"channel without pkg":   {data: `{"schema":"olm.channel","name":"stable"}`, want: `olm.channel "stable" has no package`},
		"bundle without name":   {data: `{"schema":"olm.bundle","package":"p"}`, want: "a olm.bundle document has no name"},
		"entries not a list":    {data: `{"schema":"olm.channel","package":"p","name":"c","entries":{}}`, want: "decoding a catalog document"},
		"truncated JSON stream": {data: `{"schema":"olm.package","name":"p"} {"schema":`, want: "decoding a catalog document"},
		"YAML not an object":    {data: "- a\n- b\n", want: "decoding a catalog document"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := NewCatalog().Add(strings.NewReader(tc.data), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Add() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func packageNames(c *Catalog) []string {
	var names []string
	for name := range c.Packages {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// documents is the catalog as a stream of JSON documents, what Add reads back as c.
func documents(t *testing.T, c *Catalog) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	encode := func(v any) {
		if err := enc.Encode(v); err != nil {
			t.Fatalf("encoding a document: %v", err)
		}
	}
	for _, name := range packageNames(c) {
		p := c.Packages[name]
		encode(map[string]string{"schema": SchemaPackage, "name": p.Name, "defaultChannel": p.DefaultChannel})
		for ch, entries := range p.Channels {
			encode(map[string]any{"schema": SchemaChannel, "package": p.Name, "name": ch, "entries": entries})
		}
		for _, b := range p.Bundles {
			encode(map[string]any{"schema": SchemaBundle, "package": b.Package, "name": b.Name, "image": b.Image, "relatedImages": b.RelatedImages})
		}
	}
	return buf.Bytes()
}

// FuzzCatalog checks that decoding a catalog file never panics, that looking up the head of
// each channel of what it decoded never panics and gives a bundle of the channel, and that
// encoding what it decoded and decoding it again gives the same catalog.
func FuzzCatalog(f *testing.F) {
	f.Add([]byte(jsonCatalog))
	f.Add([]byte(yamlCatalog))
	f.Add([]byte(`{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"a","skips":["a"]}]}`))
	f.Add([]byte("---\n---\nschema: olm.bundle\n"))
	f.Add([]byte(`{"schema":"olm.package","name":"p"}{"schema":"olm.package","name":"q","defaultChannel":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := NewCatalog()
		if err := c.Add(bytes.NewReader(data), nil); err != nil {
			return
		}
		for _, name := range packageNames(c) {
			p := c.Packages[name]
			for ch, entries := range p.Channels {
				b, err := c.Head(name, ch)
				if err == nil && !hasEntry(entries, b.Name) {
					t.Fatalf("Head(%q, %q) = %q, not an entry of the channel", name, ch, b.Name)
				}
			}
		}
		back := NewCatalog()
		if err := back.Add(bytes.NewReader(documents(t, c)), nil); err != nil {
			t.Fatalf("decoding the encoded catalog: %v", err)
		}
		if diff := cmp.Diff(c, back, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip mismatch (-first +second):\n%s", diff)
		}
	})
}

func hasEntry(entries []ChannelEntry, name string) bool {
	for _, e := range entries {
		if e.Name == name {
			return true
		}
	}
	return false
}
