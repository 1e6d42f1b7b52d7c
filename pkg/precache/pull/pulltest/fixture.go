package pulltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
	"github.com/cgu-operator/cgu-operator/pkg/precache/pull"
)

// The packages of the fixture's catalog.
const (
	// SRIOV has the channels stable (the default: v4.16.0 <- v4.16.1 <- v4.16.2, a replaces
	// chain) and fast (v4.17.2 replaces v4.17.0 and skips v4.17.1, which replaces v4.17.0).
	SRIOV = "sriov-network-operator"
	// PTP has the channel stable, its default: v4.16.0 <- v4.16.1.
	PTP = "ptp-operator"
)

// fixtureLayerSize is the size of each layer of the fixture's images: small, so that a
// fixture takes milliseconds.
const fixtureLayerSize = 512

// Fixture is a registry holding what a precaching spec names: a release image whose
// release-manifests/image-references names five images, an index image whose file-based
// catalog (/configs/<package>/catalog.json) has the packages SRIOV and PTP, and every image
// these name.
type Fixture struct {
	Registry *Registry
	// Release is the release image, by digest. Its last layer holds image-references; a
	// layer below holds an older image-references naming an image that does not exist.
	Release string
	// ReleaseImages are the five images the release's image-references names.
	ReleaseImages []string
	// Index is the index image, by tag.
	Index string
	// Heads maps "package:channel" to the images of the bundle at the channel's head: the
	// bundle image and its related images, for every channel of the catalog.
	Heads map[string][]string
	// Extra is one more image, for additionalImages.
	Extra string
}

// channel is a channel of the fixture's catalog: its entries, bottom first.
type channel struct {
	name    string
	entries []pull.ChannelEntry
}

// NewFixture pushes the fixture's images to a new registry.
func NewFixture(t T) *Fixture {
	t.Helper()
	r := NewRegistry(t)
	f := &Fixture{Registry: r, Heads: map[string][]string{}}
	for i := range 5 {
		f.ReleaseImages = append(f.ReleaseImages, r.PushRandom(t, fmt.Sprintf("openshift-release-dev/ocp-v4.0-art-dev-%d", i), "latest", fixtureLayerSize, 1))
	}
	f.Release = f.pushRelease(t)
	proxy := r.PushRandom(t, "openshift4/ose-kube-rbac-proxy", "v4.16", fixtureLayerSize, 1)
	sriov := f.pushPackage(t, SRIOV, "stable", proxy, []channel{
		{name: "stable", entries: []pull.ChannelEntry{
			{Name: "v4.16.0"}, {Name: "v4.16.1", Replaces: "v4.16.0"}, {Name: "v4.16.2", Replaces: "v4.16.1"},
		}},
		{name: "fast", entries: []pull.ChannelEntry{
			{Name: "v4.17.0"}, {Name: "v4.17.1", Replaces: "v4.17.0"},
			{Name: "v4.17.2", Replaces: "v4.17.0", Skips: []string{"v4.17.1"}, SkipRange: ">=4.16.0 <4.17.2"},
		}},
	})
	ptp := f.pushPackage(t, PTP, "stable", proxy, []channel{
		{name: "stable", entries: []pull.ChannelEntry{{Name: "v4.16.0"}, {Name: "v4.16.1", Replaces: "v4.16.0"}}},
	})
	f.Index = f.pushIndex(t, Files{"configs/" + SRIOV + "/catalog.json": sriov, "configs/" + PTP + "/catalog.json": ptp})
	f.Extra = r.PushRandom(t, "extra/tools", "latest", fixtureLayerSize, 1)
	return f
}

// Spec names the release, SRIOV on stable and PTP on its default channel through the index,
// and Extra.
func (f *Fixture) Spec() ranv1alpha1.PrecachingSpec {
	return ranv1alpha1.PrecachingSpec{
		PlatformImage:                f.Release,
		OperatorsIndexes:             []string{f.Index},
		OperatorsPackagesAndChannels: []string{SRIOV + ":stable", PTP + ":"},
		AdditionalImages:             []string{f.Extra},
	}
}

// Want are the images Spec resolves to, sorted.
func (f *Fixture) Want() []string {
	return Union([]string{f.Release, f.Index, f.Extra}, f.ReleaseImages, f.Heads[SRIOV+":stable"], f.Heads[PTP+":stable"])
}

// pushRelease pushes the release image: a base layer, a layer with a stale image-references
// and the last layer with the real one.
func (f *Fixture) pushRelease(t T) string {
	t.Helper()
	stale := imageReferences(t, []string{f.Registry.Ref("openshift-release-dev/removed", "latest")})
	current := imageReferences(t, f.ReleaseImages)
	img := Image(t, map[string]string{"io.openshift.release": "4.16.1"},
		Layer(t, Files{"usr/bin/cluster-version-operator": []byte("#!/bin/true\n")}),
		Layer(t, Files{pull.ImageReferencesPath: stale}),
		Layer(t, Files{pull.ImageReferencesPath: current, "release-manifests/release-metadata": []byte(`{"version":"4.16.1"}`)}),
	)
	return f.Registry.Push(t, "openshift-release-dev/ocp-release", "4.16.1-x86_64", img)
}

// pushIndex pushes an index image whose catalog holds the files.
func (f *Fixture) pushIndex(t T, files Files) string {
	t.Helper()
	img := Image(t, map[string]string{pull.ConfigsLabel: pull.DefaultConfigsDir},
		Layer(t, Files{"bin/opm": []byte("#!/bin/true\n")}),
		Layer(t, files),
	)
	f.Registry.Push(t, "redhat/redhat-operator-index", "v4.16", img)
	return f.Registry.Ref("redhat/redhat-operator-index", "v4.16")
}

// pushPackage pushes the bundle and operator images of every entry of the channels, records
// the images of each channel's head in f.Heads and returns the package's catalog.json: a
// stream of JSON documents.
func (f *Fixture) pushPackage(t T, pkg, defaultChannel, proxy string, channels []channel) []byte {
	t.Helper()
	docs := []any{map[string]string{"schema": pull.SchemaPackage, "name": pkg, "defaultChannel": defaultChannel}}
	for _, ch := range channels {
		entries := qualify(pkg, ch.entries)
		docs = append(docs, map[string]any{"schema": pull.SchemaChannel, "package": pkg, "name": ch.name, "entries": entries})
		for i, e := range entries {
			b := f.pushBundle(t, pkg, e.Name, proxy)
			docs = append(docs, struct {
				Schema string `json:"schema"`
				pull.Bundle
			}{Schema: pull.SchemaBundle, Bundle: b})
			if i == len(ch.entries)-1 {
				f.Heads[pkg+":"+ch.name] = b.Images()
			}
		}
	}
	return jsonStream(t, docs)
}

// qualify names the entries' bundles after the package, as catalogs do: "v4.16.1" of
// package p becomes "p.v4.16.1".
func qualify(pkg string, entries []pull.ChannelEntry) []pull.ChannelEntry {
	name := func(version string) string {
		if version == "" {
			return ""
		}
		return pkg + "." + version
	}
	out := make([]pull.ChannelEntry, len(entries))
	for i, e := range entries {
		out[i] = pull.ChannelEntry{Name: name(e.Name), Replaces: name(e.Replaces), SkipRange: e.SkipRange}
		for _, s := range e.Skips {
			out[i].Skips = append(out[i].Skips, name(s))
		}
	}
	return out
}

// pushBundle pushes the bundle image and operator image of one bundle of a package.
func (f *Fixture) pushBundle(t T, pkg, version, proxy string) pull.Bundle {
	t.Helper()
	tag := strings.TrimPrefix(version, pkg+".")
	bundle := f.Registry.PushRandom(t, "olm/"+pkg+"-bundle", tag, fixtureLayerSize, 1)
	operator := f.Registry.PushRandom(t, "olm/"+pkg, tag, fixtureLayerSize, 1)
	return pull.Bundle{
		Name:    version,
		Package: pkg,
		Image:   bundle,
		RelatedImages: []pull.RelatedImage{
			{Name: "bundle", Image: bundle},
			{Name: "operator", Image: operator},
			{Name: "kube-rbac-proxy", Image: proxy},
		},
	}
}

// imageReferences is an image-references file naming the images.
func imageReferences(t T, images []string) []byte {
	t.Helper()
	data, err := pull.FormatImageReferences(images)
	if err != nil {
		t.Fatalf("formatting image-references: %v", err)
	}
	return data
}

// jsonStream is the documents as JSON, one after the other.
func jsonStream(t T, docs []any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatalf("encoding a catalog document: %v", err)
		}
	}
	return buf.Bytes()
}
