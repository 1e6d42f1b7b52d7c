// Command bundle writes the OLM bundle: it reads `kustomize build config/default` on stdin,
// the CSV base and the example samples, and writes <out>/manifests, <out>/metadata and the
// bundle image's Dockerfile. `make bundle` runs it; pkg/bundlegen does the work.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/cgu-operator/cgu-operator/pkg/bundlegen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		opts                    bundlegen.Options
		ver, channels, examples string
		base, out, dockerfile   string
	)
	flag.StringVar(&opts.Package, "package", "cgu-operator", "OLM package name")
	flag.StringVar(&ver, "version", "0.1.0", "the CSV's version")
	flag.StringVar(&opts.Image, "image", "", "the manager's image (empty: config/default's)")
	flag.StringVar(&opts.SpokeImage, "spoke-image", "", "the precache image")
	flag.StringVar(&channels, "channels", "stable", "comma-separated channels")
	flag.StringVar(&opts.DefaultChannel, "default-channel", "stable", "the default channel")
	flag.StringVar(&base, "base", "config/manifests/bases/cgu-operator.clusterserviceversion.yaml", "the CSV base")
	flag.StringVar(&examples, "examples", "", "space- or comma-separated sample files for alm-examples")
	flag.StringVar(&out, "out", "bundle", "the bundle directory")
	flag.StringVar(&dockerfile, "dockerfile", "bundle.Dockerfile", "the bundle image's Dockerfile")
	flag.Parse()

	v, err := semver.Parse(ver)
	if err != nil {
		return fmt.Errorf("--version: %w", err)
	}
	opts.Version = v
	opts.Channels = fields(channels)
	if opts.SpokeImage == "" {
		return errors.New("--spoke-image is required")
	}

	baseData, err := os.ReadFile(base)
	if err != nil {
		return err
	}
	config, err := decode(os.Stdin)
	if err != nil {
		return fmt.Errorf("reading the configuration on stdin: %w", err)
	}
	var exampleObjs []*unstructured.Unstructured
	for _, file := range fields(examples) {
		objs, err := decodeFile(file)
		if err != nil {
			return err
		}
		exampleObjs = append(exampleObjs, objs...)
	}

	b, err := bundlegen.Generate(baseData, config, exampleObjs, opts)
	if err != nil {
		return err
	}
	return write(b, out, dockerfile)
}

func write(b *bundlegen.Bundle, out, dockerfile string) error {
	manifests := filepath.Join(out, "manifests")
	if err := os.RemoveAll(manifests); err != nil {
		return err
	}
	if err := os.MkdirAll(manifests, 0o750); err != nil {
		return err
	}
	for name, data := range b.Manifests {
		if err := os.WriteFile(filepath.Join(manifests, name), data, 0o644); err != nil { //nolint:gosec // manifests are public
			return err
		}
	}
	annotations, err := bundlegen.AnnotationsYAML(b.Annotations)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "metadata"), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "metadata", "annotations.yaml"), annotations, 0o644); err != nil { //nolint:gosec // public metadata
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(dockerfile), out)
	if err != nil {
		return err
	}
	return os.WriteFile(dockerfile, bundlegen.Dockerfile(b.Annotations, filepath.ToSlash(rel)), 0o644) //nolint:gosec // public
}

func fields(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

func decodeFile(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	objs, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return objs, nil
}

// decode reads every object of a multi-document YAML stream, skipping empty documents.
func decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}
