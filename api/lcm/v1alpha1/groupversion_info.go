// Package v1alpha1 holds the lcm.openshift.io/v1alpha1 API served by cgu-operator:
// ImageBasedGroupUpgrade, which takes a fleet of single-node OpenShift clusters through an
// image-based upgrade (the lifecycle agent's ImageBasedUpgrade on each spoke), one plan step
// after another.
//
// The API is field-compatible with TALM's ImageBasedGroupUpgrade: every field TALM accepts is
// accepted here with the same meaning, default and validation. Fields that cgu-operator adds
// are optional, and their zero value keeps TALM's behaviour.
//
// +kubebuilder:object:generate=true
// +groupName=lcm.openshift.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "lcm.openshift.io", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the kinds of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
