package pull

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ImageReferencesPath is where a release payload lists the images of its components.
const ImageReferencesPath = "release-manifests/image-references"

// imageStream is the part of an OpenShift ImageStream that a release's image-references
// file holds: one tag per component, each naming its image.
type imageStream struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Spec       struct {
		Tags []imageStreamTag `json:"tags"`
	} `json:"spec"`
}

// imageStreamTag is one component of a release: its name and where its image is.
type imageStreamTag struct {
	Name string `json:"name"`
	From struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"from"`
}

// dockerImage is the kind of a tag's source that names an image by reference.
const dockerImage = "DockerImage"

// ParseImageReferences returns the images a release's image-references file names: the
// from.name of each tag whose from.kind is DockerImage, in the file's order. The file must
// be an ImageStream naming at least one image.
func ParseImageReferences(data []byte) ([]string, error) {
	var is imageStream
	if err := json.Unmarshal(data, &is); err != nil {
		return nil, fmt.Errorf("decoding image-references: %w", err)
	}
	if is.Kind != "ImageStream" {
		return nil, fmt.Errorf("image-references is of kind %q, want ImageStream", is.Kind)
	}
	var refs []string
	for _, tag := range is.Spec.Tags {
		if tag.From.Kind != dockerImage {
			continue
		}
		if tag.From.Name == "" {
			return nil, fmt.Errorf("image-references: tag %q names no image", tag.Name)
		}
		refs = append(refs, tag.From.Name)
	}
	if len(refs) == 0 {
		return nil, errors.New("image-references names no image")
	}
	return refs, nil
}

// FormatImageReferences is an image-references file naming images, one tag per image named
// after its position: what ParseImageReferences reads back as images.
func FormatImageReferences(images []string) ([]byte, error) {
	is := imageStream{Kind: "ImageStream", APIVersion: "image.openshift.io/v1"}
	is.Spec.Tags = make([]imageStreamTag, len(images))
	for i, ref := range images {
		is.Spec.Tags[i].Name = fmt.Sprintf("component-%d", i)
		is.Spec.Tags[i].From.Kind = dockerImage
		is.Spec.Tags[i].From.Name = ref
	}
	data, err := json.MarshalIndent(is, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding image-references: %w", err)
	}
	return data, nil
}
