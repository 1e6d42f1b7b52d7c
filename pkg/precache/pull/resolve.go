package pull

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/api/resource"

	ranv1alpha1 "github.com/cgu-operator/cgu-operator/api/v1alpha1"
)

// ConfigsLabel is the label of an index image naming the directory of its file-based
// catalog; DefaultConfigsDir is that directory when the label is missing.
const (
	ConfigsLabel      = "operators.operatorframework.io.index.configs.v1"
	DefaultConfigsDir = "/configs"
)

// Plan is what a precaching spec asks of a node.
type Plan struct {
	// Images are the images to pull: sorted, each once, without the excluded ones.
	Images []string
	// Excluded counts the images the exclude patterns dropped.
	Excluded int
	// SpaceRequired is the free space, in bytes, the image store must have before pulling;
	// zero when the spec asks for none.
	SpaceRequired int64
}

// operator is one "package:channel" entry of a spec; an empty channel means the package's
// default channel.
type operator struct {
	pkg     string
	channel string
}

func (o operator) String() string { return o.pkg + ":" + o.channel }

// Resolve lists the images the spec needs: the release image and the images its
// release-manifests/image-references names; for each "package:channel", the index images and
// the image and related images of the bundle at the channel's head; the additional images.
// It drops the images whose reference contains an exclude pattern and the duplicates.
//
// Its errors are unrecoverable when the spec cannot be carried out (a spec that does not
// parse, an image, package or channel that does not exist) and retryable when a registry
// could not be read (see IsRetryable).
func Resolve(ctx context.Context, spec ranv1alpha1.PrecachingSpec, src Source) (Plan, error) {
	space, err := parseSpaceRequired(spec.SpaceRequired)
	if err != nil {
		return Plan{}, err
	}
	operators, err := parseOperators(spec.OperatorsPackagesAndChannels)
	if err != nil {
		return Plan{}, err
	}
	var images []string
	if spec.PlatformImage != "" {
		release, err := releaseImages(ctx, src, spec.PlatformImage)
		if err != nil {
			return Plan{}, err
		}
		images = append(images, release...)
	}
	ops, err := operatorImages(ctx, src, spec.OperatorsIndexes, operators)
	if err != nil {
		return Plan{}, err
	}
	images = append(images, ops...)
	images = append(images, spec.AdditionalImages...)
	kept, excluded := exclude(unique(images), spec.ExcludePrecachePatterns)
	if err := validateReferences(kept); err != nil {
		return Plan{}, err
	}
	return Plan{Images: kept, Excluded: excluded, SpaceRequired: space}, nil
}

// parseSpaceRequired is spaceRequired in bytes, zero when it is empty: a whole number is
// gibibytes, as TALM's spec ConfigMap writes it ("35"); anything else a quantity ("30Gi").
func parseSpaceRequired(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/gibibyte {
			return 0, fmt.Errorf("spaceRequired %q GiB is out of range", s)
		}
		return n * gibibyte, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, fmt.Errorf("spaceRequired %q is not a quantity: %w", s, err)
	}
	if q.Sign() < 0 {
		return 0, fmt.Errorf("spaceRequired %q is negative", s)
	}
	return q.Value(), nil
}

// gibibyte is the unit of a spaceRequired that is a whole number.
const gibibyte = 1 << 30

// parseOperators parses the "package:channel" entries, each once.
func parseOperators(entries []string) ([]operator, error) {
	var ops []operator
	seen := map[operator]bool{}
	for _, e := range entries {
		pkg, channel, _ := strings.Cut(e, ":")
		op := operator{pkg: strings.TrimSpace(pkg), channel: strings.TrimSpace(channel)}
		if op.pkg == "" {
			return nil, fmt.Errorf("operatorsPackagesAndChannels entry %q names no package", e)
		}
		if !seen[op] {
			seen[op] = true
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// releaseImages are the release image and the images of its image-references.
func releaseImages(ctx context.Context, src Source, release string) ([]string, error) {
	img, err := src.Image(ctx, release)
	if err != nil {
		return nil, fmt.Errorf("reading the release image: %w", err)
	}
	data, err := ReadFile(img, ImageReferencesPath)
	if err != nil {
		return nil, fmt.Errorf("reading the release image %s: %w", release, err)
	}
	refs, err := ParseImageReferences(data)
	if err != nil {
		return nil, fmt.Errorf("release image %s: %w", release, err)
	}
	return append([]string{release}, refs...), nil
}

// operatorImages are the index images and the images of the channel head of each operator,
// looked up in the indexes in order.
func operatorImages(ctx context.Context, src Source, indexes []string, operators []operator) ([]string, error) {
	if len(operators) == 0 {
		return nil, nil
	}
	if len(indexes) == 0 {
		return nil, errors.New("operatorsPackagesAndChannels lists operators but operatorsIndexes lists no index image")
	}
	wanted := map[string]bool{}
	for _, op := range operators {
		wanted[op.pkg] = true
	}
	catalogs := make([]*Catalog, len(indexes))
	for i, index := range indexes {
		c, err := readCatalog(ctx, src, index, func(pkg string) bool { return wanted[pkg] })
		if err != nil {
			return nil, err
		}
		catalogs[i] = c
	}
	images := append([]string(nil), indexes...)
	for _, op := range operators {
		b, err := findHead(catalogs, indexes, op)
		if err != nil {
			return nil, err
		}
		images = append(images, b.Images()...)
	}
	return images, nil
}

// findHead is the head bundle of the operator's channel in the first index that has it.
func findHead(catalogs []*Catalog, indexes []string, op operator) (Bundle, error) {
	var firstErr error
	for i, c := range catalogs {
		if _, ok := c.Packages[op.pkg]; !ok {
			continue
		}
		b, err := c.Head(op.pkg, op.channel)
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("operator %s, index image %s: %w", op, indexes[i], err)
		}
	}
	if firstErr != nil {
		return Bundle{}, firstErr
	}
	return Bundle{}, fmt.Errorf("operator %s: no index image has the package %q (index images: %s)", op, op.pkg, strings.Join(indexes, ", "))
}

// readCatalog reads the packages keep accepts from the file-based catalog of an index image.
func readCatalog(ctx context.Context, src Source, index string, keep func(string) bool) (*Catalog, error) {
	img, err := src.Image(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("reading the index image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("reading the config of the index image %s: %w", index, err)
	}
	dir := DefaultConfigsDir
	if labelled := cfg.Config.Labels[ConfigsLabel]; labelled != "" {
		dir = labelled
	}
	c := NewCatalog()
	err = WalkFiles(img, dir, func(file string, r io.Reader) error {
		if !isCatalogFile(file) {
			return nil
		}
		if err := c.Add(r, keep); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the catalog of the index image %s: %w", index, err)
	}
	return c, nil
}

// isCatalogFile tells whether a file of the catalog directory holds catalog documents.
func isCatalogFile(file string) bool {
	switch path.Ext(file) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// unique is images without empty references and duplicates, in their order.
func unique(images []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, ref := range images {
		ref = strings.TrimSpace(ref)
		if ref != "" && !seen[ref] {
			seen[ref] = true
			out = append(out, ref)
		}
	}
	return out
}

// exclude drops the images whose reference contains a non-empty pattern and sorts the rest.
func exclude(images, patterns []string) (kept []string, excluded int) {
	for _, ref := range images {
		if matchesAny(ref, patterns) {
			excluded++
			continue
		}
		kept = append(kept, ref)
	}
	sort.Strings(kept)
	return kept, excluded
}

// matchesAny tells whether ref contains one of the non-empty patterns.
func matchesAny(ref string, patterns []string) bool {
	for _, p := range patterns {
		if p = strings.TrimSpace(p); p != "" && strings.Contains(ref, p) {
			return true
		}
	}
	return false
}

// validateReferences checks that every image is a reference an image can be pulled by.
func validateReferences(images []string) error {
	for _, ref := range images {
		if _, err := name.ParseReference(ref); err != nil {
			return fmt.Errorf("%q is not an image reference: %w", ref, err)
		}
	}
	return nil
}
