package pull

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The schemas of the file-based catalog documents that resolving reads; documents of other
// schemas are ignored.
const (
	SchemaPackage = "olm.package"
	SchemaChannel = "olm.channel"
	SchemaBundle  = "olm.bundle"
)

// Catalog is the part of a file-based catalog (an operator index image's /configs) that
// resolving reads: for each package, its default channel, the entries of its channels and
// the images of its bundles.
type Catalog struct {
	Packages map[string]*Package
}

// Package is an operator package of a catalog.
type Package struct {
	Name           string
	DefaultChannel string
	// Channels maps a channel's name to its entries.
	Channels map[string][]ChannelEntry
	// Bundles maps a bundle's name to the bundle.
	Bundles map[string]Bundle
}

// ChannelEntry is a bundle of a channel and the bundles it upgrades from.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
}

// Bundle is an operator version: its bundle image and the images it runs.
type Bundle struct {
	Name          string         `json:"name"`
	Package       string         `json:"package"`
	Image         string         `json:"image,omitempty"`
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
}

// RelatedImage is an image a bundle runs.
type RelatedImage struct {
	Name  string `json:"name,omitempty"`
	Image string `json:"image"`
}

// Images are the bundle's image and its related images, each once, in that order.
func (b Bundle) Images() []string {
	var images []string
	seen := map[string]bool{}
	add := func(ref string) {
		if ref != "" && !seen[ref] {
			seen[ref] = true
			images = append(images, ref)
		}
	}
	add(b.Image)
	for _, r := range b.RelatedImages {
		add(r.Image)
	}
	return images
}

// meta is one catalog document, with the fields of the three schemas resolving reads.
type meta struct {
	Schema         string         `json:"schema"`
	Name           string         `json:"name"`
	Package        string         `json:"package"`
	DefaultChannel string         `json:"defaultChannel"`
	Entries        []ChannelEntry `json:"entries"`
	Image          string         `json:"image"`
	RelatedImages  []RelatedImage `json:"relatedImages"`
}

// NewCatalog is an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{Packages: map[string]*Package{}}
}

// Add decodes the documents of one catalog file, a stream of JSON objects or of YAML
// documents, and adds those of the packages keep accepts (every package when keep is nil).
// A document of one of the three schemas without a name, or without a package for channels
// and bundles, is an error.
func (c *Catalog) Add(r io.Reader, keep func(pkg string) bool) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		var m meta
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("decoding a catalog document: %w", err)
		}
		if err := c.add(m, keep); err != nil {
			return err
		}
	}
}

// add adds one document.
func (c *Catalog) add(m meta, keep func(string) bool) error {
	pkgName := m.Package
	if m.Schema == SchemaPackage {
		pkgName = m.Name
	}
	if err := validate(m, pkgName); err != nil {
		return err
	}
	if pkgName == "" || (keep != nil && !keep(pkgName)) {
		return nil
	}
	p := c.pkg(pkgName)
	switch m.Schema {
	case SchemaPackage:
		p.DefaultChannel = m.DefaultChannel
	case SchemaChannel:
		p.Channels[m.Name] = append(p.Channels[m.Name], m.Entries...)
	case SchemaBundle:
		p.Bundles[m.Name] = Bundle{Name: m.Name, Package: pkgName, Image: m.Image, RelatedImages: m.RelatedImages}
	}
	return nil
}

// validate checks that a document of the schemas resolving reads names what it is about.
func validate(m meta, pkgName string) error {
	switch m.Schema {
	case SchemaPackage, SchemaChannel, SchemaBundle:
	default:
		return nil
	}
	if m.Name == "" {
		return fmt.Errorf("a %s document has no name", m.Schema)
	}
	if pkgName == "" {
		return fmt.Errorf("%s %q has no package", m.Schema, m.Name)
	}
	return nil
}

// pkg is the package named name, added when the catalog does not hold it yet.
func (c *Catalog) pkg(name string) *Package {
	p, ok := c.Packages[name]
	if !ok {
		p = &Package{Name: name, Channels: map[string][]ChannelEntry{}, Bundles: map[string]Bundle{}}
		c.Packages[name] = p
	}
	return p
}

// Head is the bundle at the head of a package's channel, the package's default channel when
// channel is empty: the one entry of the channel that no other entry replaces or skips.
func (c *Catalog) Head(pkgName, channel string) (Bundle, error) {
	p, ok := c.Packages[pkgName]
	if !ok {
		return Bundle{}, fmt.Errorf("the catalog has no package %q", pkgName)
	}
	if channel == "" {
		if p.DefaultChannel == "" {
			return Bundle{}, fmt.Errorf("package %q has no default channel", pkgName)
		}
		channel = p.DefaultChannel
	}
	entries, ok := p.Channels[channel]
	if !ok {
		return Bundle{}, fmt.Errorf("package %q has no channel %q (channels: %s)", pkgName, channel, strings.Join(p.channelNames(), ", "))
	}
	head, err := channelHead(entries)
	if err != nil {
		return Bundle{}, fmt.Errorf("channel %q of package %q: %w", channel, pkgName, err)
	}
	b, ok := p.Bundles[head]
	if !ok {
		return Bundle{}, fmt.Errorf("the head %q of channel %q of package %q is not a bundle of the catalog", head, channel, pkgName)
	}
	return b, nil
}

// channelNames are the names of the package's channels, sorted.
func (p *Package) channelNames() []string {
	names := make([]string, 0, len(p.Channels))
	for name := range p.Channels {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// channelHead is the name of the one entry that no entry replaces or skips.
func channelHead(entries []ChannelEntry) (string, error) {
	if len(entries) == 0 {
		return "", errors.New("the channel has no entries")
	}
	upgraded := map[string]bool{}
	for _, e := range entries {
		if e.Replaces != "" {
			upgraded[e.Replaces] = true
		}
		for _, s := range e.Skips {
			upgraded[s] = true
		}
	}
	var heads []string
	for _, e := range entries {
		if !upgraded[e.Name] {
			heads = append(heads, e.Name)
			upgraded[e.Name] = true // An entry listed twice is one head.
		}
	}
	switch len(heads) {
	case 0:
		return "", errors.New("the channel has no head: every entry is replaced or skipped by another")
	case 1:
		return heads[0], nil
	default:
		return "", fmt.Errorf("the channel has %d heads, want one: %s", len(heads), strings.Join(heads, ", "))
	}
}
